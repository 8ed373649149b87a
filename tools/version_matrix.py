#!/usr/bin/env python3
"""The version matrix: every real finding against every version of its client.

  tools/version_matrix.py --prodsim build/default/bin/prodsim [--trials N]
      [--jobs N] [--json OUT.json] [--update docs/findings/README.md]
      [--clients librdkafka,kafkajs,sarama,java,franz-go] [FILE...]
  tools/version_matrix.py --from-json OUT.json --update docs/findings/README.md

Each scenario file of scenarios/known/real (or the FILEs given) names its
client and the versions its finding is known on ([expect] known_on); it is
run against every version of that client the project can install (VERSIONS
below: what CMake builds, what the drivers build on demand from a registry,
and what clients/librdkafka/build-version.sh put in the versions directory),
and, as "other clients", against the Java client and franz-go, whose drivers
take any scenario. A client in simulated time whose replays are exact
(kafkajs, Java) runs once: one run is every run. Sarama in simulated time
(near replays) and the wall-clock clients (librdkafka, franz-go) run --trials
trials, --jobs at once; the machine's load is recorded beside them.

A cell is "fails K/N" when K of N runs reached a failing verdict (with the
signatures seen), "passes N/N" otherwise, "not built" when the version could
not be installed. --update rewrites the table between the markers
<!-- version-matrix:begin --> and <!-- version-matrix:end --> of the given
Markdown file; --json writes every cell with its verdict lines, and
--from-json writes the table again from such a file (each file's known_on
read anew) without running anything.

Exit codes: 0 the matrix was made; 64 bad usage; 66 a file or the markers
missing; 70 prodsim could not be run at all.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

# The versions each client's driver can be given, oldest first: CMake builds
# the defaults; Java (Maven Central) and franz-go (the module proxy) are built
# on first use; librdkafka's beyond Debian's 2.0.2 are looked for in the
# versions directory (clients/librdkafka/build-version.sh).
VERSIONS = {
    "librdkafka": ["2.0.2", "2.3.0", "2.12.0", "2.15.1", "2.16.0"],
    "kafkajs": ["2.2.4"],
    "kafkajs-fixes": ["2.3.1"],
    "sarama": ["1.42.1", "1.61.1", "1.62.0", "main"],
    # The newest patch of each minor line Maven Central serves here that the
    # driver builds (clients/java/README.md).
    "java": ["2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.3", "2.7.2", "2.8.2", "3.0.2", "3.1.2",
             "3.2.3", "3.3.2", "3.4.1", "3.5.2", "3.6.2", "3.7.2", "3.8.1", "3.9.2", "4.0.2",
             "4.1.2", "4.2.2", "4.3.2", "4.4.0"],
    # The newest patch of each minor line the module proxy serves.
    "franz-go": ["1.0.0", "1.7.0", "1.14.0", "1.15.3", "1.16.1", "1.17.1", "1.18.1", "1.19.5",
                 "1.20.7", "1.21.7", "1.22.3"],
}
# Drivers in simulated time and whether one run is every run.
SIMULATED = {"kafkajs": True, "kafkajs-fixes": True, "java": True, "sarama": False}
# The drivers that take every scenario, run as "other clients" on each file:
# the newest patch of each major line.
OTHERS = {"java": ["2.8.2", "3.9.1", "4.4.0"], "franz-go": ["1.22.3"]}
BEGIN = "<!-- version-matrix:begin -->"
END = "<!-- version-matrix:end -->"

RUN_LINE = re.compile(r": (pass|[a-z-]+)(?: \[([a-z-]+)\])?(?: (\S+))? client=")
TRIAL_LINE = re.compile(r": trial \d+/\d+: (pass|[a-z-]+)(?: \[([a-z-]+)\])?(?: (\S+))? client=")


def load():
    return os.getloadavg()[0]


def known_on(path):
    """The [expect] known_on text of a scenario file, "" if none."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'\s*known_on\s*=\s*"([^"]*)"', line)
            if m:
                return m.group(1)
    return ""


def clients_of(text):
    return [part.split("@", 1)[0].strip() for part in text.split(";") if "@" in part]


def version_available(client, version, versions_dir):
    """Whether a version can be run without a long source build."""
    if client == "librdkafka" and version != "2.0.2":
        return os.path.exists(os.path.join(versions_dir, f"librdkafka-{version}", "lib",
                                           "librdkafka.so.1"))
    if client == "sarama" and version == "main":
        return bool(os.environ.get("PRODSIM_SARAMA_MAIN")) or os.path.exists(
            os.path.join(versions_dir, "sarama-main", "prodsim-sarama"))
    return True


def run_cell(args, path, client, version):
    name = f"{client}@{version}"
    simulated = client in SIMULATED
    exact = SIMULATED.get(client, False)
    trials = 1 if exact else args.trials
    before = load()
    started = time.monotonic()
    if simulated:
        lines, parse = [], RUN_LINE
        for _ in range(trials):
            p = subprocess.run([args.prodsim, "run", path, f"--client={name}"], capture_output=True,
                               text=True, timeout=args.cell_timeout)
            lines.append(p.stdout.splitlines()[0] if p.stdout else
                         (p.stderr.strip().splitlines() or ["no output"])[-1])
    else:
        p = subprocess.run([args.prodsim, "real", path, f"--client={name}", f"--trials={trials}",
                            f"--jobs={args.jobs}"], capture_output=True, text=True,
                           timeout=args.cell_timeout)
        lines, parse = [l for l in p.stdout.splitlines() if ": trial " in l], TRIAL_LINE
        if not lines:
            lines = [(p.stderr.strip().splitlines() or ["no output"])[-1]]
    # The file as the repository names it, not this machine's path.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/"
    lines = [line.replace(root, "") for line in lines]
    verdicts, signatures = [], {}
    for line in lines:
        m = parse.search(line)
        if not m:
            verdicts.append("not-built" if "not built" in line or "could not be built" in line
                            else "harness-error")
            continue
        verdicts.append(m.group(1))
        if m.group(1) != "pass":
            sig = m.group(3) or m.group(2) or m.group(1)
            signatures[sig] = signatures.get(sig, 0) + 1
    return {
        "client": client, "version": version, "runs": len(verdicts),
        "clock": "simulated" if simulated else "wall",
        "failed": sum(v not in ("pass", "not-built", "harness-error") for v in verdicts),
        # The client refused the file's settings (a job error: an option this
        # version lacks or limits differently), or prodsim could not run it.
        "harness_errors": sum(v == "harness-error" for v in verdicts),
        "not_built": all(v == "not-built" for v in verdicts),
        "signatures": signatures, "load_before": round(before, 2),
        "wall_s": round(time.monotonic() - started, 1), "lines": lines,
    }


def cell_text(c):
    if c["not_built"]:
        return "not built"
    if c.get("harness_errors", 0) == c["runs"]:
        return "harness error (the client refused the file's settings)"
    if c["failed"] == 0 and c.get("harness_errors", 0) > 0:
        return f"passes {c['runs'] - c['harness_errors']}/{c['runs']}, harness error {c['harness_errors']}"
    if c["failed"] == 0:
        return f"passes {c['runs']}/{c['runs']}"
    sigs = ", ".join(f"`{s}`" + (f" {n}" if n != c["failed"] else "")
                     for s, n in sorted(c["signatures"].items()))
    return f"fails {c['failed']}/{c['runs']} ({sigs})"


def markdown(results, args, started, finished):
    out = [
        f"Generated by `tools/version_matrix.py --prodsim PRODSIM --trials={args.trials} "
        f"--jobs={args.jobs} --update docs/findings/README.md` on {started:%Y-%m-%d}, "
        f"{started:%H:%M}-{finished:%H:%M} UTC, on a {os.cpu_count()}-core machine (its 1-minute "
        "load before each cell is in the JSON, `--json`). Simulated time: kafkajs and Java run "
        "once (exact replays), Sarama's near replays and the wall-clock clients (librdkafka, "
        f"franz-go) {args.trials} trials each. \"not built\": the version is not installed here "
        "(clients/librdkafka/build-version.sh, PRODSIM_SARAMA_MAIN).",
        "",
        "| file | known on | fails on | passes on | other clients |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        fails = [f"{c['client']} {c['version']}: {cell_text(c)[6:]}" for c in r["own"]
                 if not c["not_built"] and c["failed"] > 0]
        passes = [f"{c['client']} {c['version']}: {c['runs']}/{c['runs']}" for c in r["own"]
                  if not c["not_built"] and c["failed"] == 0 and not c.get("harness_errors")]
        refused = [f"{c['client']} {c['version']}" for c in r["own"]
                   if not c["not_built"] and c["failed"] == 0 and c.get("harness_errors")]
        missing = [f"{c['client']} {c['version']}" for c in r["own"] if c["not_built"]]
        others = [f"{c['client']} {c['version']}: {cell_text(c)}" for c in r["others"]]
        row = [f"[{os.path.basename(r['file'])}](../../{r['file']})", f"`{r['known_on']}`",
               "; ".join(fails) or "none", "; ".join(passes) or "none",
               "; ".join(others) or "-"]
        if missing:
            row[3] += f" (not built: {', '.join(missing)})"
        if refused:
            row[3] += f" (harness error, the file's settings refused: {', '.join(refused)})"
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--prodsim", required=True)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--json")
    ap.add_argument("--update")
    ap.add_argument("--clients", default="librdkafka,kafkajs,kafkajs-fixes,sarama,java,franz-go",
                    help="which clients' columns to run (the others are left out)")
    ap.add_argument("--no-others", action="store_true", help="skip the other-clients column")
    ap.add_argument("--cell-timeout", type=int, default=1800)
    ap.add_argument("--from-json", help="write the table from an earlier --json run (each file's "
                    "known_on read again) instead of running anything")
    ap.add_argument("files", nargs="*")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(64 if e.code else 0)
    if args.trials < 1 or args.jobs < 1:
        print("version_matrix.py: --trials and --jobs are at least 1", file=sys.stderr)
        sys.exit(64)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = args.files or sorted(
        os.path.join("scenarios/known/real", f)
        for f in os.listdir(os.path.join(root, "scenarios/known/real")) if f.endswith(".toml"))
    if args.update:
        try:
            with open(args.update, encoding="utf-8") as f:
                doc = f.read()
        except OSError as e:
            print(f"version_matrix.py: {args.update}: {e.strerror}", file=sys.stderr)
            sys.exit(66)
        if BEGIN not in doc or END not in doc:
            print(f"version_matrix.py: {args.update}: no {BEGIN} ... {END} markers",
                  file=sys.stderr)
            sys.exit(66)
    versions_dir = os.environ.get("PRODSIM_VERSIONS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "prodsim", "versions")
    wanted = set(args.clients.split(","))
    started = datetime.datetime.now(datetime.timezone.utc)
    results = []
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            earlier = json.load(f)
        args.trials, args.jobs = earlier["trials"], earlier["jobs"]
        results = earlier["results"]
        for r in results:
            r["known_on"] = known_on(os.path.join(root, r["file"]))
        files = []
        started = datetime.datetime.fromisoformat(earlier["started"])
    unbuilt = set()  # (client, version) whose build failed once: not tried again
    for path in files:
        full = path if os.path.isabs(path) else os.path.join(root, path)
        if not os.path.exists(full):
            print(f"version_matrix.py: {path}: no such file", file=sys.stderr)
            sys.exit(66)
        on = known_on(full)
        own_clients = clients_of(on)
        if not own_clients:
            print(f"version_matrix.py: {path}: [expect] has no known_on: its client is unknown",
                  file=sys.stderr)
            sys.exit(66)
        r = {"file": os.path.relpath(full, root), "known_on": on, "own": [], "others": []}
        for client in own_clients:
            if client not in wanted:
                continue
            for v in VERSIONS[client]:
                if not version_available(client, v, versions_dir) or (client, v) in unbuilt:
                    r["own"].append({"client": client, "version": v, "not_built": True,
                                     "runs": 0, "failed": 0, "signatures": {}, "lines": []})
                    continue
                c = run_cell(args, full, client, v)
                if c["not_built"]:
                    unbuilt.add((client, v))
                print(f"{r['file']}: {client} {v}: {cell_text(c)} (load {c['load_before']}, "
                      f"{c['wall_s']} s)", file=sys.stderr, flush=True)
                r["own"].append(c)
        if not args.no_others:
            for client, vs in OTHERS.items():
                if client in own_clients or client not in wanted:
                    continue
                for v in vs:
                    c = run_cell(args, full, client, v)
                    print(f"{r['file']}: (other) {client} {v}: {cell_text(c)}", file=sys.stderr,
                          flush=True)
                    r["others"].append(c)
        results.append(r)
    finished = (datetime.datetime.fromisoformat(earlier["finished"]) if args.from_json
                else datetime.datetime.now(datetime.timezone.utc))
    table = markdown(results, args, started, finished)
    if args.json and not args.from_json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"started": started.isoformat(), "finished": finished.isoformat(),
                       "trials": args.trials, "jobs": args.jobs, "cores": os.cpu_count(),
                       "results": results}, f, indent=1)
    if args.update:
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.update, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n" + table + END + tail)
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
