// Tests of the byte codec between fuzzer input and scenarios (decode.h):
// the empty input is the simplest scenario, every input decodes to a valid
// scenario, encoding inverts decoding, small changes of the bytes are
// small changes of the scenario, the corpus files survive the trip, and
// the random schedule's tape replays.
#include "scenarios/decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "fuzz/scenario_gen_testing.h"
#include "scenarios/explore.h"
#include "scenarios/fault_fields.h"
#include "scenarios/realism.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "sim/core/prng.h"

#ifndef PRODSIM_SOURCE_DIR
#error "PRODSIM_SOURCE_DIR must name the source tree (scenarios/CMakeLists.txt sets it)"
#endif

namespace scenarios {

// GoogleTest prints a scenario as its file when an EXPECT_EQ fails.
void PrintTo(const Scenario& s, std::ostream* os) { *os << "\n" << PrintScenario(s); }

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

// The compiled-in base: the report's configuration (3 brokers, 3
// partitions, replication 3, 400 messages), on `profile` if not empty.
Scenario Base(const std::string& profile = "") {
  absl::StatusOr<Scenario> base = LoadBase("", profile);
  PRODSIM_ASSERT_MSG(base.ok(), "the compiled-in base must load");
  return *std::move(base);
}

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A string of these bytes (a literal would end at its first zero byte).
std::string Bytes(std::initializer_list<uint8_t> bytes) {
  std::string out;
  for (const uint8_t b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// Whether `decoded` is `value` as a field of range [lo, hi] can hold it:
// exactly, or, for a field of fewer bytes than the range needs (decode.h
// rounds durations to their field's resolution), within the resolution of
// a one-byte field, the coarsest there is.
bool Near(int64_t decoded, int64_t value, int64_t lo, int64_t hi) {
  const int64_t resolution = (hi - lo) / 256 + 1;
  return decoded >= value - resolution && decoded <= value + resolution;
}

// A fault's fields as internal::FaultFields walks them, and whether each
// lies within the range the walk gives it: the decoder's ranges, described
// once for explore and the codec, checked here without the byte codec.
class FieldRecorder {
 public:
  struct Field {
    int64_t value = 0;
    int64_t lo = 0, hi = 0;
    bool duration = false;  // may come back rounded
  };

  void Index(int32_t* v, int64_t n) { Int(v, 0, n - 1); }
  void Int(int32_t* v, int64_t lo, int64_t hi) { Note({*v, lo, hi, false}); }
  void Dur(Duration* v, Duration lo, Duration hi) {
    Note({v->nanos(), lo.nanos(), hi.nanos(), true});
  }
  void Choice(std::string* v, std::span<const std::string_view> options) {
    const auto it = std::find(options.begin(), options.end(), *v);
    Note({it - options.begin(), 0, static_cast<int64_t>(options.size()) - 1, false});
  }
  void Flag(bool* v) { Note({*v ? 1 : 0, 0, 1, false}); }
  // A value FaultFields reads without a range check of its own (a topic
  // name not in the cluster reads as the first topic).
  void OutOfRange() { in_range_ = false; }

  bool in_range() const { return in_range_; }
  const std::vector<Field>& fields() const { return fields_; }

 private:
  void Note(const Field& f) {
    in_range_ = in_range_ && f.lo <= f.value && f.value <= f.hi;
    fields_.push_back(f);
  }

  bool in_range_ = true;
  std::vector<Field> fields_;
};

FieldRecorder Record(const Scenario& s, const FaultSpec& f) {
  FieldRecorder r;
  FaultSpec copy = f;  // FaultFields writes what it walked back
  // A topic outside the cluster would be read as the first; it is out of
  // range, and the scenario format rejects it anyway.
  bool topic_known = f.topic.empty();
  for (const TopicSpec& t : s.cluster.topics) topic_known = topic_known || t.name == f.topic;
  // The wedge kinds are a choice of their own, read after everything else.
  if (internal::IsWedgeKind(f.kind)) {
    internal::OneOf(r, &copy.kind,
                    std::span<const fault_models::FaultKind>(internal::kWedgeFaultKinds));
  } else {
    internal::OneOf(r, &copy.kind, std::span<const fault_models::FaultKind>(internal::kFaultKinds));
  }
  internal::FaultFields(r, s.cluster, internal::HealBy(s.workload, kExploreHealBy),
                        EffectiveReadTimeout(s.producer), &copy);
  if (!topic_known) r.OutOfRange();
  return r;
}

// Whether the decoded fault has the fields of the original, each within
// its field's resolution; durations are skipped unless `durations`.
::testing::AssertionResult SameFields(const Scenario& decoded_scenario, const FaultSpec& decoded,
                                      const Scenario& original_scenario, const FaultSpec& original,
                                      bool durations = true) {
  const std::vector<FieldRecorder::Field> got = Record(decoded_scenario, decoded).fields();
  const std::vector<FieldRecorder::Field> want = Record(original_scenario, original).fields();
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << got.size() << " fields, not " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const FieldRecorder::Field& w = want[i];
    if (w.duration && !durations) continue;
    const bool same =
        w.duration ? Near(got[i].value, w.value, w.lo, w.hi) : got[i].value == w.value;
    if (!same) {
      return ::testing::AssertionFailure() << "field " << i << " is " << got[i].value << ", not "
                                           << w.value << " (range " << w.lo << ".." << w.hi << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// The empty input reads every field as zero: the smallest scenario.
TEST(DecodeTest, EmptyInputIsTheSimplestScenario) {
  const Scenario base = Base();
  const Scenario s = Decode(base, {});
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.schedule.policy, sim::Policy::kRandom);
  EXPECT_EQ(s.schedule.preempt_per_mille, 0);
  EXPECT_TRUE(s.schedule.tape.empty());
  EXPECT_EQ(s.cluster.brokers, 1);
  ASSERT_EQ(s.cluster.topics.size(), 1u);
  EXPECT_EQ(s.cluster.topics[0].name, base.cluster.topics[0].name);
  EXPECT_EQ(s.cluster.topics[0].partitions, 1);
  EXPECT_EQ(s.cluster.topics[0].replication_factor, 1);
  EXPECT_EQ(s.cluster.min_insync_replicas, 1);
  EXPECT_EQ(s.network.latency, base.network.latency);
  EXPECT_EQ(s.workload.messages, 1);
  EXPECT_EQ(s.workload.keys, 1);
  EXPECT_EQ(s.workload.burst, 1);
  EXPECT_TRUE(s.faults.empty());
  EXPECT_TRUE(s.buggify.sites.empty());
  EXPECT_FALSE(s.expect.has_value());
  // What the bytes do not choose is the base's.
  EXPECT_EQ(s.producer, base.producer);
  EXPECT_EQ(s.limits, base.limits);
  EXPECT_EQ(s.workload.close_at, base.workload.close_at);
}

// Every input decodes to a valid scenario: it prints to a file that parses
// back to it, and the runner builds and runs its world (a harness error
// would be a decoder bug, as the scenario fuzzer treats it).
RC_GTEST_PROP(DecodeProperty, DecodedScenariosAreValidAndRunnable, ()) {
  const std::string profile = *rc::gen::element<std::string>("sarama-1.42.1", "sarama-main");
  const Scenario s = *GenScenario(Base(profile), DecodeOptions{.max_messages = 16});
  absl::StatusOr<Scenario> back = ParseScenario(PrintScenario(s), "decoded.toml");
  if (!back.ok()) {
    RC_FAIL(absl::StrCat("the printed scenario does not parse: ", back.status().ToString()));
  }
  RC_ASSERT(*back == s);
  const RunOutput out = RunScenario(s);
  if (out.verdict == Verdict::kHarnessError) {
    RC_FAIL(absl::StrCat("harness error: ", out.harness_error));
  }
}

// Encoding inverts decoding: the bytes Encode writes for a decoded scenario
// decode to it again, with and without faults.
RC_GTEST_PROP(DecodeProperty, EncodeInvertsDecode, ()) {
  const Scenario base = Base();
  const std::vector<uint8_t> bytes = *GenScenarioBytes();
  for (const DecodeOptions& options : {DecodeOptions{}, DecodeOptions{.max_faults = 0}}) {
    const Scenario s = Decode(base, bytes, options);
    const std::string encoded = Encode(base, s, options);
    const Scenario again = Decode(base, AsBytes(encoded), options);
    // Every field first, then the description (decode.h promises both),
    // so that a failure says which.
    Scenario fields = again;
    fields.description = s.description;
    RC_ASSERT(fields == s);
    RC_ASSERT(again.description == s.description);
  }
}

// Scenarios explore generates lie within the decoder's ranges (both
// describe faults with internal::FaultFields), so encoding keeps their
// faults: the count, each kind and broker, and every field but the
// durations, which come back rounded.
RC_GTEST_PROP(DecodeProperty, ExploredScenariosKeepTheirFaults, (uint64_t seed)) {
  const Scenario base = Base();
  const Scenario g = Generate(base, seed);
  const DecodeOptions options{.max_messages = base.workload.messages};
  const Scenario s = Decode(base, AsBytes(Encode(base, g, options)), options);
  RC_ASSERT(s.schedule.policy == g.schedule.policy);
  RC_ASSERT(s.cluster == g.cluster);
  RC_ASSERT(s.buggify == g.buggify);
  RC_ASSERT(s.faults.size() == g.faults.size());
  // Durations come back rounded, so two faults close in time may swap
  // places (both lists are in time order): the faults are compared as a
  // multiset of kinds and exact fields. Same-kind pairs are first checked
  // in place, so that a failure names the field that differs.
  auto exact = [](const Scenario& sc, const FaultSpec& f) {
    std::vector<int64_t> key{static_cast<int64_t>(f.kind)};
    const FieldRecorder recorded = Record(sc, f);  // fields() refers into it
    for (const FieldRecorder::Field& field : recorded.fields()) {
      if (!field.duration) key.push_back(field.value);
    }
    return key;
  };
  std::vector<std::vector<int64_t>> got, want;
  for (size_t i = 0; i < g.faults.size(); ++i) {
    if (s.faults[i].kind == g.faults[i].kind) {
      const ::testing::AssertionResult same =
          SameFields(s, s.faults[i], g, g.faults[i], /*durations=*/false);
      if (!same) {
        RC_FAIL(absl::StrCat("fault ", i, " (",
                             std::string(fault_models::FaultKindName(g.faults[i].kind)),
                             "): ", same.message()));
      }
    }
    got.push_back(exact(s, s.faults[i]));
    want.push_back(exact(g, g.faults[i]));
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  RC_ASSERT(got == want);
}

// Appending bytes to an input that holds every field only lengthens the
// random schedule's tape: the rest of the scenario stays as it was.
RC_GTEST_PROP(DecodeProperty, AppendedBytesOnlyExtendTheTape, ()) {
  const Scenario base = Base();
  const Scenario s = Decode(base, *GenScenarioBytes());
  // The go policy reads its tape as random does.
  RC_PRE(s.schedule.policy == sim::Policy::kRandom || s.schedule.policy == sim::Policy::kGo);
  const std::string full = Encode(base, s);  // every field, then the tape
  const auto extra = *rc::gen::nonEmpty(rc::gen::arbitrary<std::vector<uint8_t>>());
  std::string longer = full;
  longer.append(extra.begin(), extra.end());
  const Scenario decoded = Decode(base, AsBytes(longer));
  Scenario expected = s;
  expected.schedule.tape.append(extra.begin(), extra.end());
  // The description only counts the bytes.
  expected.description = decoded.description;
  RC_ASSERT(decoded == expected);
}

// A scenario with one fault, its input, and where in the input the
// fault's `at` lies.
struct OneFault {
  Scenario base;
  std::string bytes;
  size_t at_begin = 0;  // [at_begin, at_end): the bytes of `at`
  size_t at_end = 0;
};

OneFault OneFaultInput() {
  OneFault c;
  c.base = Base();
  Scenario s = Decode(c.base, {});
  s.seed = 7;
  s.cluster.brokers = 3;
  s.cluster.topics[0] = TopicSpec{"t", 3, 3};
  s.cluster.min_insync_replicas = 2;
  s.workload.messages = 16;
  s.workload.keys = 4;
  FaultSpec f;
  f.kind = fault_models::FaultKind::kLoseResponse;  // two fields, api and count, follow `at`
  f.broker = 1;
  f.count = 2;
  const Duration heal_by = internal::HealBy(s.workload, kExploreHealBy);
  const Duration at_min = Duration::Nanos(heal_by.nanos() / 100);
  const Duration at_max = Duration::Nanos(heal_by.nanos() / 4 * 3);
  f.at = at_min + (at_max - at_min) / 3;
  s.faults = {f};
  s.schedule.tape = Bytes({1, 2, 3});
  c.bytes = Encode(c.base, s);
  // The bytes that differ between the encodings of several values of
  // `at`, and nothing else, are the field's (found without reading the
  // layout from the decoder: it is what the tests below check).
  std::vector<std::string> encodings;
  for (int k = 0; k < 8; ++k) {
    Scenario other = s;
    other.faults[0].at = at_min + (at_max - at_min) * k / 9;
    encodings.push_back(Encode(c.base, other));
    PRODSIM_ASSERT(encodings.back().size() == c.bytes.size());
  }
  c.at_begin = c.bytes.size();
  for (size_t i = 0; i < c.bytes.size(); ++i) {
    for (const std::string& e : encodings) {
      if (e[i] == encodings[0][i]) continue;
      c.at_begin = std::min(c.at_begin, i);
      c.at_end = i + 1;
    }
  }
  PRODSIM_ASSERT(c.at_begin < c.at_end);
  return c;
}

// The input of OneFaultInput decodes to what it was encoded from, and its
// `at` takes one of the codec's widths.
// Over 3000 random inputs, the decoder gives no mock fault unless asked,
// gives only inject_errors Kafka can give in the decoded scenario, and
// draws the producer's settings: the base's for about half (always for a
// short input), else a spread of the settings people use, each one that
// Sarama's Config.Validate accepts.
TEST(DecodeRealismTest, NoMockFaultsUnlessAskedAndProducerSettingsDrawn) {
  const Scenario base = Base();
  sim::Prng prng(2026);
  int mocks = 0, varied = 0, idempotent_off = 0, open5 = 0, frequency = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bytes(static_cast<size_t>(prng.UniformInt(20, 120)), '\0');
    for (char& c : bytes) c = static_cast<char>(prng.Below(256));
    const Scenario s = Decode(base, AsBytes(bytes));
    for (const FaultSpec& f : s.faults) {
      ASSERT_FALSE(fault_models::IsMockKind(f.kind))
          << i << ": " << fault_models::FaultKindName(f.kind);
    }
    ASSERT_EQ(FirstUnrealisticFault(s), std::nullopt) << i;
    const absl::StatusOr<sarama::Config> c = ProducerConfigOf(s.producer);
    ASSERT_TRUE(c.ok()) << i << ": " << c.status();
    if (!(s.producer == base.producer)) {
      ++varied;
      idempotent_off += c->producer.idempotent ? 0 : 1;
      open5 += c->net.max_open_requests == 5 ? 1 : 0;
      frequency += c->producer.flush.frequency.nanos() > 0 ? 1 : 0;
    }
    const Scenario m = Decode(base, AsBytes(bytes), DecodeOptions{.mock_faults = true});
    for (const FaultSpec& f : m.faults) mocks += fault_models::IsMockKind(f.kind) ? 1 : 0;
  }
  std::printf(
      "decoded 3000: producer varied in %d (idempotent off %d, MaxOpenRequests 5 %d, "
      "Flush.Frequency set %d); mock faults with the option: %d\n",
      varied, idempotent_off, open5, frequency, mocks);
  EXPECT_GT(varied, 1000);
  EXPECT_LT(varied, 2000);
  EXPECT_GT(idempotent_off, 300);
  EXPECT_GT(open5, 100);
  EXPECT_GT(frequency, 300);
  EXPECT_GT(mocks, 300);
}

// The wedge faults come after every other field: without them (the codec
// as it was before they existed) an input decodes to what it decodes to
// with them, but for the wedge faults and the bytes they took from the
// schedule's tape.
TEST(DecodeStabilityTest, WedgeFaultsReadLastShiftNoOtherField) {
  const Scenario base = Base();
  sim::Prng prng(2027);
  int wedged = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(static_cast<size_t>(prng.UniformInt(20, 120)), '\0');
    for (char& c : bytes) c = static_cast<char>(prng.Below(256));
    Scenario with = Decode(base, AsBytes(bytes), DecodeOptions{.late_draws = false});
    const Scenario without =
        Decode(base, AsBytes(bytes), DecodeOptions{.wedge_faults = false, .late_draws = false});
    const size_t before = with.faults.size();
    std::erase_if(with.faults, [](const FaultSpec& f) { return internal::IsWedgeKind(f.kind); });
    wedged += with.faults.size() < before ? 1 : 0;
    with.schedule.tape = without.schedule.tape;
    with.description = without.description;
    ASSERT_EQ(with, without) << i;
  }
  std::printf("decoded 2000: %d with wedge faults\n", wedged);
  EXPECT_GT(wedged, 200);
}

// The late step (a log directory failure, the application's drain) comes
// after the wedge faults: without it an input decodes as before it existed,
// but for what it takes from the tape; an input that ends before it has no
// failure and drains promptly.
TEST(DecodeStabilityTest, LateFieldsReadLastShiftNoOtherField) {
  const Scenario base = Base();
  sim::Prng prng(2028);
  int failures = 0, drained = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(static_cast<size_t>(prng.UniformInt(20, 160)), '\0');
    for (char& c : bytes) c = static_cast<char>(prng.Below(256));
    Scenario with = Decode(base, AsBytes(bytes));
    const Scenario without = Decode(base, AsBytes(bytes), DecodeOptions{.late_draws = false});
    const size_t before = with.faults.size();
    std::erase_if(with.faults, [](const FaultSpec& f) {
      return f.kind == fault_models::FaultKind::kLogDirFailure;
    });
    failures += with.faults.size() < before ? 1 : 0;
    drained += with.workload.drain != Drain::kPrompt ? 1 : 0;
    with.workload.drain = without.workload.drain;
    with.workload.drain_delay = without.workload.drain_delay;
    with.schedule.tape = without.schedule.tape;
    with.description = without.description;
    ASSERT_EQ(with, without) << i;
  }
  std::printf("decoded 2000: %d with a log directory failure, %d not draining promptly\n", failures,
              drained);
  EXPECT_GT(failures, 100);
  EXPECT_GT(drained, 200);
  // An empty input: no failure, prompt.
  const Scenario empty = Decode(base, AsBytes(std::string()));
  EXPECT_EQ(empty.workload.drain, Drain::kPrompt);
  EXPECT_TRUE(empty.faults.empty());
}

TEST(DecodeStabilityTest, OneFaultInputIsWellFormed) {
  const OneFault c = OneFaultInput();
  const Scenario s = Decode(c.base, AsBytes(c.bytes));
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].kind, fault_models::FaultKind::kLoseResponse);
  EXPECT_EQ(s.faults[0].broker, 1);
  EXPECT_EQ(s.faults[0].count, 2);
  EXPECT_EQ(s.schedule.tape, Bytes({1, 2, 3}));
  const size_t width = c.at_end - c.at_begin;
  EXPECT_TRUE(width == 1 || width == 2 || width == 4 || width == 8) << width;
}

