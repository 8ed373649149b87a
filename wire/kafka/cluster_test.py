#!/usr/bin/env python3
"""Drives a kafka-cluster built by build.sh through its protocol (README.md).

    cluster_test.py OUT_DIR

Starts a 3-broker cluster with --advertise ports served by a small TCP
forwarder (in this script) that plays the fault proxy, produces through it
with Kafka's Java producer (dev.prodsim.cluster.TestProducer: idempotent,
then transactional, the header prodsim-id on every record), runs every
command (leaders, crash/restart, stop/restart, move-leader, pause/resume,
shrink-isr, dump, quit) and checks the answers, then checks that no process
and no directory of the cluster is left; a second run checks that the
brokers die with the supervisor on the end of stdin and on kill -9. Prints
timings and memory, and "N passed, N failed" last; exits non-zero on a
failure.
"""
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PASSED = 0
FAILED = 0


def check(cond, what):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        print("  ok   " + what, flush=True)
    else:
        FAILED += 1
        print("  FAIL " + what, flush=True)
    return cond


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Forwarder:
    """Listens on 127.0.0.1:listen and pipes each connection to 127.0.0.1:target."""

    def __init__(self, listen, target):
        self.target = target
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", listen))
        self.srv.listen(64)
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            threading.Thread(target=self.pipe, args=(c, u), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        socks = [a, b]
        try:
            while True:
                r, _, _ = select.select(socks, [], [], 60)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()

    def close(self):
        self.closed = True
        self.srv.close()


class Supervisor:
    def __init__(self, out_dir, cluster_dir, advertise, extra, log):
        self.log = open(log, "w")
        self.cmd = [os.path.join(out_dir, "kafka-cluster"), "--dir", cluster_dir, "--brokers", "3",
                    "--advertise", ",".join(map(str, advertise)), "--topic", "t0:3:3,t1:1:3",
                    "--min-insync", "2"] + extra
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, text=True, bufsize=1)
        self.buf = ""

    def line(self, timeout):
        end = time.monotonic() + timeout
        while "\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no line from kafka-cluster in %.0f s" % timeout)
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536).decode()
                if not chunk:
                    raise EOFError("kafka-cluster closed stdout")
                self.buf += chunk
        line, self.buf = self.buf.split("\n", 1)
        return line

    def until_end(self, timeout):
        lines = []
        while True:
            l = self.line(timeout)
            if l == "end":
                return lines
            lines.append(l)

    def send(self, command, timeout=180, multi=False):
        t0 = time.monotonic()
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        first = self.line(timeout)
        rest = self.until_end(timeout) if multi and first.startswith("ok") else []
        dt = time.monotonic() - t0
        print("  > %-28s %s (%.1f s)" % (command, first, dt), flush=True)
        return first, rest, dt


def proc_tree(pid):
    """pid and its descendants."""
    out = [pid]
    try:
        kids = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    except OSError:
        return out
    for k in kids.split():
        out += proc_tree(int(k))
    return out


