// The scenario file format: TOML in, Scenario out, and back, driven by the
// description of scenarios/schema.h.
//
// Parsing runs in three steps. A lexical guard bounds the input (size, and
// the depth of dotted keys). toml++ parses the text. A walk over the schema
// then reads each section's fields with a TableReader (toml_reader.h), which
// knows the keys it was asked for and reports every other key as unknown.
// Every problem is collected with its source position and the earliest one
// is reported, so the message does not depend on the order of the walk.
// The checks that relate two fields or sections (a fault's broker against
// the cluster's size, an injected error's realism) are written out below;
// they run only when the sections they read parsed cleanly, so a bad value
// never causes a second, misleading error.
#include "scenarios/scenario.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/assert.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "scenarios/known_on.h"
#include "scenarios/realism.h"
#include "scenarios/schema.h"
#include "scenarios/toml_reader.h"

namespace scenarios {
namespace {

using internal::Av;
using internal::Clean;
using internal::Diagnostics;
using internal::Join;
using internal::Pos;
using internal::PosOf;
using internal::SectionKeys;
using internal::Shown;
using internal::TableReader;
using schema::Field;
using schema::Section;
using schema::Type;
using schema::Value;

constexpr size_t kMaxFaults = 10000;
constexpr size_t kMaxTopics = 64;

// Every table's keys, in canonical order, for hints: each section's fields,
// and the tables it holds.
std::span<const SectionKeys> AllSectionKeys() {
  static const std::vector<SectionKeys>* const kKeys = [] {
    auto* out = new std::vector<SectionKeys>;
    const auto keys = [](const Section& s, std::vector<std::string_view> more) {
      std::vector<std::string_view> k;
      for (const Field& f : s.fields) k.push_back(f.key);
      k.insert(k.end(), more.begin(), more.end());
      return SectionKeys{s.header, std::move(k)};
    };
    out->push_back(
        keys(schema::Top(), {"schedule", "producer", "cluster", "network", "workload", "faults",
                             "buggify", "checks", "limits", "clients", "expect"}));
    out->push_back(keys(schema::ScheduleSection(), {}));
    out->push_back(keys(schema::ProducerSection(), {}));
    out->push_back(keys(schema::ClusterSection(), {"topics"}));
    out->push_back(keys(schema::TopicSection(), {}));
    out->push_back(SectionKeys{"[network]", {"latency"}});
    out->push_back(keys(schema::LatencySection(), {}));
    out->push_back(keys(schema::WorkloadSection(), {}));
    out->push_back(keys(schema::FaultSection(), {}));
    out->push_back(keys(schema::BuggifySection(), {}));
    out->push_back(keys(schema::ChecksSection(), {}));
    out->push_back(keys(schema::LimitsSection(), {}));
    out->push_back(keys(schema::ExpectSection(), {"profiles"}));
    out->push_back(keys(schema::ProfileExpectSection(), {}));
    return out;
  }();
  return *kKeys;
}

// ---------------------------------------------------------------------------
// Reading one field, by its type.

// Sarama versions: MAJOR.MINOR[.PATCH[.BUILD]]. Which releases a profile
// knows is the producer's business (sarama::ParseKafkaVersion), since it
// differs between profiles; here only the spelling is checked.
bool IsVersionSpelling(const std::string& v) {
  int parts = 1;
  bool ok = !v.empty() && internal::IsDigit(v.front()) && internal::IsDigit(v.back());
  for (size_t i = 0; ok && i < v.size(); ++i) {
    const char c = v[i];
    if (c == '.') ok = ++parts <= 4 && internal::IsDigit(v[i - 1]);
    if (c != '.' && !internal::IsDigit(c)) ok = false;
  }
  return ok && parts >= 2;
}

std::optional<Value> ReadAcks(TableReader& r, const Field& f) {
  const toml::node* node = r.Get(f.key);
  if (const auto* name = node->as_string()) {
    if (std::optional<int32_t> v = schema::AcksFromName(name->get())) return int64_t{*v};
  } else if (const auto* v = node->as_integer()) {
    if (v->get() >= -1 && v->get() <= 1) return v->get();
  }
  r.diag().Add(PosOf(node->source()),
               absl::StrCat(r.Name(f.key), " must be -1, 0 or 1 (or its name)"),
               "use \"wait_for_all\" (-1), \"wait_for_local\" (1) or \"no_response\" (0)");
  return std::nullopt;
}

std::optional<Value> ReadHex(TableReader& r, const Field& f) {
  const Pos pos = r.PosOrTable(f.key);
  std::string hex;
  if (!r.Str(f.key, 2 * static_cast<size_t>(f.hi), &hex)) return std::nullopt;
  if (hex.size() % 2 != 0) {
    r.diag().Add(pos,
                 absl::StrCat(r.Name(f.key), " has an odd number of hex digits (", hex.size(), ")"),
                 "write two hex digits per byte, e.g. \"00ff1a\"");
    return std::nullopt;
  }
  const auto bad = std::find_if_not(hex.begin(), hex.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c));
  });
  if (bad != hex.end()) {
    r.diag().Add(pos,
                 absl::StrCat(r.Name(f.key), " has a character that is not a hex digit at offset ",
                              bad - hex.begin()),
                 "use only 0-9 and a-f");
    return std::nullopt;
  }
  return absl::HexStringToBytes(hex);
}

