#!/usr/bin/env python3
"""build.sh's training run for the brokers' class-data-sharing archives.

    cds_train.py OUT_DIR

Starts OUT_DIR/kafka-cluster (3 brokers) with PRODSIM_CDS_TRAIN_DIR set, so
that each node's JVM writes the classes it loaded to an archive when it
exits; produces through a forwarder (the produce, replication and
transaction paths load their classes), stops each broker cleanly, quits,
and installs broker-0's archive as OUT_DIR/broker.jsa, the supervisor's as
OUT_DIR/supervisor.jsa (and KRaft's controller's as
OUT_DIR/controller.jsa). Exits non-zero if that fails; the
cluster then simply runs without archives.
"""
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_test as ct  # noqa: E402


def main():
    out_dir = os.path.abspath(sys.argv[1])
    for name in ("broker.jsa", "controller.jsa", "supervisor.jsa"):
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
    work = tempfile.mkdtemp(prefix="kc-cds-")
    jsa = os.path.join(work, "jsa")
    os.mkdir(jsa)
    os.environ["PRODSIM_CDS_TRAIN_DIR"] = jsa
    advertise = ct.free_ports(3)
    sup = ct.Supervisor(out_dir, os.path.join(work, "cluster"), advertise, [], os.path.join(work, "supervisor.err"))
    forwarders = []
    try:
        if sup.line(150) != "ready":
            sys.exit("cds_train: the cluster did not start")
        for i, l in enumerate(sup.until_end(10)):
            forwarders.append(ct.Forwarder(advertise[i], int(l.rsplit(":", 1)[1])))
        os.environ.pop("PRODSIM_CDS_TRAIN_DIR")  # not for the producers
        ct.produce(out_dir, advertise[0], "t0", 3, 1, 20)
        ct.produce(out_dir, advertise[1], "t1", 1, 21, 30, txn="prodsim-cds")
        for b in (2, 1, 0):
            sup.send("stop %d" % b)
        sup.send("quit")
        sup.p.wait(60)
        shutil.copy(os.path.join(jsa, "broker-0.jsa"), os.path.join(out_dir, "broker.jsa"))
        for name in ("controller.jsa", "supervisor.jsa"):
            if os.path.exists(os.path.join(jsa, name)):
                shutil.copy(os.path.join(jsa, name), os.path.join(out_dir, name))
    finally:
        for f in forwarders:
            f.close()
        if sup.p.poll() is None:
            sup.p.kill()
            sup.p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
