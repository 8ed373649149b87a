#!/bin/bash
# Builds prodsim-java against org.apache.kafka:kafka-clients:VERSION into
# OUT_DIR: the driver jar, its runtime classpath (copied from the Maven
# repository) and the launcher OUT_DIR/prodsim-java. Maven's repository is
# the default ~/.m2 (set MAVEN_REPO to use another, e.g. one under OUT_DIR).
#
#   clients/java/build.sh OUT_DIR VERSION      e.g. build.sh /tmp/pj-3.9.1 3.9.1
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 OUT_DIR KAFKA_CLIENTS_VERSION" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
version=$2
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$0: a version is N.N.N, got $version" >&2; exit 2; }
# Selectable.send takes a Send (with its destination) before 2.8, a
# NetworkSend from 2.8 on: one small source file per API (src/send-v1, -v2).
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
if (( major < 2 || (major == 2 && minor < 8) )); then send_api=send-v1; else send_api=send-v2; fi
mvn_args=(-q -B -f "$here/pom.xml" -Dkafka.version="$version" -Dsend.api="$send_api" -Dbuild.dir="$out/maven")
# Every Maven build of the project holds this lock: builds sharing ~/.m2 must
# not download into it at once (sim/kafka/reference, wire/kafka build too).
[[ -n ${MAVEN_REPO:-} ]] && mvn_args+=(-Dmaven.repo.local="$MAVEN_REPO")
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" package
rm -rf "$out/lib" && mkdir -p "$out/lib"
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out/lib"
cp "$out/maven/prodsim-java.jar" "$out/lib/prodsim-java.jar"
cat > "$out/prodsim-java" <<'LAUNCHER'
#!/bin/sh
# prodsim-java launcher (written by clients/java/build.sh).
# -XX:TieredStopAtLevel=1: C1 only, a quick start for short trials;
# -XX:hashCode=3: identity hash codes from one global counter instead of
# per-thread random state, so that HashSets of ProducerBatch (Kafka's
# IncompleteBatches) iterate in the same order on every run.
# prodsim-java.jsa, when build.sh made it: a class-data-sharing archive of
# the classes a short run loads (about a third less CPU per trial).
dir=$(cd "$(dirname "$0")" && pwd)
# -Xlog:disable -Xlog:all=warning:stderr: the JVM's own messages go to
# stderr, never to stdout (the protocol's); -XX:-UsePerfData: no
# /tmp/hsperfdata_USER/PID file, which drivers in pid namespaces (every one
# is pid 2 there) would fight over, with a warning.
opts="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xss1m -Xms64m -Xmx512m -XX:-UsePerfData
  -Xlog:disable -Xlog:all=warning:stderr -XX:+UnlockExperimentalVMOptions -XX:hashCode=3"
if [ -f "$dir/prodsim-java.jsa" ]; then
  exec java $opts -XX:SharedArchiveFile="$dir/prodsim-java.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \
    -cp "$dir/lib/*" dev.prodsim.java.Main "$@"
fi
exec java $opts -cp "$dir/lib/*" dev.prodsim.java.Main "$@"
LAUNCHER
chmod +x "$out/prodsim-java"
# The CDS archive, from a training run against the scripted prodsim
# (fake_prodsim.py; skipped without python3). The JVM ignores an archive
# that does not match its own build or the classpath.
rm -f "$out/prodsim-java.jsa"
if command -v python3 >/dev/null; then
  JAVA_TOOL_OPTIONS="-XX:ArchiveClassesAtExit=$out/prodsim-java.jsa" \
    python3 "$here/fake_prodsim.py" "$out/prodsim-java" 12 >/dev/null 2>&1 || true
fi
echo "$out/prodsim-java: kafka-clients $version ($send_api)"