std::optional<Value> ReadNameList(TableReader& r, const Field& f) {
  const toml::node* node = r.Get(f.key);
  const toml::array* a = node->as_array();
  if (a == nullptr) {
    r.diag().Add(PosOf(node->source()),
                 absl::StrCat(r.Name(f.key), " must be an array of topic names, not ",
                              Av(internal::TypeName(*node))),
                 "write topics = [\"orders\"], or leave it out for every topic");
    return std::nullopt;
  }
  if (a->size() > static_cast<size_t>(f.hi)) {
    r.diag().Add(PosOf(node->source()), absl::StrCat(r.Name(f.key), " has too many entries"),
                 absl::StrCat("list at most ", f.hi, " topics"));
    return std::nullopt;
  }
  std::vector<std::string> names;
  bool ok = true;
  for (const toml::node& e : *a) {
    const auto* s = e.as_string();
    if (s == nullptr) {
      r.diag().Add(
          PosOf(e.source()),
          absl::StrCat(r.Name(f.key), " entries must be strings, not ", Av(internal::TypeName(e))),
          "quote each topic name");
      ok = false;
      continue;
    }
    names.push_back(s->get());
  }
  if (!ok) return std::nullopt;
  return names;
}

// "did you mean ...? sites: ..." or "use one of: ...", for a bad site name.
std::string SiteHint(std::string_view name, schema::StringList sites) {
  const std::optional<std::string_view> near = internal::Closest(name, sites);
  if (!near) return absl::StrCat("use one of: ", Join(sites));
  return absl::StrCat("did you mean \"", Av(*near), "\"? sites: ", Join(sites));
}

// Known names, each once; kept in the order of `f.values`.
std::optional<Value> ReadSiteList(TableReader& r, const Field& f) {
  const toml::node* node = r.Get(f.key);
  const toml::array* a = node->as_array();
  if (a == nullptr) {
    r.diag().Add(PosOf(node->source()),
                 absl::StrCat(r.Name(f.key), " must be an array of site names, not ",
                              Av(internal::TypeName(*node))),
                 absl::StrCat("write sites = [\"net.delay\"]; sites: ", Join(f.values)));
    return std::nullopt;
  }
  std::vector<bool> seen(f.values.size());
  bool ok = true;
  for (const toml::node& e : *a) {
    const auto* name = e.as_string();
    if (name == nullptr) {
      r.diag().Add(
          PosOf(e.source()),
          absl::StrCat(r.Name(f.key), " entries must be strings, not ", Av(internal::TypeName(e))),
          "quote each site name, e.g. \"net.delay\"");
      ok = false;
      continue;
    }
    const auto it = std::find(f.values.begin(), f.values.end(), name->get());
    if (it == f.values.end()) {
      const Pos pos = PosOf(e.source());
      r.diag().Add(pos, absl::StrCat("unknown buggify site ", Shown(name->get())),
                   r.diag().WouldReport(pos) ? SiteHint(name->get(), f.values) : std::string());
      ok = false;
      continue;
    }
    const size_t i = static_cast<size_t>(it - f.values.begin());
    if (seen[i]) {
      r.diag().Add(PosOf(e.source()), absl::StrCat("duplicate buggify site ", Shown(name->get())),
                   "list each site once");
      ok = false;
    }
    seen[i] = true;
  }
  std::vector<std::string> sites;
  for (size_t i = 0; i < f.values.size(); ++i) {
    if (seen[i]) sites.emplace_back(f.values[i]);
  }
  if (!ok) return std::nullopt;
  return sites;
}

// The field's value from the table, or nullopt (absent, or a problem, which
// is recorded).
std::optional<Value> ReadValue(TableReader& r, const Field& f) {
  if (!r.Has(f.key)) {
    r.MarkKnown(f.key);
    return std::nullopt;
  }
  switch (f.type) {
    case Type::kInt: {
      int64_t v = 0;
      if (!r.Int(f.key, f.lo, f.hi, &v)) return std::nullopt;
      return v;
    }
    case Type::kBool: {
      bool v = false;
      if (!r.Bool(f.key, &v)) return std::nullopt;
      return v;
    }
    case Type::kDuration: {
      Duration v;
      if (!r.Dur(f.key, Duration::Nanos(f.lo), &v)) return std::nullopt;
      return v;
    }
    case Type::kString: {
      std::string v;
      if (!r.Str(f.key, static_cast<size_t>(f.hi), &v)) return std::nullopt;
      return v;
    }
    case Type::kEnum: {
      std::string v;
      if (!r.Enum(f.key, f.values, &v)) return std::nullopt;
      return v;
    }
    case Type::kVersion: {
      std::string v;
      if (!r.Str(f.key, static_cast<size_t>(f.hi), &v)) return std::nullopt;
      if (!IsVersionSpelling(v)) {
        r.diag().Add(r.PosOrTable(f.key),
                     absl::StrCat(r.Name(f.key), " ", Shown(v), " is not a Kafka version"),
                     "write MAJOR.MINOR[.PATCH], e.g. \"2.6.0\"");
        return std::nullopt;
      }
      return v;
    }
    case Type::kAcks: return ReadAcks(r, f);
    case Type::kHex: return ReadHex(r, f);
    case Type::kNameList: return ReadNameList(r, f);
    case Type::kSiteList: return ReadSiteList(r, f);
  }
  return std::nullopt;
}

// Reads `f` into `section` (left alone when absent).
void ReadField(TableReader& r, const Field& f, void* section) {
  if (std::optional<Value> v = ReadValue(r, f)) f.set(section, std::move(*v));
}

// Reads every field of `s` into `section` but those in `skip`.
void ReadFields(TableReader& r, const Section& s, void* section,
                std::initializer_list<std::string_view> skip = {}) {
  for (const Field& f : s.fields) {
    if (std::find(skip.begin(), skip.end(), f.key) == skip.end()) ReadField(r, f, section);
  }
}

