#include "scenarios/decode.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "producer/profile.h"
#include "scenarios/builtin.h"
#include "scenarios/draw_ranges.h"
#include "scenarios/explore.h"
#include "scenarios/fault_fields.h"
#include "scenarios/realism.h"
#include "scenarios/schema.h"

namespace scenarios {
namespace {

inline constexpr sim::Policy kPolicies[] = {sim::Policy::kRandom, sim::Policy::kPct,
                                            sim::Policy::kFifo, sim::Policy::kGo};
inline constexpr std::string_view kLatencies[] = {"base", "uniform"};

// The byte codec: one walk over the fields serves both directions. Decoding
// reads each field from the input (zero past its end); encoding writes the
// field's current value, clamped to its range, and keeps the clamped value,
// so that later fields see what decoding will see.
class ByteIO {
 public:
  explicit ByteIO(std::span<const uint8_t> in) : in_(in) {}
  ByteIO() : encoding_(true) {}

  bool encoding() const { return encoding_; }
  const std::string& out() const { return out_; }
  // Decoding: the bytes no field read.
  std::span<const uint8_t> rest() const { return in_.subspan(pos_); }

  // A value in [lo, hi] in `width` bytes (0: the fewest of 1, 2, 4 or 8
  // that hold every value; none if lo == hi), mapped monotonically: raw r
  // of w bytes is lo + floor(r * n / 2^(8w)) for n = hi - lo + 1 values. A
  // width too small for the range gives evenly spaced values.
  void Int64(int64_t* v, int64_t lo, int64_t hi, int width = 0) {
    PRODSIM_ASSERT(lo <= hi);
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (range == 0) {
      *v = lo;
      return;
    }
    if (width == 0) {
      width = 8;
      for (const int w : {1, 2, 4}) {
        if (range < (uint64_t{1} << (8 * w))) {
          width = w;
          break;
        }
      }
    }
    const unsigned __int128 n = static_cast<unsigned __int128>(range) + 1;
    const int bits = 8 * width;
    if (encoding_) {
      *v = std::clamp(*v, lo, hi);
      const unsigned __int128 x = static_cast<uint64_t>(*v) - static_cast<uint64_t>(lo);
      // The smallest raw that maps to x or above, ceil(x * 2^bits / n), for
      // a value decoding gave exactly x; for a coarse field (n > 2^bits)
      // the top values round to the largest raw.
      const unsigned __int128 top = (static_cast<unsigned __int128>(1) << bits) - 1;
      const unsigned __int128 raw = std::min(((x << bits) + n - 1) / n, top);
      for (int i = width - 1; i >= 0; --i)
        out_.push_back(static_cast<char>((raw >> (8 * i)) & 0xff));
      *v = static_cast<int64_t>(static_cast<uint64_t>(lo) +
                                static_cast<uint64_t>((raw * n) >> bits));
      return;
    }
    unsigned __int128 raw = 0;
    for (int i = 0; i < width; ++i) raw = (raw << 8) | Byte();
    *v = static_cast<int64_t>(static_cast<uint64_t>(lo) + static_cast<uint64_t>((raw * n) >> bits));
  }

  // The IO of internal::FaultFields.
  void Int(int32_t* v, int64_t lo, int64_t hi, int width = 0) {
    int64_t x = *v;
    Int64(&x, lo, hi, width);
    *v = static_cast<int32_t>(x);
  }
  void Index(int32_t* v, int64_t n) { Int(v, 0, n - 1); }
  // The field `key` of `section`, an integer or a duration, in the range
  // and width the schema's codec gives it for `base`.
  template <typename T>
  void SchemaField(const schema::Section& section, std::string_view key, const Scenario& base,
                   const DecodeOptions& options, T* value) {
    const schema::Field* f = schema::Find(section, key);
    PRODSIM_ASSERT_MSG(f != nullptr && f->codec != nullptr, "a field the codec carries");
    const schema::CodecRange r = f->codec(base, {.max_messages = options.max_messages});
    schema::Value v = f->get(value);
    if (f->type == schema::Type::kInt) {
      int64_t x = std::get<int64_t>(v);
      Int64(&x, r.lo, r.hi, r.width);
      f->set(value, x);
    } else {
      PRODSIM_ASSERT(f->type == schema::Type::kDuration);
      int64_t x = std::get<Duration>(v).nanos();
      Int64(&x, r.lo, r.hi, r.width);
      f->set(value, Duration::Nanos(x));
    }
  }
  // Durations take two bytes unless told: 1/65536 of the range is fine
  // enough (under 100 us for a fault's time), and short inputs matter:
  // libFuzzer grows its length limit slowly from an empty corpus.
  void Dur(Duration* v, Duration lo, Duration hi, int width = 2) {
    int64_t x = v->nanos();
    Int64(&x, lo.nanos(), hi.nanos(), width);
    *v = Duration::Nanos(x);
  }
  void Choice(std::string* v, std::span<const std::string_view> options) {
    int32_t i = 0;
    for (size_t k = 0; k < options.size(); ++k) {
      if (options[k] == *v) i = static_cast<int32_t>(k);
    }
    Index(&i, static_cast<int64_t>(options.size()));
    *v = std::string(options[static_cast<size_t>(i)]);
  }
  // One byte: 0x80 and above is true (encoding writes 0xff or 0).
  void Flag(bool* v) {
    int32_t b = *v ? 255 : 0;
    Int(&b, 0, 255);
    *v = b >= 128;
  }

