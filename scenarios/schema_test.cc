// Tests of the format's description (schema.h): its tables are consistent
// with themselves and with the model they name, and the reader and the
// printer really are driven by them (a field set through the schema comes
// back through a file; a value out of a field's bounds is an error at its
// line).
#include "scenarios/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checks/check_registry.h"
#include "checks/verdict.h"
#include "fault_models/kinds.h"
#include "scenarios/decode.h"
#include "scenarios/fault_fields.h"
#include "scenarios/scenario.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/types.h"
#include "sim/net/network.h"

namespace scenarios::schema {
namespace {

using ::testing::HasSubstr;

// A valid base: three brokers, a topic replicated three ways (so that a
// larger min_insync_replicas is valid too).
constexpr std::string_view kBase = R"(
[cluster]
brokers = 3
[[cluster.topics]]
name = "t"
partitions = 2
replication_factor = 3
)";

Scenario Base() {
  absl::StatusOr<Scenario> s = ParseScenario(kBase, "base.toml");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// The sections a scenario has once, with the struct each describes.
struct Single {
  const Section* section;
  void* (*of)(Scenario&);
};
std::vector<Single> Singles() {
  return {
      {&Top(), [](Scenario& s) -> void* { return &s; }},
      {&ScheduleSection(), [](Scenario& s) -> void* { return &s.schedule; }},
      {&ProducerSection(), [](Scenario& s) -> void* { return &s.producer; }},
      {&ClusterSection(), [](Scenario& s) -> void* { return &s.cluster; }},
      {&LatencySection(), [](Scenario& s) -> void* { return &s.network.latency; }},
      {&WorkloadSection(), [](Scenario& s) -> void* { return &s.workload; }},
      {&BuggifySection(), [](Scenario& s) -> void* { return &s.buggify; }},
      {&ChecksSection(), [](Scenario& s) -> void* { return &s.checks; }},
      {&LimitsSection(), [](Scenario& s) -> void* { return &s.limits; }},
  };
}

// Values of `f` other than `now` that a file may give it, simplest first.
std::vector<Value> OtherValues(const Field& f, const Value& now) {
  std::vector<Value> out;
  switch (f.type) {
    case Type::kInt:
      for (const int64_t v : {f.lo, f.lo + 1, f.hi}) out.emplace_back(v);
      break;
    case Type::kBool:
      out.emplace_back(true);
      out.emplace_back(false);
      break;
    case Type::kDuration:
      for (const Duration d : {Duration::Millis(7), Duration::Seconds(3), Duration::Micros(1)}) {
        out.emplace_back(d);
      }
      break;
    case Type::kString: out.emplace_back(std::string("a scenario")); break;
    case Type::kEnum:
      for (const std::string_view v : f.values) out.emplace_back(std::string(v));
      break;
    case Type::kAcks:
      for (const int64_t v : {-1, 0, 1}) out.emplace_back(v);
      break;
    case Type::kVersion: out.emplace_back(std::string("2.1.0")); break;
    case Type::kHex: out.emplace_back(std::string("\x07\xff", 2)); break;
    case Type::kNameList: out.emplace_back(std::vector<std::string>{"t"}); break;
    case Type::kSiteList:
      out.emplace_back(std::vector<std::string>{std::string(f.values.front())});
      break;
  }
  std::erase(out, now);
  return out;
}

TEST(SchemaTest, KeysAreUniqueAndDocumented) {
  for (const Section* s : Sections()) {
    std::set<std::string_view> keys;
    for (const Field& f : s->fields) {
      EXPECT_TRUE(keys.insert(f.key).second) << s->header << " has " << f.key << " twice";
      EXPECT_FALSE(f.doc.empty()) << s->header << " " << f.key << " has no doc";
      EXPECT_NE(f.get, nullptr) << f.key;
      EXPECT_NE(f.set, nullptr) << f.key;
      if (f.type == Type::kInt) {
        EXPECT_LE(f.lo, f.hi) << f.key;
      }
      if (f.shrink == Shrink::kDescend) {
        EXPECT_EQ(f.type, Type::kInt) << f.key;
      }
      EXPECT_EQ(Find(*s, f.key), &f);
    }
  }
}

// Each field of each single section, set through the schema to a value
// other than the base's, survives the printer and the reader: both read the
// same member the schema names, by the same key.
TEST(SchemaTest, EveryFieldComesBackThroughAFile) {
  int checked = 0;
  // The latency's fields are printed for the kinds that read them: a base
  // of each kind.
  std::vector<Scenario> bases(4, Base());
  bases[3].schedule.policy = sim::Policy::kGo;  // the fields only go reads
  bases[1].network.latency = {.kind = net::LatencyModel::Kind::kUniform,
                              .min = Duration::Millis(1),
                              .max = Duration::Millis(2)};
  bases[2].network.latency = {.kind = net::LatencyModel::Kind::kExponential,
                              .min = Duration::Millis(1),
                              .mean = Duration::Millis(1),
                              .cap = Duration::Seconds(1)};
  for (const Single& single : Singles()) {
    for (const Field& f : single.section->fields) {
      bool any = false;
      for (Scenario& base : bases) {
        const Value now = f.get(single.of(base));
        for (const Value& v : OtherValues(f, now)) {
          Scenario s = base;
          f.set(single.of(s), v);
          // What the member holds: a spelling the reader accepts may be held
          // as another (kafka_version "2.4" selects the rules of "2.0").
          const Value held = f.get(single.of(s));
          if (held == now) continue;
          const std::string text = PrintScenario(s);
          absl::StatusOr<Scenario> back = ParseScenario(text, "x.toml");
          // A cross-field rule, or a field this latency kind does not read
          // (not printed): the next value or base.
          if (!back.ok() || f.get(single.of(*back)) == now) continue;
          EXPECT_EQ(f.get(single.of(*back)), held) << single.section->header << " " << f.key;
          EXPECT_THAT(text, HasSubstr(absl::StrCat("\n", std::string(f.key), " = ")));
          any = true;
        }
      }
      EXPECT_TRUE(any) << single.section->header << " " << f.key
                       << ": no other value survives a file";
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

// Each bounded integer field one past its bounds: an error at its line
// and column that names the key.
TEST(SchemaTest, OutOfBoundsIsAnErrorAtTheLine) {
  int checked = 0;
  for (const Single& single : Singles()) {
    if (single.section->path.empty()) continue;
    for (const Field& f : single.section->fields) {
      if (f.type != Type::kInt) continue;
      for (const int64_t bad : {f.lo - 1, f.hi + 1}) {
        if (bad < f.lo && f.lo == INT64_MIN) continue;
        if (bad > f.hi && f.hi == INT64_MAX) continue;
        // The base with the field added (the cluster's written out whole,
        // a TOML table being defined once).
        std::string text;
        if (single.section->path == "cluster") {
          text =
              absl::StrCat("[cluster]\n", f.key == "brokers" ? "" : "brokers = 3\n",
                           std::string(f.key), " = ", bad, "\n[[cluster.topics]]\nname = \"t\"\n");
        } else {
          text = absl::StrCat(std::string(kBase), "[", std::string(single.section->path), "]\n",
                              std::string(f.key), " = ", bad, "\n");
        }
        absl::StatusOr<Scenario> s = ParseScenario(text, "bad.toml");
        ASSERT_FALSE(s.ok()) << f.key << " = " << bad << " was accepted";
        EXPECT_THAT(std::string(s.status().message()), HasSubstr(std::string(f.key)));
        EXPECT_THAT(std::string(s.status().message()),
                    ::testing::MatchesRegex("bad.toml:[0-9]+:[0-9]+: .*"));
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 30);
}

// The value lists name what the model has.
TEST(SchemaTest, ValueListsMatchTheModel) {
  // Every error name is a code the model knows, and every code it names
  // (but NONE) is listed.
  std::set<std::string> listed;
  for (const std::string_view name : KafkaErrorNames()) {
    EXPECT_TRUE(kafka::ErrorCodeFromName(name).has_value()) << name;
    listed.insert(std::string(name));
  }
  for (int code = -1; code < 200; ++code) {
    const auto c = static_cast<kafka::ErrorCode>(code);
    if (c == kafka::ErrorCode::NONE || !kafka::IsNamedErrorCode(c)) continue;
    EXPECT_TRUE(listed.contains(kafka::ErrorCodeName(c))) << kafka::ErrorCodeName(c);
  }
  // The Kafka versions parse.
  const Field* version = Find(ClusterSection(), "kafka_version");
  ASSERT_NE(version, nullptr);
  for (const std::string_view v : version->values) {
    EXPECT_TRUE(kafka::ParseKafkaVersion(v).ok()) << v;
  }
  // The buggify sites: sim/net's, then sim/kafka's.
  std::vector<std::string_view> sites;
  for (const sim::BuggifySite& s : net::kBuggifySites) sites.push_back(s.name);
  for (const sim::BuggifySite& s : kafka::kBuggifySites) sites.push_back(s.name);
  EXPECT_THAT(BuggifySiteNames(), ::testing::ElementsAreArray(sites));
  // The fault kinds: the kind table, the [[faults]] kind values and the
  // generators' kinds are the same set; each kind reads fault fields only.
  std::set<std::string_view> table, generated;
  for (const FaultKind& k : FaultKinds()) {
    table.insert(k.name);
    for (const std::string_view r : k.reads) {
      EXPECT_NE(Find(FaultSection(), r), nullptr) << k.name << " reads " << r;
    }
    for (const std::string_view n : k.needs) {
      EXPECT_TRUE(std::find(k.reads.begin(), k.reads.end(), n) != k.reads.end())
          << k.name << " needs " << n << " but does not read it";
    }
  }
  // The registry's field keys (fault_models/kinds.h) are the [[faults]]
  // keys after kind and at, in order.
  std::vector<std::string_view> keys;
  for (const Field& f : FaultSection().fields) keys.push_back(f.key);
  ASSERT_GE(keys.size(), 2u);
  EXPECT_THAT(std::vector<std::string_view>(keys.begin() + 2, keys.end()),
              ::testing::ElementsAreArray(fault_models::kFaultFieldKeys));
  const Field* kind = Find(FaultSection(), "kind");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(table, std::set<std::string_view>(kind->values.begin(), kind->values.end()));
  for (const fault_models::FaultKind k : internal::GeneratedFaultKinds(true)) {
    generated.insert(fault_models::FaultKindName(k));
  }
  for (const fault_models::FaultKind k : internal::kWedgeFaultKinds) {
    EXPECT_TRUE(generated.insert(fault_models::FaultKindName(k)).second) << "drawn twice";
  }
  for (const fault_models::FaultKind k : internal::kLateFaultKinds) {
    EXPECT_TRUE(generated.insert(fault_models::FaultKindName(k)).second) << "drawn twice";
  }
  // And the kinds no generator draws (written by hand only).
  for (const fault_models::FaultKind k :
       fault_models::KindsDrawnIn<fault_models::DrawStep::kByHand>()) {
    EXPECT_TRUE(generated.insert(fault_models::FaultKindName(k)).second) << "drawn and by hand";
  }
  EXPECT_EQ(table, generated);
}

// The codec takes its ranges from the schema: the empty input gives each
// field's least value, and a long run of 0xff the greatest.
TEST(SchemaTest, CodecRangesComeFromTheSchema) {
  Scenario base = Base();
  base.workload.messages = 50;
  base.workload.keys = 7;
  base.workload.burst = 3;
  base.workload.interval = Duration::Millis(64);
  const DecodeOptions options;
  const DecodeLimits limits{.max_messages = options.max_messages};
  const std::vector<uint8_t> zeros;
  const Scenario lo = Decode(base, zeros, options);
  const std::vector<uint8_t> ones(64, 0xff);
  const Scenario hi = Decode(base, ones, options);
  struct Case {
    const Section* section;
    std::string_view key;
    const void* (*of)(const Scenario&);
  };
  const Case cases[] = {
      {&WorkloadSection(), "messages",
       [](const Scenario& s) -> const void* { return &s.workload; }},
      {&WorkloadSection(), "keys", [](const Scenario& s) -> const void* { return &s.workload; }},
      {&WorkloadSection(), "burst", [](const Scenario& s) -> const void* { return &s.workload; }},
      {&WorkloadSection(), "interval",
       [](const Scenario& s) -> const void* { return &s.workload; }},
      {&ClusterSection(), "brokers", [](const Scenario& s) -> const void* { return &s.cluster; }},
  };
  for (const Case& c : cases) {
    const Field* f = Find(*c.section, c.key);
    ASSERT_NE(f, nullptr);
    ASSERT_NE(f->codec, nullptr) << c.key;
    const CodecRange r = f->codec(base, limits);
    const auto as_int = [&](const Value& v) {
      return f->type == Type::kInt ? std::get<int64_t>(v) : std::get<Duration>(v).nanos();
    };
    EXPECT_EQ(as_int(f->get(c.of(lo))), r.lo) << c.key;
    // The top raw value: the greatest, or within a raw step of it for a
    // range wider than its bytes (the interval's one byte).
    EXPECT_LE(as_int(f->get(c.of(hi))), r.hi) << c.key;
    EXPECT_GE(as_int(f->get(c.of(hi))), r.hi - (r.hi - r.lo) / 128) << c.key;
  }
  // Every field that names a codec range is one of these or a schedule
  // field the policy selects.
  int with_codec = 0;
  for (const Section* s : Sections()) {
    for (const Field& f : s->fields) with_codec += f.codec != nullptr;
  }
  EXPECT_EQ(with_codec,
            9);  // the five above and pct_depth, preempt_per_mille, gomaxprocs, perturb_per_mille
}

// What the check registry cannot derive for the format: each opt-in check
// (checks/check_registry.h) is switched on by a [checks] field named after
// it, and [checks] has no other field; the format lists every check and
// every verdict once.
TEST(Schema, ChecksSectionMatchesTheOptInChecks) {
  std::set<std::string> opt_in;
  for (const checks::CheckInfo& c : checks::CheckInfos()) {
    if (!c.opt_in) continue;
    std::string key(c.name);
    std::replace(key.begin(), key.end(), '-', '_');
    opt_in.insert(key);
  }
  std::set<std::string> fields;
  for (const Field& f : ChecksSection().fields) fields.insert(std::string(f.key));
  EXPECT_EQ(fields, opt_in);
  EXPECT_EQ(CheckNames().size(), checks::kCheckCount);
  EXPECT_EQ(std::set<std::string_view>(CheckNames().begin(), CheckNames().end()).size(),
            checks::kCheckCount);
  EXPECT_EQ(Verdicts().size(), checks::kVerdictCount);
}

}  // namespace
}  // namespace scenarios::schema