// ---------------------------------------------------------------------------
// The sections' own checks.

void CheckSchedule(TableReader& r, const ScheduleSpec& s) {
  const std::string policy(sim::PolicyName(s.policy));
  if (!s.tape.empty() && s.policy != sim::Policy::kRandom && s.policy != sim::Policy::kGo) {
    r.diag().Add(
        r.PosOrTable("tape"),
        absl::StrCat(r.Name("tape"), " is only read by policies \"random\" and \"go\", not \"",
                     policy, "\""),
        "set policy = \"random\" or \"go\", or remove the tape");
  }
  if (s.policy != sim::Policy::kGo) {
    // The Ps, the perturbation and the CPU costs mean something only under go.
    const ScheduleSpec defaults;
    for (const std::string_view key :
         {"gomaxprocs", "perturb_per_mille", "cpu_sync_op", "cpu_wake", "cpu_message",
          "cpu_request", "cpu_request_byte", "cpu_response", "cpu_start"}) {
      const schema::Field* f = schema::Find(schema::ScheduleSection(), key);
      PRODSIM_ASSERT(f != nullptr);
      if (f->get(&s) == f->get(&defaults)) continue;
      r.diag().Add(
          r.PosOrTable(key),
          absl::StrCat(r.Name(key), " is only read by policy \"go\", not \"", policy, "\""),
          "set policy = \"go\" or remove it");
    }
  }
}

void CheckProducer(TableReader& r, const ProducerSpec& p) {
  if (p.flush_max_messages.value_or(0) > 0 &&
      *p.flush_max_messages < p.flush_messages.value_or(0)) {
    r.diag().Add(r.PosOrTable("flush_max_messages"),
                 absl::StrCat(r.Name("flush_max_messages"), " is below flush_messages"),
                 "Sarama needs flush_max_messages >= flush_messages when it is set");
  }
}

// Kafka topic names: 1..249 of [a-zA-Z0-9._-], and not "." or "..".
bool IsTopicName(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return internal::IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '_' || c == '-';
  });
}

// `brokers` is 0 if cluster.brokers was bad (then it is not checked against).
void ReadTopic(TableReader& r, int32_t brokers, TopicSpec* t) {
  const bool has_name = r.Has("name");
  ReadField(r, *schema::Find(schema::TopicSection(), "name"), t);
  ReadField(r, *schema::Find(schema::TopicSection(), "partitions"), t);
  const size_t before = r.diag().count();
  ReadField(r, *schema::Find(schema::TopicSection(), "replication_factor"), t);
  r.Finish();
  if (!has_name) {
    r.diag().Add(r.pos(), absl::StrCat(r.Name("name"), " is missing"),
                 "every [[cluster.topics]] entry needs a name, e.g. name = \"orders\"");
  } else if (!IsTopicName(t->name)) {
    r.diag().Add(r.PosOrTable("name"),
                 absl::StrCat("topic name ", Shown(t->name), " is not a valid Kafka topic name"),
                 "use 1 to 249 characters from a-z, A-Z, 0-9, '.', '_' and '-'");
  }
  if (brokers > 0 && Clean(r.diag(), before) && t->replication_factor > brokers) {
    r.diag().Add(r.PosOrTable("replication_factor"),
                 absl::StrCat(r.Name("replication_factor"), " = ", t->replication_factor,
                              " exceeds the cluster's ", brokers, " broker(s)"),
                 absl::StrCat("use a replication_factor from 1 to ", brokers, ", or add brokers"));
  }
}

void ReadTopics(TableReader& r, int32_t brokers, ClusterSpec* c) {
  const bool present = r.Has("topics");
  const toml::array* topics = r.TableArray("topics", kMaxTopics);
  if (!present || (topics != nullptr && topics->empty())) {
    r.diag().Add(r.PosOrTable("topics"), "the cluster has no topics",
                 "add a [[cluster.topics]] section with a name, e.g. name = \"orders\"");
    return;
  }
  if (topics == nullptr) return;  // the problem is recorded
  for (size_t i = 0; i < topics->size(); ++i) {
    TableReader tr = r.Sub(*(*topics)[i].as_table(), absl::StrCat("cluster.topics[", i, "]"),
                           schema::TopicSection().header);
    TopicSpec t;
    ReadTopic(tr, brokers, &t);
    for (const TopicSpec& earlier : c->topics) {
      if (!t.name.empty() && earlier.name == t.name) {
        r.diag().Add(tr.PosOrTable("name"), absl::StrCat("duplicate topic ", Shown(t.name)),
                     "give each [[cluster.topics]] entry its own name");
      }
    }
    c->topics.push_back(std::move(t));
  }
}

void ReadCluster(TableReader& r, ClusterSpec* c) {
  const size_t before = r.diag().count();
  ReadField(r, *schema::Find(schema::ClusterSection(), "brokers"), c);
  const int32_t brokers = Clean(r.diag(), before) ? c->brokers : 0;
  ReadFields(r, schema::ClusterSection(), c, {"brokers", "min_insync_replicas"});
  ReadTopics(r, brokers, c);
  const size_t before_isr = r.diag().count();
  ReadField(r, *schema::Find(schema::ClusterSection(), "min_insync_replicas"), c);
  if (Clean(r.diag(), before_isr)) {
    for (const TopicSpec& t : c->topics) {
      if (c->min_insync_replicas <= t.replication_factor) continue;
      r.diag().Add(r.PosOrTable("min_insync_replicas"),
                   absl::StrCat(r.Name("min_insync_replicas"), " = ", c->min_insync_replicas,
                                " exceeds the replication_factor ", t.replication_factor,
                                " of topic ", Shown(t.name)),
                   "min_insync_replicas must be at most every topic's replication_factor");
      break;
    }
  }
  r.Finish();
}

