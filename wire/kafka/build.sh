#!/bin/bash
# Builds kafka-cluster, the supervisor of a real Kafka cluster on loopback
# (README.md), against org.apache.kafka:kafka_2.13:VERSION into OUT_DIR: the
# supervisor's jar, its runtime classpath (copied from the Maven repository;
# the brokers run from the same jars) and the launcher OUT_DIR/kafka-cluster.
# Maven's repository is the default ~/.m2 (set MAVEN_REPO to use another);
# every mvn call holds /tmp/prodsim-m2.lock, as others share that repository.
#
#   wire/kafka/build.sh OUT_DIR VERSION      e.g. build.sh /tmp/kc-4.4.0 4.4.0
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 OUT_DIR KAFKA_VERSION" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
version=$2
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$0: a version is N.N.N, got $version" >&2; exit 2; }
# 2.x: ZooKeeper (inside the supervisor's JVM); 3.x and later: KRaft.
major=${version%%.*}
if (( major < 3 )); then quorum_api=zk; else quorum_api=kraft; fi
mvn_args=(-q -B -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$version" -Dquorum.api="$quorum_api" -Dbuild.dir="$out/maven")
[[ -n ${MAVEN_REPO:-} ]] && mvn_args+=(-Dmaven.repo.local="$MAVEN_REPO")
rm -rf "$out/lib" && mkdir -p "$out/lib"
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$out/lib"
# FileRecords and RecordBatch moved to org.apache.kafka.common.record.internal
# in kafka-clients 4.x: src/records is written for the old package, and for
# a jar with the new one build.sh compiles a copy with the imports moved.
records_src="$here/src/records/java"
if unzip -Z1 "$out/lib/kafka-clients-$version.jar" 'org/apache/kafka/common/record/internal/FileRecords.class' >/dev/null 2>&1; then
  records_api=records-internal
  rm -rf "$out/records-internal" && mkdir -p "$out/records-internal"
  cp -r "$records_src/." "$out/records-internal/"
  find "$out/records-internal" -name '*.java' -exec \
    sed -i 's/org\.apache\.kafka\.common\.record\.\([A-Z]\)/org.apache.kafka.common.record.internal.\1/g; s/(org\.apache\.kafka\.common\.record)/(org.apache.kafka.common.record.internal)/' {} +
  records_src="$out/records-internal"
else
  records_api=records
fi
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" -Drecords.src="$records_src" package
cp "$out/maven/kafka-cluster.jar" "$out/lib/kafka-cluster.jar"
cat > "$out/kafka-cluster" <<'LAUNCHER'
#!/bin/sh
# kafka-cluster launcher (written by wire/kafka/build.sh): the supervisor's
# JVM. It starts each broker as its own JVM from the same lib/ (flags in
# Cluster.launcher; PRODSIM_BROKER_JAVA_OPTS adds to them).
# -Xlog:disable -Xlog:all=warning:stderr: the JVM's own messages go to
# stderr, never to stdout (the protocol's); -XX:-UsePerfData: no
# /tmp/hsperfdata_USER/PID file. supervisor.jsa, broker.jsa and
# controller.jsa, when build.sh made them: class-data-sharing archives from
# a training run (cds_train.py), which the JVM ignores if they do not match
# its own build or the classpath.
dir=$(cd "$(dirname "$0")" && pwd)
cds=""
if [ -n "${PRODSIM_CDS_TRAIN_DIR:-}" ]; then
  cds="-XX:ArchiveClassesAtExit=$PRODSIM_CDS_TRAIN_DIR/supervisor.jsa"
elif [ -f "$dir/supervisor.jsa" ]; then
  cds="-XX:SharedArchiveFile=$dir/supervisor.jsa"
fi
exec java -Xms32m -Xmx192m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
  -Xlog:disable -Xlog:all=warning:stderr -Xlog:cds=off -Xlog:cds+dynamic=off $cds -Djava.awt.headless=true \
  -Dprodsim.cluster.lib="$dir/lib" -cp "$dir/lib/*" dev.prodsim.cluster.Main "$@"
LAUNCHER
chmod +x "$out/kafka-cluster"
# The class-data-sharing archives, from a training run (cds_train.py; about
# 40% less CPU to start a cluster; skipped without python3 and if the run
# fails).
rm -f "$out/broker.jsa" "$out/controller.jsa" "$out/supervisor.jsa"
if command -v python3 >/dev/null; then
  python3 "$here/cds_train.py" "$out" >/dev/null 2>&1 || echo "$0: no class-data-sharing archives (cds_train.py failed)" >&2
fi
echo "$out/kafka-cluster: kafka_2.13 $version ($quorum_api, $records_api)"
