#!/usr/bin/env python3
"""Where a prodsim command's instructions go, by component (issue 30).

Runs COMMAND under callgrind (instruction counts: exact and independent of
the machine's load; perf has no counters on the VMs we measure on), then
sums each function's own (exclusive) instructions into the component its
symbol belongs to, and prints one row per component with its share, its
instructions per step (a step is one scheduler resumption: the calls of
sim::Scheduler::PickNext) and per run (--runs).

  bench/cost_breakdown.py [--runs N] [--keep FILE] -- COMMAND...

Inlined code counts where it was inlined (a std::vector access inside the
go policy is the go policy's); out-of-line library code (absl's btree
walks, shared_ptr, strings, the allocator) is attributed by the types it
works on where those say which component it serves, else its own row.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

# The first rule that matches a symbol names its component; order matters.
RULES = [
    ("kernel: go policy (runtime/proc.go)",
     r"sim::Scheduler::(ReadyPs|PickP|DrawP|AnyRunnable|SyncPointGo|FindRunnable|Stealable|"
     r"ProgramIdle|NetpollHolds|NetpollWake|RunqPut|ReadyGo|PutReadyGo|ChargeCpu|StealFrom)\b"),
    ("kernel: timers and sleeps",
     r"sim::Scheduler::(FireNextTimer|PushKey|PushTimer|At|Cancel|AdvanceClock|AdvanceTo)\b|"
     r"TimerEntry|TimerLater|sim::Scheduler::SleepAwaiter|sim::After\b|sim::Sleep"),
    ("kernel: channels, select, sync",
     r"^sim::SelectAwaiter|^sim::internal::WaitQueue|sim::Chan<|sim::ChanBase|sim::Notifier|"
     r"sim::Mutex|sim::RWMutex|sim::WaitGroup|sim::Cond|sim::OpAwaiter|sim::MakeChan|sim::Select\b"),
    ("kernel: run loop, steps, trace",
     r"^sim::Scheduler::|^sim::Goroutine|^sim::Task|^sim::RunQueue|sim::Trace|sim::Prng|sim::Buggify|"
     r"sim::Fnv1a64"),
    ("allocation (sim/alloc free lists, malloc)",
     r"\(anonymous namespace\)::Allocate\(|thread_cache|^operator new|^operator delete|malloc|"
     r"^free$|_int_free|cfree|unlink_chunk"),
    ("network (sim/net)", r"^net::"),
    ("cluster: replication (followers' fetchers, ISR, HW)",
     r"^kafka::Cluster::(ReplicaFetcher|FetchFrom|FetchHasWork|UpdateHighWatermark|CheckIsrShrink|"
     r"Truncate|RebuildProducerState)\b"),
    ("cluster: requests served (produce, metadata, init pid)",
     r"^kafka::Cluster::(Serve|Handle\w*|Respond\w*|Accept\w*)\b|^kafka::ProducerState|"
     r"^kafka::Encode|^kafka::Decode"),
    ("cluster: controller, views, the rest", r"^kafka::"),
    ("producer (Sarama's goroutines)", r"^sarama::"),
    ("fault schedule, scenario, runner", r"^scenarios::"),
    ("checks and signatures", r"^checks::"),
    ("explore (generation, summary)", r"^search::|^cli::"),
    ("libc copies and strings", r"memmove|memcpy|memset|memchr|strlen|memcmp|strcmp|"
     r"basic_string|char_traits"),
    ("shared_ptr counts", r"_Sp_counted|shared_ptr"),
    ("containers (absl btree, hash)", r"absl::|btree|raw_hash"),
]
# Out-of-line container code working on a component's types: that component.
TYPE_HINTS = [
    ("cluster: controller, views, the rest", r"map_params<kafka::"),
    ("producer (Sarama's goroutines)", r"sarama::"),
]


def classify(symbol):
  for name, rx in RULES:
    # The kernel's rows take only the kernel's own functions: a goroutine's
    # body that works on channels is its layer's.
    if name.startswith("kernel") and not symbol.startswith("sim::"):
      continue
    if re.search(rx, symbol):
      if name.startswith("containers") or name.startswith("libc") or name.startswith("shared_ptr"):
        for hint, hrx in TYPE_HINTS:
          if re.search(hrx, symbol):
            return hint
      return name
  return "other (libstdc++, loader, ...)"


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--runs", type=int, default=0, help="runs the command does, for per-run figures")
  ap.add_argument("--keep", help="keep the callgrind output file here")
  ap.add_argument("--top", type=int, default=0, help="also list the N costliest symbols")
  ap.add_argument("command", nargs=argparse.REMAINDER)
  args = ap.parse_args()
  cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
  if not cmd:
    ap.error("give the command after --")
  out = args.keep or tempfile.mktemp(prefix="callgrind.", dir=os.environ.get("TMPDIR", "/tmp"))
  r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
  if not os.path.exists(out):
    sys.exit("cost_breakdown: callgrind wrote nothing:\n" + r.stderr[-2000:])
  text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", out],
                        capture_output=True, text=True, check=True).stdout
  calls = subprocess.run(["callgrind_annotate", "--tree=caller", "--threshold=100", "--auto=no", out],
                         capture_output=True, text=True, check=True).stdout
  steps = 0
  for block in calls.split("\n\n"):
    lines = block.splitlines()
    if not any(re.search(r"\*\s.*sim::Scheduler::PickNext\(\)", l) for l in lines):
      continue
    # One block per source file PickNext's code comes from (inlining): each
    # lists the same callers; the calls are the largest block's.
    n = sum(int(m.group(1).replace(",", "")) for m in
            (re.search(r"<\s.*\(([\d,]+)x\)", l) for l in lines) if m)
    steps = max(steps, n)
  total = 0
  by = collections.Counter()
  sym_cost = collections.Counter()
  for line in text.splitlines():
    m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
    if not m or "PROGRAM TOTALS" in line:
      continue
    n = int(m.group(1).replace(",", ""))
    rest = m.group(2)
    symbol = rest.split(":", 1)[1] if ":" in rest else rest
    symbol = re.sub(r"\s*\[/[^\]]*\]\s*$", "", symbol).strip()
    total += n
    by[classify(symbol)] += n
    sym_cost[symbol] += n
  if not args.keep:
    os.unlink(out)
  print(f"command: {' '.join(cmd)}")
  print(f"instructions: {total:,}" + (f"; runs {args.runs:,}: {total / args.runs / 1e6:.2f} M per run"
                                       if args.runs else "")
        + (f"; steps {steps:,}: {total / steps:,.0f} per step" if steps else ""))
  print(f"| component | share | per step | per run |")
  print(f"|---|---|---|---|")
  for name, n in by.most_common():
    per_step = f"{n / steps:,.0f}" if steps else ""
    per_run = f"{n / args.runs / 1e3:,.0f} k" if args.runs else ""
    print(f"| {name} | {100 * n / total:.1f}% | {per_step} | {per_run} |")
  for symbol, n in sym_cost.most_common(args.top):
    print(f"  {100 * n / total:5.1f}%  {symbol[:150]}")


if __name__ == "__main__":
  main()