// Whether latency kind `k` reads `key`.
bool LatencyReads(const schema::LatencyKind& k, std::string_view key) {
  return key == "kind" || key == "min" || (key == "max" && k.max) || (key == "mean" && k.mean) ||
         (key == "cap" && k.cap);
}

void ReadLatency(TableReader& r, LatencySpec* l) {
  const size_t before = r.diag().count();
  ReadFields(r, schema::LatencySection(), l, {"max", "mean", "cap"});
  const schema::LatencyKind* kind =
      Clean(r.diag(), before) ? &schema::LatencyKindOf(l->kind) : nullptr;
  for (const std::string_view key : {"max", "mean", "cap"}) {
    if (kind == nullptr || LatencyReads(*kind, key)) {
      ReadField(r, *schema::Find(schema::LatencySection(), key), l);
      continue;
    }
    r.Forbid(key, absl::StrCat(r.Name(key), " is not used by ", Av(kind->name), " latency"),
             absl::StrCat("remove it; ", Av(kind->name), " latency reads ",
                          kind->max    ? "min and max"
                          : kind->mean ? "min, mean and cap"
                                       : "min"));
  }
  r.Finish();
  if (kind == nullptr || !Clean(r.diag(), before)) return;
  if (kind->max && l->min > l->max) {
    r.diag().Add(r.PosOrTable("min"), absl::StrCat(r.Name("min"), " is above max"),
                 "uniform latency needs min <= max");
  }
  if (kind->cap && l->min > l->cap) {
    r.diag().Add(r.PosOrTable("min"), absl::StrCat(r.Name("min"), " is above cap"),
                 "exponential latency needs min <= cap");
  }
}

void ReadNetwork(TableReader& r, NetworkSpec* n) {
  if (const toml::table* latency = r.Table("latency")) {
    TableReader lr = r.Sub(*latency, "network.latency", schema::LatencySection().header);
    ReadLatency(lr, &n->latency);
  }
  r.Finish();
}

bool HasTopic(const ClusterSpec& c, std::string_view name) {
  return std::any_of(c.topics.begin(), c.topics.end(),
                     [&](const TopicSpec& t) { return t.name == name; });
}

void ReadWorkload(TableReader& r, const ClusterSpec* cluster, const LimitsSpec* limits,
                  WorkloadSpec* w) {
  const size_t before = r.diag().count();
  ReadFields(r, schema::WorkloadSection(), w);
  // Each topic must be a cluster topic (if the cluster parsed cleanly, else
  // the check would only repeat its problem).
  const toml::node* topics = r.Get("topics");
  if (cluster != nullptr && topics != nullptr && topics->is_array()) {
    for (const toml::node& e : *topics->as_array()) {
      const auto* s = e.as_string();
      if (s == nullptr || HasTopic(*cluster, s->get())) continue;
      r.diag().Add(PosOf(e.source()),
                   absl::StrCat("workload topic ", Shown(s->get()), " is not in the cluster"),
                   "add it as a [[cluster.topics]] entry, or fix the name");
    }
  }
  if (limits != nullptr && Clean(r.diag(), before) && w->close_at && *w->close_at > limits->time) {
    r.diag().Add(
        r.PosOrTable("close_at"),
        absl::StrCat(r.Name("close_at"), " is after limits.time (", limits->time.ToString(), ")"),
        "close before the run's time limit, or raise limits.time");
  }
  r.Finish();
}

// ---------------------------------------------------------------------------
// Faults.

// What a fault's cross checks read: null members mean "that section had
// problems, skip the check".
struct FaultContext {
  const ClusterSpec* cluster = nullptr;
  const LimitsSpec* limits = nullptr;
  const ProducerSpec* producer = nullptr;
};

// "kind, at, broker, duration": the keys a fault kind reads, for hints.
std::string FaultKeysOf(const schema::FaultKind& kind) {
  std::vector<std::string_view> keys;
  for (const Field& f : schema::FaultSection().fields) {
    if (schema::Reads(kind, f.key)) keys.push_back(f.key);
  }
  return Join(keys);
}

// Reads the fields `kind` uses, and forbids the others.
void ReadFaultFields(TableReader& r, const schema::FaultKind& kind, FaultSpec* f) {
  for (const Field& field : schema::FaultSection().fields) {
    if (field.key == "kind" || field.key == "at") continue;
    if (schema::Reads(kind, field.key)) {
      ReadField(r, field, f);
      continue;
    }
    r.Forbid(field.key,
             absl::StrCat(r.Name(field.key), " is not used by a ", Av(kind.name), " fault"),
             absl::StrCat("remove it; ", Av(kind.name), " reads ", FaultKeysOf(kind)));
  }
}

// The fields a kind needs: present, and not the "any" value.
void CheckRequired(TableReader& r, const schema::FaultKind& kind, const FaultSpec& f) {
  for (const std::string_view key : kind.needs) {
    if (r.Has(key)) continue;
    r.diag().Add(r.pos(), absl::StrCat(r.Name(key), " is missing"),
                 absl::StrCat("a ", Av(kind.name), " fault needs ", Av(key)));
  }
  if (!schema::Reads(kind, "topic")) return;
  const bool has_topic = r.Has("topic"), has_partition = r.Has("partition");
  if (has_topic && f.topic.empty()) {
    r.diag().Add(r.PosOrTable("topic"), absl::StrCat(r.Name("topic"), " is empty"),
                 "name a cluster topic, or leave topic and partition out for every partition");
  } else if (has_topic && !has_partition) {
    r.diag().Add(r.PosOrTable("topic"), absl::StrCat(r.Name("partition"), " is missing"),
                 "a topic goes with a partition: add partition = 0 (or another)");
  } else if (!has_topic && has_partition) {
    r.diag().Add(r.PosOrTable("partition"),
                 absl::StrCat(r.Name("partition"), " is set but topic is not"),
                 "name the partition's topic, or remove partition");
  }
}

