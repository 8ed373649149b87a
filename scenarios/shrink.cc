#include "scenarios/shrink.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "checks/check.h"
#include "scenarios/schema.h"

namespace scenarios {
namespace {

std::string FaultText(const FaultSpec& f) {
  std::string out = absl::StrCat(std::string(fault_models::FaultKindName(f.kind)), " at ",
                                 f.at.ToString(), " on broker ", f.broker);
  if (f.duration) absl::StrAppend(&out, " for ", f.duration->ToString());
  if (!f.topic.empty()) absl::StrAppend(&out, " ", f.topic, "/", f.partition);
  return out;
}

// The j-th alternative to `seed` (a pure function; fits TOML's integers).
uint64_t OtherSeed(uint64_t seed, uint64_t j) {
  uint64_t x = seed + uint64_t{0x9e3779b97f4a7c15} * j;
  x = (x ^ (x >> 30)) * uint64_t{0xbf58476d1ce4e5b9};
  x = (x ^ (x >> 27)) * uint64_t{0x94d049bb133111eb};
  return (x ^ (x >> 31)) & kSeedMax;
}

// One search: the current smallest failing scenario, and the run budget.
class Shrinker {
 public:
  Shrinker(Scenario s, const RunOutput& first, const ShrinkOptions& options)
      : current_(std::move(s)),
        verdict_(first.verdict),
        check_(first.failing_check),
        signature_(SignatureName(first)),
        options_(options) {}

  // Whether a run still fails the way the search keeps: the same verdict,
  // deciding check and signature (the mechanism, not only the symptom).
  bool Keeps(const RunOutput& out) const {
    if (options_.check.empty()) {
      return out.verdict == verdict_ && out.failing_check == check_ &&
             SignatureName(out) == signature_;
    }
    return std::any_of(out.violations.begin(), out.violations.end(),
                       [&](const checks::Violation& v) { return v.check == options_.check; });
  }

  const Scenario& current() const { return current_; }
  int64_t runs() const { return runs_; }
  bool exhausted() const {
    return runs_ >= options_.max_runs || (options_.stop && options_.stop());
  }
  // With options_.trials: how many of `outs` keep the failure.
  int Kept(const std::vector<RunOutput>& outs) const {
    return static_cast<int>(
        std::count_if(outs.begin(), outs.end(), [&](const RunOutput& o) { return Keeps(o); }));
  }
  const std::vector<std::string>& steps() const { return steps_; }
  const ShrinkOptions& options() const { return options_; }

  // Applies `change` to a copy of the current scenario; keeps the copy if it
  // is a valid scenario that still fails the same way.
  template <typename Change>
  bool Try(const std::string& what, Change&& change) {
    if (exhausted()) return false;
    Scenario candidate = current_;
    change(candidate);
    if (candidate == current_) return false;
    // Only what a scenario file can say: the candidate must print and parse
    // back to itself (a shrunk file must replay).
    absl::StatusOr<Scenario> round = ParseScenario(PrintScenario(candidate), "<shrink>");
    if (!round.ok() || !(*round == candidate)) return false;
    if (options_.trials) {
      const std::vector<RunOutput> outs = options_.trials(candidate);
      runs_ += static_cast<int64_t>(outs.size());
      if (Kept(outs) < options_.needed) return false;
      current_ = std::move(candidate);
      steps_.push_back(what);
      if (options_.log) options_.log(what);
      return true;
    }
    // The seed decides the interleaving, and any change of the scenario
    // gives a different one; so a change may also take another seed.
    const uint64_t seed = candidate.seed;
    for (int j = 0; j < options_.seeds_per_step && !exhausted(); ++j) {
      if (j > 0) candidate.seed = OtherSeed(seed, static_cast<uint64_t>(j));
      ++runs_;
      const RunOutput out = RunScenario(candidate);
      if (!Keeps(out)) continue;
      const std::string step =
          j == 0 ? what : absl::StrCat(what, " (with seed ", candidate.seed, ")");
      current_ = std::move(candidate);
      steps_.push_back(step);
      if (options_.log) options_.log(step);
      return true;
    }
    return false;
  }

  // Descend for a field read by `get` and written by `set`.
  template <typename Get, typename Set>
  bool DescendValue(const std::string& name, int64_t floor, Get&& get, Set&& set) {
    bool any = false;
    int64_t value = get(current_);
    for (int64_t step = std::max<int64_t>((value - floor) / 2, 1); step >= 1 && value > floor;
         step /= 2) {
      for (;;) {
        const int64_t target = std::max(value - step, floor);
        if (target == value) break;
        if (!Try(absl::StrCat(name, " ", value, " -> ", target),
                 [&](Scenario& c) { set(c, target); })) {
          break;
        }
        value = target;
        any = true;
      }
      if (step == 1) break;
    }
    return any;
  }

