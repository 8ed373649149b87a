#!/usr/bin/env python3
"""What the brokers did in a trial, from `prodsim real --history=FILE`.

Prints one line per history file: per partition of the final logs, the
records, the batches, the producer (id, epoch) pairs and whether each
pair's sequences run from 0 without a gap or an overlap; the Produce
answers by error code and how many were duplicate answers; the fault and
connection counts. The broker-fidelity table of docs/fidelity.md compares
these lines for the same scenario on the simulated cluster and on real
Kafka brokers (`--cluster=kafka@VERSION`).

    tools/broker_outcomes.py sim-history.txt real-history.txt
"""
import collections
import re
import sys

FINAL = re.compile(r"^final (\S+) offset=(\d+) pid=(-?\d+) epoch=(-?\d+) seq=(-?\d+) ids=(\S*)")
RESPONSE = re.compile(r"^t=\S+ broker-\d+ Produce response corr=\d+ (\S+) (?:\(epoch=\S+ seq=\S+\) )?"
                      r"(\w+) offset=(-?\d+)(.*)$")


def summarize(path):
    partitions = collections.OrderedDict()
    answers = collections.Counter()
    duplicates = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FINAL.match(line)
            if m:
                tp, _, pid, epoch, seq, ids = m.groups()
                n = len(ids.split(",")) if ids else 0
                p = partitions.setdefault(tp, {"records": 0, "batches": 0, "pairs": {}})
                p["records"] += n
                p["batches"] += 1
                runs = p["pairs"].setdefault((int(pid), int(epoch)), [])
                runs.append((int(seq), n))
                continue
            m = RESPONSE.match(line)
            if m:
                answers[m.group(2)] += 1
                if "duplicate" in m.group(4):
                    duplicates += 1
    parts = []
    for tp, p in partitions.items():
        pairs = []
        for (pid, epoch), runs in sorted(p["pairs"].items()):
            expect, ok = 0, True
            for seq, n in runs:
                ok &= seq == expect
                expect = seq + n
            pairs.append(f"e{epoch}{'' if ok else '!'}")
        parts.append(f"{tp} {p['records']}r/{p['batches']}b [{' '.join(pairs)}]")
    codes = ", ".join(f"{code} {n}" for code, n in sorted(answers.items()))
    return f"{'; '.join(parts)} | answers: {codes} ({duplicates} duplicate)"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv[1:]:
        try:
            print(f"{path}: {summarize(path)}")
        except OSError as e:
            print(f"broker_outcomes.py: {path}: {e.strerror}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
