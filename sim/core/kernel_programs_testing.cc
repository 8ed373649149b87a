#include "sim/core/kernel_programs_testing.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "sim/core/chan.h"

namespace sim::testing {
namespace {

using Chans = std::vector<std::unique_ptr<Chan<int>>>;

Task<void> RunOps(Scheduler* s, Chans* chans, const std::vector<ProgOp>* ops) {
  for (const ProgOp& op : *ops) {
    Chan<int>* c = (*chans)[static_cast<size_t>(op.chan)].get();
    Chan<int>* c2 = (*chans)[static_cast<size_t>(op.chan2)].get();
    std::optional<int> v;
    int x = op.arg;
    switch (op.kind) {
      case ProgOp::kSend: co_await c->Send(op.arg); break;
      case ProgOp::kRecv: v = co_await c->Recv(); break;
      case ProgOp::kSelect: co_await Select(*s, RecvCase(c, &v), SendCase(c2, &x)); break;
      case ProgOp::kSelectDefault:
        co_await SelectOrDefault(*s, RecvCase(c, &v), RecvCase(c2, &v));
        break;
      case ProgOp::kSleep: co_await s->Sleep(Duration::Millis(op.arg)); break;
      case ProgOp::kYield: co_await s->Yield(); break;
      case ProgOp::kClose:
        if (!c->closed()) c->Close();
        break;
    }
    if (s->crashed()) co_return;
  }
}

}  // namespace

Program RandomProgram(Prng& prng) {
  Program p;
  const int n_chans = static_cast<int>(prng.UniformInt(1, 4));
  for (int i = 0; i < n_chans; ++i) {
    p.capacities.push_back(static_cast<int>(prng.UniformInt(0, 2)));
  }
  const int n_tasks = static_cast<int>(prng.UniformInt(2, 5));
  for (int t = 0; t < n_tasks; ++t) {
    std::vector<ProgOp> ops;
    const int n_ops = static_cast<int>(prng.UniformInt(1, 12));
    for (int i = 0; i < n_ops; ++i) {
      ProgOp op;
      // Closes are rare so that most programs run to their end.
      const int64_t roll = prng.UniformInt(0, 99);
      op.kind = roll < 30   ? ProgOp::kSend
                : roll < 60 ? ProgOp::kRecv
                : roll < 75 ? ProgOp::kSelect
                : roll < 82 ? ProgOp::kSelectDefault
                : roll < 90 ? ProgOp::kSleep
                : roll < 98 ? ProgOp::kYield
                            : ProgOp::kClose;
      op.chan = static_cast<int>(prng.UniformInt(0, n_chans - 1));
      op.chan2 = static_cast<int>(prng.UniformInt(0, n_chans - 1));
      op.arg = static_cast<int>(prng.UniformInt(0, 5));
      ops.push_back(op);
    }
    p.tasks.push_back(std::move(ops));
  }
  return p;
}

std::string DescribeProgram(const Program& p) {
  static constexpr const char* kNames[] = {"send",  "recv",  "select", "select-default",
                                           "sleep", "yield", "close"};
  std::string out;
  for (size_t c = 0; c < p.capacities.size(); ++c) {
    absl::StrAppend(&out, "chan c", c, " cap ", p.capacities[c], "\n");
  }
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    absl::StrAppend(&out, "task t", t, ":");
    for (const ProgOp& op : p.tasks[t]) {
      absl::StrAppend(&out, " ", kNames[op.kind], "(c", op.chan, ",c", op.chan2, ",", op.arg, ")");
    }
    out += "\n";
  }
  return out;
}

RunResult RunProgram(const Program& p, const SchedulerOptions& options) {
  Scheduler s(options);
  Chans chans;
  for (size_t c = 0; c < p.capacities.size(); ++c) {
    chans.push_back(
        std::make_unique<Chan<int>>(s, absl::StrCat("c", c), static_cast<size_t>(p.capacities[c])));
  }
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    s.Go(absl::StrCat("t", t), RunOps(&s, &chans, &p.tasks[t]));
  }
  return s.Run();
}

namespace {

Task<void> CheckThenAct(Chan<int>* handoff, int* counter) {
  const int seen = *counter;  // check
  co_await handoff->Send(seen);
  *counter = seen + 1;  // act, on a stale read if another task ran between
}

}  // namespace

bool CheckThenActLosesUpdate(const SchedulerOptions& options, std::string* trace,
                             uint64_t* digest) {
  SchedulerOptions o = options;
  o.record_trace = trace != nullptr;
  Scheduler s(o);
  Chan<int> handoff(s, "handoff", 2);
  int counter = 0;
  s.Go("a", CheckThenAct(&handoff, &counter));
  s.Go("b", CheckThenAct(&handoff, &counter));
  const RunResult r = s.Run();
  PRODSIM_ASSERT(r.outcome == Outcome::kAllDone);
  if (trace != nullptr) *trace = s.RenderTrace();
  if (digest != nullptr) *digest = r.digest;
  return counter != 2;
}

}  // namespace sim::testing