  // Lowers an integer field toward `floor` by halving steps: tries
  // value - step for step = (value - floor) / 2 ... 1, keeping each success.
  // `fixup` repairs what the smaller value leaves dangling.
  template <typename Get, typename Fixup = void (*)(Scenario&)>
  bool Descend(
      const std::string& name, int64_t floor, Get&& get, Fixup fixup = [](Scenario&) {}) {
    bool any = false;
    int64_t value = get(current_);
    for (int64_t step = std::max<int64_t>((value - floor) / 2, 1); step >= 1 && value > floor;
         step /= 2) {
      for (;;) {
        const int64_t target = std::max(value - step, floor);
        if (target == value) break;
        const bool ok = Try(absl::StrCat(name, " ", value, " -> ", target), [&](Scenario& c) {
          get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(target);
          fixup(c);
        });
        if (!ok) break;
        value = target;
        any = true;
      }
      if (step == 1) break;
    }
    return any;
  }

 private:
  Scenario current_;
  Verdict verdict_;
  std::string check_;
  std::string signature_;
  ShrinkOptions options_;
  int64_t runs_ = 0;
  std::vector<std::string> steps_;
};

// Delta debugging over the fault list: remove chunks, halving their size.
bool RemoveFaults(Shrinker& sh) {
  bool any = false;
  size_t chunk = std::max<size_t>(sh.current().faults.size() / 2, 1);
  while (!sh.current().faults.empty() && !sh.exhausted()) {
    bool removed = false;
    for (size_t start = 0; start < sh.current().faults.size();) {
      const size_t n = std::min(chunk, sh.current().faults.size() - start);
      std::vector<std::string> names;
      for (size_t i = start; i < start + n; ++i) {
        names.push_back(FaultText(sh.current().faults[i]));
      }
      const bool ok =
          sh.Try(absl::StrCat("removed fault", n > 1 ? "s " : " ", absl::StrJoin(names, "; ")),
                 [&](Scenario& c) {
                   c.faults.erase(c.faults.begin() + static_cast<ptrdiff_t>(start),
                                  c.faults.begin() + static_cast<ptrdiff_t>(start + n));
                 });
      if (ok) {
        removed = any = true;
      } else {
        start += n;
      }
    }
    if (chunk == 1 && !removed) break;
    if (!removed) chunk = std::max<size_t>(chunk / 2, 1);
  }
  return any;
}

// Halves a duration of the current scenario (through `field`, which gives
// null when it is unset) while the scenario keeps failing, down to 1 ms.
template <typename Field>
bool Halve(Shrinker& sh, const std::string& what, Field field) {
  bool any = false;
  for (;;) {
    const Duration* d = field(sh.current());
    if (d == nullptr || d->nanos() <= 1000000) break;
    const Duration half = Duration::Nanos(d->nanos() / 2);
    if (!sh.Try(absl::StrCat(what, " ", d->ToString(), " -> ", half.ToString()),
                [&](Scenario& c) { *field(c) = half; })) {
      break;
    }
    any = true;
  }
  return any;
}

// Shorter, earlier and weaker faults.
bool SimplifyFaults(Shrinker& sh) {
  bool any = false;
  for (size_t i = 0; i < sh.current().faults.size() && !sh.exhausted(); ++i) {
    auto fault = [i](Scenario& c) -> FaultSpec& { return c.faults[i]; };
    const std::string name =
        absl::StrCat("fault ", i + 1, " (",
                     std::string(fault_models::FaultKindName(sh.current().faults[i].kind)), ")");
    any |= Halve(sh, name + " duration", [i](auto& c) {
      auto& f = c.faults[i];
      return f.duration ? &*f.duration : nullptr;
    });
    any |= Halve(sh, name + " at", [i](auto& c) { return &c.faults[i].at; });
    if (sh.current().faults[i].count > 1) {
      any |= sh.Try(absl::StrCat(name, " count ", sh.current().faults[i].count, " -> 1"),
                    [&](Scenario& c) { fault(c).count = 1; });
    }
    any |= Halve(sh, name + " extra", [i](auto& c) { return &c.faults[i].extra; });
    if (!sh.current().faults[i].heal) {
      any |= sh.Try(absl::StrCat(name, " heals"), [&](Scenario& c) { fault(c).heal = true; });
    }
  }
  return any;
}

Duration Half(Duration d) { return Duration::Nanos(d.nanos() / 2); }

// The whole timeline at once: the faults earlier, or everything (faults,
// their durations and the message interval) twice as fast, so that a
// shorter workload still overlaps the faults.
bool CompressTime(Shrinker& sh) {
  bool any = false;
  while (!sh.current().faults.empty()) {
    Duration first = sh.current().faults[0].at;
    for (const FaultSpec& f : sh.current().faults) first = std::min(first, f.at);
    const Duration shift = Half(first);
    if (shift.nanos() < 1000000) break;
    if (!sh.Try(absl::StrCat("every fault ", shift.ToString(), " earlier"), [&](Scenario& c) {
          for (FaultSpec& f : c.faults) f.at = f.at - shift;
        })) {
      break;
    }
    any = true;
  }
  while (sh.current().workload.interval.nanos() >= 2000) {
    if (!sh.Try(absl::StrCat("timeline twice as fast (interval ",
                             sh.current().workload.interval.ToString(), " -> ",
                             Half(sh.current().workload.interval).ToString(), ")"),
                [&](Scenario& c) {
                  c.workload.interval = Half(c.workload.interval);
                  if (c.workload.close_at && !sh.options().keep_close_at) {
                    c.workload.close_at = Half(*c.workload.close_at);
                  }
                  for (FaultSpec& f : c.faults) {
                    f.at = Half(f.at);
                    if (f.duration) f.duration = Half(*f.duration);
                  }
                })) {
      break;
    }
    any = true;
  }
  return any;
}

// The fields of a section that shrink toward their default (the schema's
// kToDefault and kLowerToDefault), each tried once: "PREFIX KEY -> default".
// `section` gives the section struct of a scenario.
template <typename Section>
bool FieldsToDefault(Shrinker& sh, const schema::Section& s, std::string_view prefix,
                     std::string_view default_word, Section section) {
  using T = std::remove_reference_t<decltype(section(std::declval<Scenario&>()))>;
  const T defaults{};
  bool any = false;
  for (const schema::Field& f : s.fields) {
    if (f.shrink != schema::Shrink::kToDefault && f.shrink != schema::Shrink::kLowerToDefault) {
      continue;
    }
    Scenario copy = sh.current();
    const schema::Value now = f.get(&section(copy));
    const schema::Value def = f.get(&defaults);
    if (now == def) continue;
    if (f.shrink == schema::Shrink::kLowerToDefault && !(def < now)) continue;
    any |= sh.Try(absl::StrCat(std::string(prefix), " ", std::string(f.key), " -> ",
                               std::string(default_word)),
                  [&](Scenario& c) { f.set(&section(c), def); });
  }
  return any;
}

// The integer fields of a section that descend toward a floor (the
// schema's kDescend), in order.
template <typename Section>
bool FieldsDescend(Shrinker& sh, const schema::Section& s, Section section) {
  bool any = false;
  for (const schema::Field& f : s.fields) {
    if (f.shrink != schema::Shrink::kDescend) continue;
    PRODSIM_ASSERT_MSG(f.type == schema::Type::kInt, "only integers descend");
    any |= sh.DescendValue(
        std::string(f.key), f.floor,
        [&](const Scenario& c) {
          Scenario copy = c;
          return std::get<int64_t>(f.get(&section(copy)));
        },
        [&](Scenario& c, int64_t v) { f.set(&section(c), v); });
  }
  return any;
}

bool CutWorkload(Shrinker& sh) {
  auto workload = [](Scenario& c) -> WorkloadSpec& { return c.workload; };
  bool any = FieldsDescend(sh, schema::WorkloadSection(), workload);
  any |= FieldsToDefault(sh, schema::WorkloadSection(), "workload", "default", workload);
  if (!sh.options().keep_close_at) {
    any |= sh.Try("workload close_at removed", [](Scenario& c) { c.workload.close_at.reset(); });
  }
  any |= sh.Try("workload topics -> all", [](Scenario& c) { c.workload.topics.clear(); });
  return any;
}

// Drops the faults that name what a smaller cluster no longer has.
void DropDanglingFaults(Scenario& c) {
  std::erase_if(c.faults, [&](const FaultSpec& f) {
    if (f.broker >= c.cluster.brokers) return true;
    if (f.topic.empty()) return false;
    auto t = std::find_if(c.cluster.topics.begin(), c.cluster.topics.end(),
                          [&](const TopicSpec& x) { return x.name == f.topic; });
    return t == c.cluster.topics.end() || f.partition >= t->partitions;
  });
  std::erase_if(c.workload.topics, [&](const std::string& name) {
    return std::none_of(c.cluster.topics.begin(), c.cluster.topics.end(),
                        [&](const TopicSpec& x) { return x.name == name; });
  });
}

bool CutCluster(Shrinker& sh) {
  bool any = false;
  for (size_t i = 0;
       sh.current().cluster.topics.size() > 1 && i < sh.current().cluster.topics.size();) {
    const std::string name = sh.current().cluster.topics[i].name;
    if (sh.Try(absl::StrCat("removed topic ", name), [&](Scenario& c) {
          c.cluster.topics.erase(c.cluster.topics.begin() + static_cast<ptrdiff_t>(i));
          DropDanglingFaults(c);
        })) {
      any = true;
    } else {
      ++i;
    }
  }
  for (size_t i = 0; i < sh.current().cluster.topics.size(); ++i) {
    const std::string t = sh.current().cluster.topics[i].name;
    any |= sh.Descend(
        absl::StrCat("topic ", t, " partitions"), 1,
        [i](Scenario& c) -> int32_t& { return c.cluster.topics[i].partitions; },
        DropDanglingFaults);
  }
  const ClusterSpec defaults;
  any |= sh.Try("min_insync_replicas -> 1", [](Scenario& c) { c.cluster.min_insync_replicas = 1; });
  for (size_t i = 0; i < sh.current().cluster.topics.size(); ++i) {
    const std::string t = sh.current().cluster.topics[i].name;
    any |= sh.Descend(
        absl::StrCat("topic ", t, " replication_factor"), sh.current().cluster.min_insync_replicas,
        [i](Scenario& c) -> int32_t& { return c.cluster.topics[i].replication_factor; });
  }
  int32_t floor = 1;
  for (const TopicSpec& t : sh.current().cluster.topics)
    floor = std::max(floor, t.replication_factor);
  any |= sh.Descend(
      "brokers", floor, [](Scenario& c) -> int32_t& { return c.cluster.brokers; },
      DropDanglingFaults);
  any |= FieldsToDefault(sh, schema::ClusterSection(), "cluster", "default",
                         [](Scenario& c) -> ClusterSpec& { return c.cluster; });
  return any;
}

// Each producer setting back to Sarama's default (unset).
bool DefaultConfig(Shrinker& sh) {
  bool any = FieldsToDefault(sh, schema::ProducerSection(), "producer", "Sarama's default",
                             [](Scenario& c) -> ProducerSpec& { return c.producer; });
  // A real client's own settings: each left out (the client's default).
  for (size_t k = 0; k < sh.current().clients.size(); ++k) {
    for (size_t i = 0; i < sh.current().clients[k].settings.size();) {
      const ClientSpec& c = sh.current().clients[k];
      const std::string what =
          absl::StrCat("clients.", c.name, ".", c.settings[i].first, " -> the client's default");
      if (sh.Try(what, [&](Scenario& t) {
            auto& settings = t.clients[k].settings;
            settings.erase(settings.begin() + static_cast<ptrdiff_t>(i));
          })) {
        any = true;
      } else {
        ++i;
      }
    }
  }
  return any;
}

bool RemovePerturbations(Shrinker& sh) {
  bool any = false;
  for (size_t i = 0; i < sh.current().buggify.sites.size();) {
    const std::string site = sh.current().buggify.sites[i];
    if (sh.Try(absl::StrCat("perturbation site ", site, " off"), [&](Scenario& c) {
          c.buggify.sites.erase(c.buggify.sites.begin() + static_cast<ptrdiff_t>(i));
        })) {
      any = true;
    } else {
      ++i;
    }
  }
  return any;
}

bool DefaultScheduleAndNetwork(Shrinker& sh) {
  const ScheduleSpec sd;
  bool any = false;
  // A decoded fuzzer finding carries the random schedule's tape: shorter
  // first, by halves (what the tape no longer says, the seed decides).
  while (!sh.current().schedule.tape.empty()) {
    const size_t half = sh.current().schedule.tape.size() / 2;
    if (!sh.Try(absl::StrCat("schedule tape -> ", half, " byte(s)"),
                [&](Scenario& c) { c.schedule.tape.resize(half); })) {
      break;
    }
    any = true;
  }
  // One way only: pct -> random with the default settings -> fifo.
  if (sh.current().schedule.policy != sim::Policy::kFifo) {
    any |= sh.Try("schedule -> random with defaults", [&](Scenario& c) { c.schedule = sd; });
    any |= sh.Try("schedule -> fifo", [&](Scenario& c) {
      c.schedule = sd;
      c.schedule.policy = sim::Policy::kFifo;
    });
  }
  any |= sh.Try("network latency -> default", [](Scenario& c) { c.network = NetworkSpec{}; });
  return any;
}

}  // namespace

std::string DescribeSize(const Scenario& s) {
  int64_t partitions = 0;
  for (const TopicSpec& t : s.cluster.topics) partitions += t.partitions;
  const ProducerSpec& p = s.producer;
  const int settings = p.idempotent.has_value() + p.net_max_open_requests.has_value() +
                       p.net_read_timeout.has_value() + p.net_dial_timeout.has_value() +
                       p.required_acks.has_value() + p.timeout.has_value() +
                       p.retry_max.has_value() + p.retry_backoff.has_value() +
                       p.return_successes.has_value() + p.return_errors.has_value() +
                       p.flush_messages.has_value() + p.flush_bytes.has_value() +
                       p.flush_frequency.has_value() + p.flush_max_messages.has_value() +
                       p.max_message_bytes.has_value() + p.channel_buffer_size.has_value() +
                       p.metadata_retry_max.has_value() + p.metadata_retry_backoff.has_value() +
                       p.metadata_single_flight.has_value() + p.version.has_value();
  return absl::StrCat(s.faults.size(), " fault(s), ", s.workload.messages, " message(s), ",
                      s.cluster.topics.size(), " topic(s) with ", partitions, " partition(s), ",
                      s.cluster.brokers, " broker(s), ", settings, " producer setting(s), ",
                      s.buggify.sites.size(), " perturbation site(s)",
                      s.schedule.tape.empty()
                          ? ""
                          : absl::StrCat(", ", s.schedule.tape.size(), " schedule tape byte(s)"));
}

namespace {

// The run that decides what the search keeps: the model's run, or, over
// the wire, the first of the K trials that fails (the most common failing
// way would be better; the first is what a person saw).
RunOutput FirstRun(const Scenario& s, const ShrinkOptions& options,
                   std::vector<RunOutput>* trials) {
  if (!options.trials) return RunScenario(s);
  *trials = options.trials(s);
  for (RunOutput& o : *trials) {
    if (o.verdict != Verdict::kPass && o.verdict != Verdict::kHarnessError) return o;
  }
  return trials->empty() ? RunOutput{} : trials->front();
}

}  // namespace

ShrinkResult Shrink(const Scenario& original, const ShrinkOptions& options) {
  ShrinkResult result;
  std::vector<RunOutput> trials;
  const RunOutput first = FirstRun(original, options, &trials);
  result.runs = options.trials ? static_cast<int64_t>(trials.size()) : 1;
  result.verdict = first.verdict;
  result.failing_check = first.failing_check;
  result.scenario = original;
  if (first.verdict == Verdict::kPass || first.verdict == Verdict::kHarnessError) return result;
  Shrinker sh(original, first, options);
  if (!sh.Keeps(first)) return result;  // the asked-for check does not fail
  if (options.trials) {
    result.first_kept = sh.Kept(trials);
    if (result.first_kept < options.needed) return result;
  }
  result.reproduced = true;
  for (bool changed = true; changed && !sh.exhausted();) {
    changed = RemoveFaults(sh);
    changed |= CompressTime(sh);
    changed |= CutWorkload(sh);
    changed |= CutCluster(sh);
    changed |= DefaultConfig(sh);
    changed |= SimplifyFaults(sh);
    changed |= RemovePerturbations(sh);
    changed |= DefaultScheduleAndNetwork(sh);
  }
  result.scenario = sh.current();
  result.runs += sh.runs();
  result.steps = sh.steps();
  // What the shrunk scenario reaches (with --check, it may differ from the
  // original's verdict: only the asked-for check was kept).
  const RunOutput last = FirstRun(result.scenario, options, &trials);
  result.runs += options.trials ? static_cast<int64_t>(trials.size()) : 1;
  if (options.trials) result.last_kept = sh.Kept(trials);
  result.verdict = last.verdict;
  result.failing_check = last.failing_check;
  result.signature = SignatureName(last);
  result.scenario.expect = ExpectOf(last);
  return result;
}

}  // namespace scenarios