void CheckFaultTopic(TableReader& r, const FaultSpec& f, const ClusterSpec& cluster) {
  if (f.topic.empty()) return;  // every partition
  const auto it = std::find_if(cluster.topics.begin(), cluster.topics.end(),
                               [&](const TopicSpec& t) { return t.name == f.topic; });
  if (it == cluster.topics.end()) {
    r.diag().Add(r.PosOrTable("topic"),
                 absl::StrCat("fault topic ", Shown(f.topic), " is not in the cluster"),
                 "use a topic from [[cluster.topics]]");
  } else if (f.partition >= it->partitions) {
    r.diag().Add(r.PosOrTable("partition"),
                 absl::StrCat(r.Name("partition"), " = ", f.partition, " but topic ",
                              Shown(f.topic), " has ", it->partitions, " partition(s)"),
                 absl::StrCat("use a partition from 0 to ", it->partitions - 1));
  }
}

void CheckFaultAgainstCluster(TableReader& r, const schema::FaultKind& kind, const FaultSpec& f,
                              const ClusterSpec& cluster) {
  if (schema::Reads(kind, "broker") && f.broker >= cluster.brokers) {
    r.diag().Add(r.PosOrTable("broker"),
                 absl::StrCat(r.Name("broker"), " = ", f.broker, " but the cluster has ",
                              cluster.brokers, " broker(s)"),
                 absl::StrCat("brokers are numbered 0 to ", cluster.brokers - 1));
  }
  if (schema::Reads(kind, "topic")) CheckFaultTopic(r, f, cluster);
}

void CheckFaultTiming(TableReader& r, const FaultSpec& f, const LimitsSpec& limits) {
  if (f.at >= limits.time) {
    r.diag().Add(r.PosOrTable("at"),
                 absl::StrCat(r.Name("at"), " = ", f.at.ToString(), " is not before limits.time (",
                              limits.time.ToString(), ")"),
                 "start the fault earlier, or raise limits.time");
  } else if (f.duration && *f.duration > limits.time - f.at) {
    r.diag().Add(r.PosOrTable("duration"),
                 absl::StrCat(r.Name("duration"), ": the fault would end after limits.time (",
                              limits.time.ToString(), ")"),
                 "shorten the fault, or raise limits.time");
  }
}

// Marks every fault key known, so that a fault with no usable kind reports
// that problem alone.
void MarkFaultKeysKnown(TableReader& r) {
  for (const Field& f : schema::FaultSection().fields) r.MarkKnown(f.key);
}

void ReadFault(TableReader& r, const FaultContext& ctx, FaultSpec* f) {
  const size_t before = r.diag().count();
  const Field& kind_field = *schema::Find(schema::FaultSection(), "kind");
  if (const toml::node* k = r.Get("kind"); k != nullptr && k->is_string()) {
    if (std::optional<std::string_view> hint =
            schema::RenamedFaultKindHint(*k->value<std::string>())) {
      r.diag().Add(PosOf(k->source()),
                   absl::StrCat(r.Name("kind"), " = ", Shown(*k->value<std::string>()), " is gone"),
                   std::string(*hint));
      MarkFaultKeysKnown(r);
      r.Finish();
      return;
    }
  }
  const bool has_kind = r.Has("kind");
  const size_t before_kind = r.diag().count();
  ReadField(r, kind_field, f);
  const bool kind_read = has_kind && Clean(r.diag(), before_kind);
  const bool has_at = r.Has("at");
  ReadField(r, *schema::Find(schema::FaultSection(), "at"), f);
  const schema::FaultKind* kind = kind_read ? &schema::FaultKindOf(f->kind) : nullptr;
  if (kind == nullptr) {
    if (!has_kind) {
      r.diag().Add(r.pos(), absl::StrCat(r.Name("kind"), " is missing"),
                   absl::StrCat("add kind = one of: ", Join(kind_field.values)));
    }
    MarkFaultKeysKnown(r);
    r.Finish();
    return;
  }
  if (!has_at) {
    r.diag().Add(r.pos(), absl::StrCat(r.Name("at"), " is missing"),
                 "say when the fault starts, e.g. at = \"2s\"");
  }
  const size_t before_fields = r.diag().count();
  ReadFaultFields(r, *kind, f);
  if (Clean(r.diag(), before_fields)) CheckRequired(r, *kind, *f);
  r.Finish();
  if (!Clean(r.diag(), before)) return;
  if (ctx.cluster != nullptr) CheckFaultAgainstCluster(r, *kind, *f, *ctx.cluster);
  if (ctx.limits != nullptr) CheckFaultTiming(r, *f, *ctx.limits);
  if (!Clean(r.diag(), before) || ctx.cluster == nullptr || ctx.producer == nullptr) return;
  if (f->kind != fault_models::FaultKind::kInjectError) return;
  if (std::optional<FaultProblem> p = InjectErrorProblem(*f, *ctx.producer, *ctx.cluster)) {
    r.diag().Add(r.PosOrTable(p->field), absl::StrCat(r.Name(p->field), ": ", p->what), p->hint);
  }
}