// Changing one byte of the region that holds a fault's `at` changes that
// field only; the coarsest byte moves it monotonically.
TEST(DecodeStabilityTest, ChangingAByteOfAtChangesOnlyAt) {
  const OneFault c = OneFaultInput();
  const Scenario original = Decode(c.base, AsBytes(c.bytes));
  ASSERT_EQ(original.faults.size(), 1u);
  for (size_t pos = c.at_begin; pos < c.at_end; ++pos) {
    for (const int value : {0x00, 0x01, 0x7f, 0xfe, 0xff}) {
      SCOPED_TRACE(absl::StrCat("byte ", pos, " = ", value));
      std::string changed = c.bytes;
      changed[pos] = static_cast<char>(value);
      const Scenario s = Decode(c.base, AsBytes(changed));
      ASSERT_EQ(s.faults.size(), 1u);
      Scenario expected = original;
      expected.faults[0].at = s.faults[0].at;
      EXPECT_EQ(s, expected);
    }
  }
  // The first byte is the coarsest: lowering it moves `at` earlier, raising
  // it later (the original byte is neither 0 nor 0xff).
  std::string coarse_low = c.bytes, coarse_high = c.bytes;
  coarse_low[c.at_begin] = 0;
  coarse_high[c.at_begin] = static_cast<char>(0xff);
  EXPECT_LT(Decode(c.base, AsBytes(coarse_low)).faults[0].at, original.faults[0].at);
  EXPECT_GT(Decode(c.base, AsBytes(coarse_high)).faults[0].at, original.faults[0].at);
}