def usage(pid):
    """(rss_mib, pss_mib, cpu_seconds) of one process (PSS: shared pages, such as a CDS archive, split)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024
        pss = rss
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                pss = int(re.search(r"Pss:\s+(\d+)", f.read()).group(1)) / 1024
        except (OSError, AttributeError):
            pass
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return rss, pss, cpu
    except (OSError, AttributeError):
        return 0, 0, 0


def report_usage(sup_pid, label):
    total_rss = total_pss = total_cpu = 0
    for pid in proc_tree(sup_pid):
        rss, pss, cpu = usage(pid)
        try:
            with open("/proc/%d/cmdline" % pid) as f:
                cmd = f.read().split("\0")
        except OSError:
            continue
        what = os.path.basename(os.path.dirname(cmd[-2])) if "dev.prodsim.cluster.BrokerMain" in cmd \
            else "supervisor" if "dev.prodsim.cluster.Main" in cmd else os.path.basename(cmd[0])
        print("  %s: %-22s pid %-7d RSS %5.0f MiB  PSS %5.0f MiB  CPU %5.1f s" % (label, what, pid, rss, pss, cpu))
        total_rss += rss
        total_pss += pss
        total_cpu += cpu
    print("  %s: total RSS %.0f MiB, PSS %.0f MiB, CPU %.1f s" % (label, total_rss, total_pss, total_cpu), flush=True)


def leaders(sup):
    first, rest, _ = sup.send("leaders", multi=True)
    out = {}
    for l in rest:
        m = re.fullmatch(r"(\S+) (\d+) leader=(-?\d+) isr=([\d,]*) replicas=([\d,]*)", l)
        if m:
            out[(m.group(1), int(m.group(2)))] = (int(m.group(3)), [int(x) for x in m.group(4).split(",") if x],
                                                  [int(x) for x in m.group(5).split(",") if x])
    return first, out


def await_leaders(sup, cond, timeout, what):
    end = time.monotonic() + timeout
    while True:
        first, parts = leaders(sup)
        if first == "ok" and cond(parts):
            return check(True, what)
        if time.monotonic() > end:
            return check(False, what + " (last: %s)" % parts)
        time.sleep(1)


def produce(out_dir, port, topic, partitions, first, last, txn=None):
    cmd = ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
           "-Dlog4j.configuration=file:/dev/null", "-cp", os.path.join(out_dir, "lib", "*"),
           "dev.prodsim.cluster.TestProducer", "127.0.0.1:%d" % port, topic, str(partitions), str(first), str(last)]
    if txn:
        cmd.append(txn)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    sent = [l for l in r.stdout.splitlines() if l.startswith("sent ")]
    print("  produced %d..%d to %s%s: exit %d, %d acknowledged (%.1f s)" % (
        first, last, topic, " in a transaction" if txn else "", r.returncode, len(sent), time.monotonic() - t0))
    if r.returncode != 0:
        print(r.stderr[-3000:])
    return r.returncode == 0 and len(sent) == last - first + 1


def parse_dump(lines):
    batches, hws = [], {}
    for l in lines:
        f = l.split(" ")
        if f[0] == "batch" and len(f) == 13:
            batches.append(dict(broker=int(f[1]), topic=f[2], partition=int(f[3]), base=int(f[4]), last=int(f[5]),
                                pid=int(f[6]), epoch=int(f[7]), bseq=int(f[8]), lseq=int(f[9]), txn=f[10] == "1",
                                control=f[11] == "1", ids=f[12].split(",")))
        elif f[0] == "hw" and len(f) == 5:
            hws[(int(f[1]), f[2], int(f[3]))] = int(f[4])
        else:
            check(False, "dump line parses: " + l)
    return batches, hws


def gone(cluster_dir, ports):
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", cluster_dir], capture_output=True, text=True).stdout.split()
    check(not left, "no process of the cluster is left (pgrep -f %s: %s)" % (cluster_dir, left))
    check(not os.path.exists(cluster_dir), "the cluster's directory is removed")
    ss = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
    listening = [p for p in ports if re.search(r"127\.0\.0\.1:%d\s" % p, ss)]
    check(not listening, "no broker port is listening (%s)" % listening)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cluster_test.py OUT_DIR")
    out_dir = os.path.abspath(sys.argv[1])
    jars = [j for j in os.listdir(os.path.join(out_dir, "lib")) if re.fullmatch(r"kafka_2\.13-.*\.jar", j)]
    version = jars[0][len("kafka_2.13-"):-4]
    zk = int(version.split(".")[0]) < 3
    print("kafka-cluster %s (%s) from %s" % (version, "ZooKeeper" if zk else "KRaft", out_dir), flush=True)
    work = tempfile.mkdtemp(prefix="kc-test-")
    cluster_dir = os.path.join(work, "cluster")
    advertise = free_ports(3)
    keep = ["--keep-dir"] if os.environ.get("KC_TEST_KEEP_DIR") else []
    keep += os.environ.get("KC_TEST_ARGS", "").split()
    sup = Supervisor(out_dir, cluster_dir, advertise, ["--replica-lag-ms", "3000", "--zk-session-ms", "6000"] + keep,
                     os.path.join(work, "supervisor.err"))
    forwarders = []
    try:
        t0 = time.monotonic()
        first = sup.line(150)
        check(first == "ready", "starts: " + first)
        if first != "ready":
            print(open(os.path.join(work, "supervisor.err")).read()[-6000:])
            return
        blines = sup.until_end(10)
        ready_s = time.monotonic() - t0
        print("  ready in %.1f s" % ready_s)
        real = {}
        for l in blines:
            m = re.fullmatch(r"broker (\d+) 127\.0\.0\.1:(\d+)", l)
            if check(m is not None, "broker line: " + l):
                real[int(m.group(1))] = int(m.group(2))
        check(sorted(real) == [0, 1, 2], "brokers 0, 1, 2")
        report_usage(sup.p.pid, "at ready")
        ports = list(real.values())
        for i in range(3):
            forwarders.append(Forwarder(advertise[i], real[i]))

        first, parts = leaders(sup)
        check(first == "ok" and len(parts) == 4, "leaders: 4 partitions")
        check(all(l >= 0 and sorted(isr) == sorted(rep) and len(rep) == 3 for l, isr, rep in parts.values()),
              "leaders: every partition led, ISR = replicas = 3 brokers")

        check(produce(out_dir, advertise[0], "t0", 3, 1, 30), "idempotent produce 1..30 through the forwarders")
        check(produce(out_dir, advertise[1], "t1", 1, 31, 40, txn="prodsim-test-txn"),
              "transactional produce 31..40")

        # crash 1 / restart 1
        first, _, _ = sup.send("crash 1")
        check(first == "ok", "crash 1")
        first, _, _ = sup.send("crash 1")
        check(first.startswith("error"), "crash 1 again: an error")
        first, _, dt = sup.send("restart 1")
        check(first == "ok", "restart 1")
        await_leaders(sup, lambda ps: all(sorted(isr) == [0, 1, 2] for _, isr, _ in ps.values()), 90,
                      "after restart 1: every ISR full again")

        # move-leader
        first, _, _ = sup.send("move-leader t0 0 2")
        check(first == "ok", "move-leader t0 0 2")
        first, parts = leaders(sup)
        check(parts.get(("t0", 0), (None,))[0] == 2, "t0 0 led by 2: %s" % (parts.get(("t0", 0)),))
        check(parts.get(("t0", 0), (0, 0, [0]))[2][0] == 2, "t0 0: 2 is the preferred replica")
        first, _, _ = sup.send("move-leader t0 0 7")
        check(first.startswith("error"), "move-leader to a broker that does not exist: an error")

        # pause / resume, shrink-isr
        first, _, _ = sup.send("pause 0")
        check(first == "ok", "pause 0")
        first, _, _ = sup.send("resume 0")
        check(first == "ok", "resume 0")
        first, _, dt = sup.send("shrink-isr t0 1 0", timeout=240)
        check(first == "ok", "shrink-isr t0 1 0 (a follower of t0 1)")
        await_leaders(sup, lambda ps: 0 not in ps[("t0", 1)][1], 30, "t0 1: 0 out of the ISR in describeTopics")
        first, _, _ = sup.send("resume 0")
        check(first == "ok", "resume 0")
        await_leaders(sup, lambda ps: all(sorted(isr) == [0, 1, 2] for _, isr, _ in ps.values()), 90,
                      "after resume 0: every ISR full again")

        # stop / restart
        first, _, _ = sup.send("stop 2")
        check(first == "ok", "stop 2")
        await_leaders(sup, lambda ps: all(l != 2 for l, _, _ in ps.values()), 60, "after stop 2: 2 leads nothing")
        first, _, _ = sup.send("restart 2")
        check(first == "ok", "restart 2")
        await_leaders(sup, lambda ps: all(sorted(isr) == [0, 1, 2] for _, isr, _ in ps.values()), 90,
                      "after restart 2: every ISR full again")
        check(produce(out_dir, advertise[2], "t0", 3, 41, 60), "idempotent produce 41..60 after the faults")

        first, _, _ = sup.send("nonsense")
        check(first.startswith("error"), "an unknown command: an error")
        report_usage(sup.p.pid, "before dump")

        # dump
        first, rest, dump_s = sup.send("dump", multi=True)
        check(first == "ok", "dump")
        print("  dump: %d lines in %.1f s" % (len(rest), dump_s))
        for l in rest:
            if os.environ.get("KC_TEST_VERBOSE") or len(rest) < 80:
                print("    " + l)
        batches, hws = parse_dump(rest)
        ids_on = {}
        for b in batches:
            if b["control"]:
                continue
            for i in b["ids"]:
                ids_on.setdefault((b["broker"], b["topic"], b["partition"]), []).append(i)
        for broker in range(3):
            t0ids = sorted(int(i) for p in range(3) for i in ids_on.get((broker, "t0", p), []))
            check(t0ids == list(range(1, 31)) + list(range(41, 61)),
                  "broker %d holds t0's ids 1..30, 41..60 once each" % broker)
            t1ids = sorted(int(i) for i in ids_on.get((broker, "t1", 0), []))
            check(t1ids == list(range(31, 41)), "broker %d holds t1's ids 31..40 once each" % broker)
        data = [b for b in batches if not b["control"]]
        check(all(b["pid"] >= 0 and b["epoch"] >= 0 and b["bseq"] >= 0 and
                  b["lseq"] - b["bseq"] == b["last"] - b["base"] for b in data),
              "every data batch has a producer id, an epoch and sequences matching its offsets")
        check(any(b["txn"] for b in data if b["topic"] == "t1") and not any(b["txn"] for b in data if b["topic"] == "t0"),
              "t1's batches are transactional, t0's are not")
        for broker in range(3):
            marks = [b["ids"] for b in batches if b["control"] and b["topic"] == "t1" and b["broker"] == broker]
            # One commit marker, or more: a coordinator that retries
            # WriteTxnMarkers (a slow broker) gets the marker appended again.
            check(marks and all(m == ["commit"] for m in marks),
                  "t1 on broker %d: commit markers only (%s)" % (broker, marks))
        ends = {}
        for b in batches:
            k = (b["broker"], b["topic"], b["partition"])
            ends[k] = max(ends.get(k, 0), b["last"] + 1)
        for (broker, topic, p), hw in sorted(hws.items()):
            check(0 <= hw <= ends.get((broker, topic, p), 0),
                  "hw of %s-%d on %d (%d) within its log (end %d)" % (topic, p, broker, hw, ends.get((broker, topic, p), 0)))
        for topic, p in [("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0)]:
            top = max(hws.get((broker, topic, p), -1) for broker in range(3))
            end = max(ends.get((broker, topic, p), 0) for broker in range(3))
            # Everything was acknowledged (acks=all): the leader's HW is the
            # log end; a follower's may lag (it learns the HW on its next fetch).
            check(top == end, "%s-%d: the highest hw is the log end %d (hw %s)" % (
                topic, p, end, [hws.get((broker, topic, p)) for broker in range(3)]))
        check(len(hws) == 12, "a hw line for each of 12 replicas")

        # quit
        first, _, quit_s = sup.send("quit")
        check(first == "ok", "quit")
        check(sup.p.wait(30) == 0, "exit 0 after quit")
        gone(cluster_dir, ports)

        # The end of stdin, and kill -9 of the supervisor: the brokers die too.
        for how in ("eof", "kill"):
            cluster_dir2 = os.path.join(work, "cluster-" + how)
            sup2 = Supervisor(out_dir, cluster_dir2, free_ports(3), [], os.path.join(work, "supervisor-%s.err" % how))
            first = sup2.line(150)
            check(first == "ready", "%s: starts" % how)
            ports2 = [int(l.rsplit(":", 1)[1]) for l in sup2.until_end(10)]
            if how == "eof":
                sup2.p.stdin.close()
                check(sup2.line(60) == "ok", "eof: ok")
                check(sup2.p.wait(60) == 0, "eof: exit 0")
                gone(cluster_dir2, ports2)
            else:
                sup2.p.kill()
                sup2.p.wait(10)
                time.sleep(3)
                left = subprocess.run(["pgrep", "-f", cluster_dir2], capture_output=True, text=True).stdout.split()
                check(not left, "kill -9 of the supervisor: its brokers die too (%s)" % left)
                shutil.rmtree(cluster_dir2, ignore_errors=True)
    except (TimeoutError, EOFError) as e:
        check(False, "protocol: %s" % e)
        print(open(os.path.join(work, "supervisor.err")).read()[-6000:])
    finally:
        for f in forwarders:
            f.close()
        if sup.p.poll() is None:
            sup.p.kill()
            sup.p.wait()
        left = subprocess.run(["pgrep", "-f", work], capture_output=True, text=True).stdout.split()
        for pid in left:
            os.kill(int(pid), signal.SIGKILL)
        if FAILED == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept " + work)
    print("%d passed, %d failed" % (PASSED, FAILED))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