void ReadFaults(TableReader& top, const FaultContext& ctx, std::vector<FaultSpec>* faults) {
  const toml::array* array = top.TableArray("faults", kMaxFaults);
  if (array == nullptr) return;
  faults->reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    TableReader r = top.Sub(*(*array)[i].as_table(), absl::StrCat("faults[", i, "]"),
                            schema::FaultSection().header);
    FaultSpec f;
    ReadFault(r, ctx, &f);
    faults->push_back(std::move(f));
  }
}

// ---------------------------------------------------------------------------
// [expect].

// A verdict and its check; `name` is the table's name in messages and
// `verdict` the member the verdict is read into.
template <typename V>
void ReadVerdictAndCheck(TableReader& r, const Section& s, std::string_view name, void* section,
                         const V* verdict) {
  const bool has_verdict = r.Has("verdict");
  const bool has_check = r.Has("check");
  ReadField(r, *schema::Find(s, "verdict"), section);
  ReadFields(r, s, section, {"verdict"});
  if (!has_verdict) {
    r.diag().Add(r.pos(), absl::StrCat(Av(name), ".verdict is missing"),
                 absl::StrCat("add verdict = one of: ", Join(schema::Verdicts())));
  } else if (*verdict == checks::Verdict::kPass && r.Has("signature")) {
    r.diag().Add(r.PosOrTable("signature"),
                 absl::StrCat(Av(name), ".signature is set but the verdict is \"pass\""),
                 "a passing run has no failure signature: remove signature");
  } else if (*verdict == checks::Verdict::kPass && has_check) {
    r.diag().Add(r.PosOrTable("check"),
                 absl::StrCat(Av(name), ".check is set but the verdict is \"pass\""),
                 "a passing run fails no check: remove check, or expect a failing verdict");
  }
}

// [expect] and its [expect.profiles."NAME"] tables; `own` is the
// scenario's producer.profile (which the top of [expect] is about).
void ReadExpect(TableReader& r, std::string_view own, ExpectSpec* e) {
  ReadVerdictAndCheck(r, schema::ExpectSection(), "expect", e, &e->verdict);
  if (!e->known_on.empty()) {
    if (absl::StatusOr<KnownOn> k = ParseKnownOn(e->known_on); !k.ok()) {
      r.diag().Add(r.PosOrTable("known_on"),
                   absl::StrCat("expect.known_on: ", k.status().message()),
                   "write CLIENT@VERSIONS: a client and versions or ranges, comma-separated");
    } else if (e->signature.empty()) {
      r.diag().Add(r.PosOrTable("known_on"), "expect.known_on is set but signature is not",
                   "known_on says where a signature is known: add signature, or remove known_on");
    }
  }
  if (const toml::table* profiles = r.Table("profiles")) {
    for (auto&& [key, node] : *profiles) {
      const std::string name(key.str());
      const Pos pos = PosOf(key.source());
      if (!internal::Contains(schema::Profiles(), name)) {
        r.diag().Add(pos, absl::StrCat("unknown profile ", Shown(name), " in [expect.profiles]"),
                     absl::StrCat("use one of: ", Join(schema::Profiles())));
        continue;
      }
      if (name == own) {
        r.diag().Add(
            pos, absl::StrCat("[expect.profiles.\"", name, "\"] names the scenario's own profile"),
            "its verdict goes in [expect] itself; list other profiles here");
        continue;
      }
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        r.diag().Add(
            pos, absl::StrCat("expect.profiles.", name, " must be a table"),
            absl::StrCat("write [expect.profiles.\"", name, "\"] with verdict (and check)"));
        continue;
      }
      const std::string path = absl::StrCat("expect.profiles.\"", name, "\"");
      TableReader pr = r.Sub(*table, path, schema::ProfileExpectSection().header);
      ProfileExpectSpec p;
      p.profile = name;
      ReadVerdictAndCheck(pr, schema::ProfileExpectSection(), path, &p, &p.verdict);
      pr.Finish();
      e->profiles.push_back(std::move(p));
    }
    std::sort(e->profiles.begin(), e->profiles.end(),
              [](const ProfileExpectSpec& a, const ProfileExpectSpec& b) {
                return a.profile < b.profile;
              });
  }
  r.Finish();
}

// [clients."NAME"]: each a client family's own settings, free-form keys of
// that client's option names (the client checks them: a name it refuses is
// the trial's job error), values a string, an integer or a boolean, kept
// as text.
bool IsSettingKey(std::string_view key) {
  if (key.empty() || key.size() > kClientKeyBytesMax) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return internal::IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '_' || c == '-';
  });
}