 private:
  uint8_t Byte() {
    if (pos_ == in_.size()) return 0;
    return in_[pos_++];
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool encoding_ = false;
  std::string out_;
};

// The fields of a scenario in codec order (decode.h), read into or
// written from `s`, which starts as the scenario to encode or as the base.
// What decides most comes first (the workload, the cluster, the faults),
// so that the short inputs libFuzzer starts with already hold a fault.
void Fields(ByteIO& io, const Scenario& base, const DecodeOptions& options, Scenario* s) {
  // The workload, no bigger than the base's.
  WorkloadSpec& w = s->workload;
  const schema::Section& ws = schema::WorkloadSection();
  io.SchemaField(ws, "messages", base, options, &w);
  io.SchemaField(ws, "keys", base, options, &w);
  io.SchemaField(ws, "burst", base, options, &w);
  io.SchemaField(ws, "interval", base, options, &w);

  // The cluster, no bigger than the base's; its topics by position.
  ClusterSpec& c = s->cluster;
  const ClusterSpec& bc = base.cluster;
  io.SchemaField(schema::ClusterSection(), "brokers", base, options, &c);
  std::vector<TopicSpec> topics = bc.topics;
  int32_t min_rf = bc.brokers;
  for (size_t i = 0; i < topics.size(); ++i) {
    TopicSpec& t = topics[i];
    if (io.encoding() && i < c.topics.size()) {
      t.partitions = c.topics[i].partitions;
      t.replication_factor = c.topics[i].replication_factor;
    }
    io.Int(&t.partitions, 1, bc.topics[i].partitions);
    io.Int(&t.replication_factor, 1, std::min(bc.topics[i].replication_factor, c.brokers));
    min_rf = std::min(min_rf, t.replication_factor);
  }
  c.topics = std::move(topics);
  io.Int(&c.min_insync_replicas, 1, std::min(bc.min_insync_replicas, min_rf));

  // The faults: a count, then each one's kind and fields. Encoding: the
  // wedge faults go last, on their own (decoding starts with none).
  std::vector<FaultSpec> others, wedges, late;
  for (FaultSpec& f : s->faults) {
    if (options.late_draws && internal::IsLateKind(f.kind)) {
      late.push_back(std::move(f));
      continue;
    }
    const bool wedge = options.wedge_faults && internal::IsWedgeKind(f.kind);
    (wedge ? wedges : others).push_back(std::move(f));
  }
  int32_t count = static_cast<int32_t>(std::min<size_t>(others.size(), INT32_MAX));
  io.Int(&count, 0, std::max(0, options.max_faults));
  std::vector<FaultSpec> faults;
  const Duration heal_by = internal::HealBy(w, kExploreHealBy);
  for (int32_t i = 0; i < count; ++i) {
    // Encoding starts from the fault to write (fields the codec does not
    // carry are written by no one); decoding from a default fault.
    FaultSpec f = io.encoding() ? others[static_cast<size_t>(i)] : FaultSpec{};
    internal::OneOf(io, &f.kind, internal::GeneratedFaultKinds(options.mock_faults));
    internal::FaultFields(io, c, heal_by, EffectiveReadTimeout(base.producer), &f);
    faults.push_back(std::move(f));
  }
  std::stable_sort(faults.begin(), faults.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
  s->faults = std::move(faults);

  // What shapes the run less: the seed (the schedule after its tape, the
  // latencies, buggify's draws), the policy, the latency, buggify.
  int64_t seed = static_cast<int64_t>(s->seed & 0xffffULL);
  io.Int64(&seed, 0, 0xffff);
  s->seed = static_cast<uint64_t>(seed);

  ScheduleSpec& sc = s->schedule;
  internal::OneOf(io, &sc.policy, std::span<const sim::Policy>(kPolicies));
  if (sc.policy == sim::Policy::kRandom) {
    io.SchemaField(schema::ScheduleSection(), "preempt_per_mille", base, options, &sc);
  } else if (sc.policy == sim::Policy::kPct) {
    io.SchemaField(schema::ScheduleSection(), "pct_depth", base, options, &sc);
  } else if (sc.policy == sim::Policy::kGo) {
    io.SchemaField(schema::ScheduleSection(), "gomaxprocs", base, options, &sc);
    io.SchemaField(schema::ScheduleSection(), "perturb_per_mille", base, options, &sc);
  }

  // The latency: the base's, or uniform as explore draws it.
  LatencySpec& l = s->network.latency;
  std::string latency = l == base.network.latency ? "base" : "uniform";
  io.Choice(&latency, kLatencies);
  if (latency == "base") {
    l = base.network.latency;
  } else {
    Duration spread = l.max - l.min;
    l = LatencySpec{.kind = net::LatencyModel::Kind::kUniform, .min = l.min, .max = l.max};
    io.Dur(&l.min, Duration::Micros(internal::kLatencyMinMicros.lo),
           Duration::Micros(internal::kLatencyMinMicros.hi), 1);
    io.Dur(&spread, Duration::Micros(internal::kLatencySpreadMicros.lo),
           Duration::Micros(internal::kLatencySpreadMicros.hi), 1);
    l.max = l.min + spread;
  }

  // Buggify: a bit per site, in canonical order.
  const std::span<const std::string_view> sites = BuggifySiteNames();
  int64_t mask = 0;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (std::find(s->buggify.sites.begin(), s->buggify.sites.end(), sites[i]) !=
        s->buggify.sites.end()) {
      mask |= int64_t{1} << i;
    }
  }
  io.Int64(&mask, 0, (int64_t{1} << sites.size()) - 1);
  s->buggify.sites.clear();
  for (size_t i = 0; i < sites.size(); ++i) {
    if ((mask >> i) & 1) s->buggify.sites.emplace_back(sites[i]);
  }

  // The producer's settings: a short input keeps the base's.
  internal::ProducerFields(io, base.producer, &s->producer);

  // The wedge faults, after everything else (fault_fields.h): a count, then
  // each one's kind and fields. An input that ends before them has none.
  if (options.wedge_faults) {
    int32_t wedge_count = static_cast<int32_t>(std::min<size_t>(wedges.size(), INT32_MAX));
    io.Int(&wedge_count, 0, std::min(internal::kWedgeFaultsMax, std::max(0, options.max_faults)));
    for (int32_t i = 0; i < wedge_count; ++i) {
      FaultSpec f = io.encoding() ? wedges[static_cast<size_t>(i)] : FaultSpec{};
      internal::OneOf(io, &f.kind,
                      std::span<const fault_models::FaultKind>(internal::kWedgeFaultKinds));
      internal::FaultFields(io, c, heal_by, EffectiveReadTimeout(base.producer), &f);
      s->faults.push_back(std::move(f));
    }
    if (wedge_count > 0) {
      std::stable_sort(s->faults.begin(), s->faults.end(),
                       [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
    }
  }
  // The late step (fault_fields.h LateFields): a log directory failure or
  // none, then the application's drain. An input that ends before it has
  // neither: prompt, no failure.
  if (options.late_draws) {
    FaultSpec f = io.encoding() && !late.empty() ? late.front() : FaultSpec{};
    if (internal::LateFields(io, c, heal_by, EffectiveReadTimeout(base.producer),
                             options.max_faults > 0, &f, &s->workload)) {
      s->faults.push_back(std::move(f));
      std::stable_sort(s->faults.begin(), s->faults.end(),
                       [](const FaultSpec& a, const FaultSpec& b) { return a.at < b.at; });
    }
  }
  // An injected error the decoded world cannot get from Kafka goes.
  DropUnrealisticFaults(s);
}

}  // namespace

Scenario Decode(const Scenario& base, std::span<const uint8_t> bytes,
                const DecodeOptions& options) {
  PRODSIM_ASSERT(!base.cluster.topics.empty());
  Scenario s = base;
  s.expect.reset();
  s.schedule.tape.clear();
  s.faults.clear();
  s.buggify.sites.clear();
  ByteIO io(bytes);
  Fields(io, base, options, &s);
  if (s.schedule.policy == sim::Policy::kRandom || s.schedule.policy == sim::Policy::kGo) {
    const std::span<const uint8_t> rest = io.rest();
    s.schedule.tape.assign(rest.begin(), rest.end());
  }
  // Nothing here may depend on the input's length beyond what the fields
  // say: Decode(Encode(Decode(b))) == Decode(b).
  s.description =
      absl::StrCat("decoded by prodsim (a schedule tape of ", s.schedule.tape.size(), " bytes)");
  return s;
}

std::string Encode(const Scenario& base, const Scenario& s, const DecodeOptions& options) {
  PRODSIM_ASSERT(!base.cluster.topics.empty());
  Scenario copy = s;
  ByteIO io;
  Fields(io, base, options, &copy);
  std::string out = io.out();
  if (copy.schedule.policy == sim::Policy::kRandom || copy.schedule.policy == sim::Policy::kGo) {
    out += s.schedule.tape;
  }
  return out;
}

std::string_view DefaultBaseText() {
  const std::optional<std::string_view> text = BuiltinScenarioText(kDefaultBaseName);
  PRODSIM_ASSERT_MSG(text.has_value(), "the default base is compiled in");
  return *text;
}

absl::StatusOr<Scenario> LoadBase(const std::string& path, const std::string& profile) {
  absl::StatusOr<Scenario> base =
      path.empty() ? ParseScenario(DefaultBaseText(), kDefaultBaseName) : LoadScenario(path);
  if (!base.ok()) return base;
  if (!profile.empty()) {
    const absl::StatusOr<sarama::Profile> parsed = sarama::ParseProfile(profile);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown producer profile '", profile, "' (sarama-1.42.1 or sarama-main)"));
    }
    base->producer.profile = *parsed;
  }
  return base;
}

}  // namespace scenarios
