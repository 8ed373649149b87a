#!/bin/bash
# Builds kafka-reference against org.apache.kafka:kafka_2.13:VERSION into
# OUT_DIR: the jar, its runtime classpath (copied from the Maven repository)
# and the launcher OUT_DIR/kafka-reference. Maven's repository is the default
# ~/.m2 (MAVEN_REPO=DIR uses another); every mvn call holds
# /tmp/prodsim-m2.lock, which other builds sharing ~/.m2 take too.
#
#   sim/kafka/reference/build.sh OUT_DIR VERSION     e.g. build.sh /tmp/kref-2.6.2 2.6.2
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 OUT_DIR KAFKA_VERSION" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
version=$2
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$0: a version is N.N.N, got $version" >&2; exit 2; }
# The partition log's API generation, one adapter each (src/log-v2, -v3, -v4):
# kafka.log.Log (Scala) in 2.4-2.8; kafka.log.UnifiedLog (Scala) over the
# storage module's Java classes in 3.9-4.0; UnifiedLog in Java
# (org.apache.kafka.storage.internals.log) from 4.1, whose records moved to
# org.apache.kafka.common.record.internal in 4.3 (src/v4-records-public,
# src/v4-records-internal). 3.0-3.8 had yet other shapes: no adapter.
major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
records_api=none
if (( major == 2 && minor >= 4 )); then log_api=log-v2
elif (( (major == 3 && minor == 9) || (major == 4 && minor == 0) )); then log_api=log-v3
elif (( major == 4 && minor <= 2 )); then log_api=log-v4; records_api=v4-records-public
elif (( major == 4 )); then log_api=log-v4; records_api=v4-records-internal
else
  echo "$0: no adapter for Kafka $version (there are: 2.4-2.8, 3.9-4.0, 4.1-4.x)" >&2
  exit 2
fi
mvn_args=(-q -B -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$version" -Dlog.api="$log_api" -Drecords.api="$records_api" -Dbuild.dir="$out/maven")
[[ -n ${MAVEN_REPO:-} ]] && mvn_args+=(-Dmaven.repo.local="$MAVEN_REPO")
rm -rf "$out/maven"   # no classes left from another adapter
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" package
rm -rf "$out/lib" && mkdir -p "$out/lib"
flock /tmp/prodsim-m2.lock mvn "${mvn_args[@]}" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out/lib"
cp "$out/maven/kafka-reference.jar" "$out/lib/kafka-reference.jar"
cat > "$out/kafka-reference" <<'LAUNCHER'
#!/bin/sh
# kafka-reference launcher (written by sim/kafka/reference/build.sh).
# C1 only, serial GC and a small heap: a quick start for short sessions.
# -XX:-UsePerfData: no /tmp/hsperfdata file; -Xlog: the JVM's own messages
# go to stderr, never to stdout (the protocol's).
dir=$(cd "$(dirname "$0")" && pwd)
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xss1m -Xms32m -Xmx256m -XX:-UsePerfData \
  -Xlog:disable -Xlog:all=warning:stderr \
  -cp "$dir/lib/*" dev.prodsim.reference.Main "$@"
LAUNCHER
chmod +x "$out/kafka-reference"
label=$log_api; [[ $records_api != none ]] && label+=" + $records_api"
echo "$out/kafka-reference: kafka_2.13 $version ($label)"