void ReadClients(TableReader& top, std::vector<ClientSpec>* out) {
  const toml::table* clients = top.Table("clients");
  if (clients == nullptr) return;
  for (auto&& [key, node] : *clients) {
    const std::string name(key.str());
    const Pos pos = PosOf(key.source());
    if (!internal::Contains(schema::ClientNames(), name)) {
      top.diag().Add(pos, absl::StrCat("unknown client ", Shown(name), " in [clients]"),
                     absl::StrCat("use one of: ", Join(schema::ClientNames())));
      continue;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      top.diag().Add(pos, absl::StrCat("clients.", name, " must be a table"),
                     absl::StrCat("write [clients.", name, "] with the client's own settings, ",
                                  "such as \"linger.ms\" = 5"));
      continue;
    }
    if (table->size() > kClientSettingsMax) {
      top.diag().Add(pos, absl::StrCat("clients.", name, " has ", table->size(), " settings"),
                     absl::StrCat("at most ", kClientSettingsMax));
      continue;
    }
    ClientSpec c;
    c.name = name;
    for (auto&& [skey, value] : *table) {
      const std::string k(skey.str());
      const Pos at = PosOf(value.source());
      if (!IsSettingKey(k)) {
        top.diag().Add(PosOf(skey.source()),
                       absl::StrCat("clients.", name, ": bad setting name ", Shown(k)),
                       absl::StrCat("letters, digits, '.', '_' and '-', at most ",
                                    kClientKeyBytesMax, " bytes"));
        continue;
      }
      std::string text;
      if (const auto* str = value.as_string()) {
        text = str->get();
      } else if (const auto* i = value.as_integer()) {
        text = absl::StrCat(i->get());
      } else if (const auto* b = value.as_boolean()) {
        text = b->get() ? "true" : "false";
      } else {
        top.diag().Add(at,
                       absl::StrCat("clients.", name, ".", k,
                                    " must be a string, an integer "
                                    "or a boolean"),
                       "write the client's value as it documents it, e.g. \"5\" or 5");
        continue;
      }
      if (text.size() > kClientValueBytesMax || text.find('\0') != std::string::npos) {
        top.diag().Add(at, absl::StrCat("clients.", name, ".", k, " is too long or holds a NUL"),
                       absl::StrCat("at most ", kClientValueBytesMax, " bytes"));
        continue;
      }
      c.settings.emplace_back(k, std::move(text));
    }
    std::sort(c.settings.begin(), c.settings.end());
    out->push_back(std::move(c));
  }
  std::sort(out->begin(), out->end(),
            [](const ClientSpec& a, const ClientSpec& b) { return a.name < b.name; });
}

// ---------------------------------------------------------------------------
// The top level.

// Reads a section table through `read`; absent sections keep defaults.
// Returns whether no problem was found in it.
template <typename Fn>
bool ReadSection(TableReader& top, std::string_view key, std::string_view header, Fn read) {
  const size_t before = top.diag().count();
  if (const toml::table* t = top.Table(key)) {
    TableReader r = top.Sub(*t, std::string(key), header);
    read(r);
  }
  return Clean(top.diag(), before);
}

// `end` is the end of the file, where a missing section is reported (so
// that any concrete problem in the file comes first).
void ReadTop(TableReader& top, Pos end, Scenario* s) {
  ReadFields(top, schema::Top(), s);
  ReadSection(top, "schedule", schema::ScheduleSection().header, [&](TableReader& r) {
    ReadFields(r, schema::ScheduleSection(), &s->schedule);
    CheckSchedule(r, s->schedule);
    r.Finish();
  });
  const bool producer_ok =
      ReadSection(top, "producer", schema::ProducerSection().header, [&](TableReader& r) {
        ReadFields(r, schema::ProducerSection(), &s->producer);
        CheckProducer(r, s->producer);
        r.Finish();
      });
  const bool limits_ok =
      ReadSection(top, "limits", schema::LimitsSection().header, [&](TableReader& r) {
        ReadFields(r, schema::LimitsSection(), &s->limits);
        r.Finish();
      });
  if (!top.Has("cluster")) {
    top.diag().Add(end, "the scenario has no [cluster] section",
                   "add [cluster] with brokers, and a [[cluster.topics]] entry");
  }
  const bool cluster_ok = ReadSection(top, "cluster", schema::ClusterSection().header,
                                      [&](TableReader& r) { ReadCluster(r, &s->cluster); }) &&
                          top.Has("cluster");
  ReadSection(top, "network", "[network]", [&](TableReader& r) { ReadNetwork(r, &s->network); });
  const ClusterSpec* cluster = cluster_ok ? &s->cluster : nullptr;
  const LimitsSpec* limits = limits_ok ? &s->limits : nullptr;
  ReadSection(top, "workload", schema::WorkloadSection().header,
              [&](TableReader& r) { ReadWorkload(r, cluster, limits, &s->workload); });
  ReadFaults(top, FaultContext{cluster, limits, producer_ok ? &s->producer : nullptr}, &s->faults);
  ReadSection(top, "checks", schema::ChecksSection().header, [&](TableReader& r) {
    ReadFields(r, schema::ChecksSection(), &s->checks);
    r.Finish();
  });
  ReadSection(top, "buggify", schema::BuggifySection().header, [&](TableReader& r) {
    ReadFields(r, schema::BuggifySection(), &s->buggify);
    r.Finish();
  });
  ReadClients(top, &s->clients);
  ReadSection(top, "expect", schema::ExpectSection().header, [&](TableReader& r) {
    s->expect.emplace();
    ReadExpect(r, sarama::ProfileName(s->producer.profile), &*s->expect);
  });
  top.Finish();
}

// ---------------------------------------------------------------------------
// Printing.

// `key = value` for a set field.
void PrintField(const Field& f, const void* section, std::string* out) {
  const Value v = f.get(section);
  if (std::holds_alternative<std::monostate>(v)) return;
  absl::StrAppend(out, Av(f.key), " = ", schema::FormatValue(f, v), "\n");
}

// The section's comment, a "# " line each, after a blank line.
void PrintComment(const Section& s, std::string* out) {
  if (s.comment.empty()) return;
  absl::StrAppend(out, "\n");
  for (const absl::string_view line : absl::StrSplit(Av(s.comment), '\n')) {
    absl::StrAppend(out, "# ", line, "\n");
  }
}