std::multiset<std::pair<fault_models::FaultKind, int32_t>> KindsAndBrokers(
    const std::vector<FaultSpec>& faults) {
  std::multiset<std::pair<fault_models::FaultKind, int32_t>> out;
  for (const FaultSpec& f : faults) out.emplace(f.kind, f.broker);
  return out;
}

std::vector<std::filesystem::path> CorpusFiles() {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"scenarios/known", "scenarios/corpus"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(PRODSIM_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".toml") continue;
      // The codec holds the kinds the generators draw; a file with a kind
      // written by hand only (fault_models::DrawStep::kByHand) has no bytes.
      absl::StatusOr<Scenario> s = LoadScenario(entry.path().string());
      const bool by_hand =
          s.ok() && std::any_of(s->faults.begin(), s->faults.end(), [](const FaultSpec& f) {
            return fault_models::Info(f.kind).step == fault_models::DrawStep::kByHand;
          });
      if (!by_hand) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every known finding and corpus file survives encoding, with itself as the
// base (so only its faults can fall outside the decoder's ranges): the same
// faults when they lie within those ranges, else the same count, kinds and
// brokers, and everything else as it was.
TEST(DecodeCorpusTest, FilesRoundTripWithThemselvesAsBase) {
  const std::vector<std::filesystem::path> files = CorpusFiles();
  ASSERT_GE(files.size(), 7u);
  for (const std::filesystem::path& path : files) {
    SCOPED_TRACE(path.string());
    absl::StatusOr<Scenario> file = LoadScenario(path.string());
    ASSERT_TRUE(file.ok()) << file.status();
    const DecodeOptions options{.max_messages = file->workload.messages};
    const Scenario s = Decode(*file, AsBytes(Encode(*file, *file, options)), options);
    if (file->faults.size() > static_cast<size_t>(options.max_faults)) {
      EXPECT_EQ(s.faults.size(), static_cast<size_t>(options.max_faults));
      continue;  // which faults are kept is not specified
    }
    ASSERT_EQ(s.faults.size(), file->faults.size());
    EXPECT_EQ(KindsAndBrokers(s.faults), KindsAndBrokers(file->faults));

    std::vector<FaultSpec> faults = file->faults;
    std::stable_sort(faults.begin(), faults.end(),
                     [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
    bool all_in_range = true;
    for (const FaultSpec& f : faults) all_in_range = all_in_range && Record(*file, f).in_range();
    if (all_in_range) {
      // Decoded faults come sorted by `at`.
      for (size_t i = 0; i < faults.size(); ++i) {
        SCOPED_TRACE(absl::StrCat("fault ", i, " (",
                                  std::string(fault_models::FaultKindName(faults[i].kind)), ")"));
        EXPECT_TRUE(SameFields(s, s.faults[i], *file, faults[i]));
      }
    }

    // The rest is the file's, but for what the codec holds coarsely: the
    // seed's low bits (a small seed whole), the interval, whose range
    // reaches the base's, and the drain's delay.
    if (file->seed < 256) {
      EXPECT_EQ(s.seed, file->seed);
    }
    EXPECT_LE(s.seed, file->seed);
    const Duration interval = file->workload.interval;
    EXPECT_TRUE(Near(s.workload.interval.nanos(), interval.nanos(), interval.nanos() / 64,
                     interval.nanos()))
        << s.workload.interval.ToString() << " is not " << interval.ToString();
    // The drain's delay is held as coarsely, over its drain's range
    // (internal::LateFields).
    const Duration drain_delay = file->workload.drain_delay;
    const bool slow = file->workload.drain == Drain::kSlow;
    const Duration lo = slow ? Duration::Micros(100) : Duration::Millis(1);
    const Duration hi = slow ? Duration::Millis(20) : Duration::Seconds(5);
    EXPECT_TRUE(Near(s.workload.drain_delay.nanos(), drain_delay.nanos(), lo.nanos(), hi.nanos()))
        << s.workload.drain_delay.ToString() << " is not " << drain_delay.ToString();
    Scenario expected = *file;
    expected.seed = s.seed;
    expected.workload.interval = s.workload.interval;
    expected.workload.drain_delay = s.workload.drain_delay;
    expected.description = s.description;
    expected.expect.reset();
    expected.faults = s.faults;
    EXPECT_EQ(s, expected);
  }
}

// The same files through the default base: the cluster and workload are
// clamped to the report's configuration, the faults keep their number and
// kinds, and their brokers where the cluster keeps them.
TEST(DecodeCorpusTest, FilesKeepTheirFaultKindsOnTheDefaultBase) {
  const Scenario base = Base();
  const DecodeOptions options;
  for (const std::filesystem::path& path : CorpusFiles()) {
    SCOPED_TRACE(path.string());
    absl::StatusOr<Scenario> file = LoadScenario(path.string());
    ASSERT_TRUE(file.ok()) << file.status();
    const Scenario s = Decode(base, AsBytes(Encode(base, *file, options)), options);
    EXPECT_EQ(s.cluster.brokers, std::min(file->cluster.brokers, base.cluster.brokers));
    if (file->faults.size() > static_cast<size_t>(options.max_faults)) {
      EXPECT_EQ(s.faults.size(), static_cast<size_t>(options.max_faults));
      continue;
    }
    ASSERT_EQ(s.faults.size(), file->faults.size());
    if (file->cluster.brokers <= base.cluster.brokers) {
      EXPECT_EQ(KindsAndBrokers(s.faults), KindsAndBrokers(file->faults));
    } else {
      std::multiset<fault_models::FaultKind> kinds, file_kinds;
      for (const FaultSpec& f : s.faults) kinds.insert(f.kind);
      for (const FaultSpec& f : file->faults) file_kinds.insert(f.kind);
      EXPECT_EQ(kinds, file_kinds);
    }
  }
}

// A short random-policy scenario with a schedule tape.
Scenario WithTape(std::string tape) {
  Scenario s = Base();
  s.workload.messages = 24;
  s.schedule.policy = sim::Policy::kRandom;
  s.schedule.tape = std::move(tape);
  return s;
}

// A tape is part of the scenario: the same tape replays the same run.
TEST(ScheduleTapeTest, SameTapeSameDigest) {
  const Scenario s = WithTape(Bytes({0x00, 0x10, 0xff, 0x7f, 0x33, 0x01, 0x02, 0xfe, 0x80, 0x00}));
  ASSERT_EQ(s.schedule.tape.size(), 10u);
  const RunOutput first = RunScenario(s);
  ASSERT_EQ(first.verdict, Verdict::kPass) << first.failing_check;
  const RunOutput second = RunScenario(s, {.record_trace = true});
  EXPECT_EQ(first.record.run.digest, second.record.run.digest);
}

// The tape decides the first scheduling decisions: some two tapes give
// different runs (if none did, the scheduler would ignore it).
TEST(ScheduleTapeTest, TapesChangeTheRun) {
  std::set<uint64_t> digests;
  for (int i = 0; i < 8; ++i) {
    std::string tape;
    for (int k = 0; k < 64; ++k) {
      tape.push_back(static_cast<char>((i * 37 + k * (i + 1) * 11) & 0xff));
    }
    const RunOutput out = RunScenario(WithTape(tape));
    ASSERT_EQ(out.verdict, Verdict::kPass) << out.failing_check;
    digests.insert(out.record.run.digest);
  }
  EXPECT_GE(digests.size(), 2u);
}

// Only the random policy reads a tape; a tape under another policy is a
// mistake the parser names with the file, line and column of the tape.
TEST(ScheduleTapeTest, TapeWithPctIsAParseError) {
  std::string text = PrintScenario(WithTape(Bytes({0x07, 0xff, 0x3a})));
  const std::string random_line = "policy = \"random\"";
  const size_t policy = text.find(random_line);
  ASSERT_NE(policy, std::string::npos);
  text.replace(policy, random_line.size(), "policy = \"pct\"");
  const size_t tape = text.find("tape = \"07ff3a\"");
  ASSERT_NE(tape, std::string::npos);
  const int64_t tape_line =
      std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(tape), '\n') + 1;

  const absl::StatusOr<Scenario> parsed = ParseScenario(text, "tape.toml");
  ASSERT_FALSE(parsed.ok());
  const std::string message(parsed.status().message());
  EXPECT_THAT(message, StartsWith(absl::StrCat("tape.toml:", tape_line, ":")));
  EXPECT_THAT(message, MatchesRegex("tape\\.toml:[0-9]+:[0-9]+: .*"));
  EXPECT_THAT(message, HasSubstr("tape"));
  EXPECT_THAT(message, HasSubstr("pct"));
}

}  // namespace
}  // namespace scenarios