// The section's comment and header, then every field but those in `skip`.
void PrintSection(const Section& s, const void* section, std::string* out,
                  std::initializer_list<std::string_view> skip = {}) {
  PrintComment(s, out);
  absl::StrAppend(out, Av(s.header), "\n");
  for (const Field& f : s.fields) {
    if (std::find(skip.begin(), skip.end(), f.key) == skip.end()) PrintField(f, section, out);
  }
}

void PrintFault(const FaultSpec& f, std::string* out) {
  const schema::FaultKind* kind = &schema::FaultKindOf(f.kind);
  absl::StrAppend(out, "\n", Av(schema::FaultSection().header), "\n");
  for (const Field& field : schema::FaultSection().fields) {
    if (!schema::Reads(*kind, field.key)) continue;
    if (field.key == "partition") continue;  // printed with its topic
    if (field.key == "topic") {
      if (f.topic.empty()) continue;  // every partition
      PrintField(field, &f, out);
      PrintField(*schema::Find(schema::FaultSection(), "partition"), &f, out);
      continue;
    }
    PrintField(field, &f, out);
  }
}

void PrintExpect(const ExpectSpec& e, std::string* out) {
  PrintSection(schema::ExpectSection(), &e, out, {"check", "signature", "known_on"});
  if (!e.check.empty()) PrintField(*schema::Find(schema::ExpectSection(), "check"), &e, out);
  if (!e.signature.empty()) {
    PrintField(*schema::Find(schema::ExpectSection(), "signature"), &e, out);
  }
  if (!e.known_on.empty()) {
    PrintField(*schema::Find(schema::ExpectSection(), "known_on"), &e, out);
  }
  for (const ProfileExpectSpec& p : e.profiles) {
    absl::StrAppend(
        out, "\n# The same scenario with producer.profile = ", internal::TomlQuote(p.profile),
        ".\n[expect.profiles.", internal::TomlQuote(p.profile), "]\n");
    PrintField(*schema::Find(schema::ProfileExpectSection(), "verdict"), &p, out);
    if (!p.check.empty()) {
      PrintField(*schema::Find(schema::ProfileExpectSection(), "check"), &p, out);
    }
    if (!p.signature.empty()) {
      PrintField(*schema::Find(schema::ProfileExpectSection(), "signature"), &p, out);
    }
  }
}

}  // namespace

std::span<const std::string_view> BuggifySiteNames() { return schema::BuggifySites(); }

absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view origin) {
  Diagnostics diag(origin);
  Pos pos;
  if (std::optional<internal::Problem> p = internal::CheckInputBounds(text, &pos)) {
    diag.Add(pos, std::move(*p));
    return diag.ToStatus();
  }
  std::optional<toml::table> table = internal::ParseToml(text, &diag);
  if (!table) return diag.ToStatus();
  Scenario s;
  TableReader top(*table, "", schema::Top().header, &diag, AllSectionKeys());
  const auto newlines = std::count(text.begin(), text.end(), '\n');
  ReadTop(top, Pos{static_cast<uint32_t>(newlines + 1), 1}, &s);
  if (diag.count() > 0) return diag.ToStatus();
  return s;
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path) {
  // One byte past the limit, so that ParseScenario reports the size.
  std::string text;
  RETURN_IF_ERROR(base::ReadFileUpTo(path, internal::kMaxInputBytes, &text));
  return ParseScenario(text, path);
}

std::string PrintScenario(const Scenario& s) {
  std::string out =
      "# A prodsim scenario, in canonical form: every field is written (see\n"
      "# scenarios/README.md). Durations take a unit: ns, us, ms, s, m, h.\n";
  for (const Field& f : schema::Top().fields) PrintField(f, &s, &out);
  PrintSection(schema::ScheduleSection(), &s.schedule, &out, {"tape"});
  if (!s.schedule.tape.empty()) {
    absl::StrAppend(&out, "# The random policy's first decisions, a byte each (hex).\n");
    PrintField(*schema::Find(schema::ScheduleSection(), "tape"), &s.schedule, &out);
  }
  PrintSection(schema::ProducerSection(), &s.producer, &out);
  PrintSection(schema::ClusterSection(), &s.cluster, &out);
  for (const TopicSpec& t : s.cluster.topics) {
    absl::StrAppend(&out, "\n");
    PrintSection(schema::TopicSection(), &t, &out);
  }
  const schema::LatencyKind* latency = &schema::LatencyKindOf(s.network.latency.kind);
  PrintComment(schema::LatencySection(), &out);
  absl::StrAppend(&out, Av(schema::LatencySection().header), "\n");
  for (const Field& f : schema::LatencySection().fields) {
    if (LatencyReads(*latency, f.key)) PrintField(f, &s.network.latency, &out);
  }
  PrintSection(schema::WorkloadSection(), &s.workload, &out);
  if (!s.faults.empty()) PrintComment(schema::FaultSection(), &out);
  for (const FaultSpec& f : s.faults) PrintFault(f, &out);
  if (!s.buggify.sites.empty()) PrintSection(schema::BuggifySection(), &s.buggify, &out);
  if (s.checks != ChecksSpec{}) PrintSection(schema::ChecksSection(), &s.checks, &out);
  PrintSection(schema::LimitsSection(), &s.limits, &out);
  for (const ClientSpec& c : s.clients) {
    absl::StrAppend(&out, "\n# ", c.name, "'s own settings, for a real ", c.name,
                    " (wire mode), after those mapped from [producer].\n[clients.", c.name, "]\n");
    for (const auto& [k, v] : c.settings) {
      absl::StrAppend(&out, internal::TomlQuote(k), " = ", internal::TomlQuote(v), "\n");
    }
  }
  if (s.expect) PrintExpect(*s.expect, &out);
  return out;
}

}  // namespace scenarios
