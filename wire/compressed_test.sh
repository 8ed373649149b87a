#!/usr/bin/env bash
# Compressed record batches over the wire, as a Kafka 2.6 broker takes them:
# librdkafka with each codec and kafkajs with gzip (the one it carries)
# pass the fault-free file with every batch compressed, and the real
# clients' known findings (scenarios/known/real) come out as they do
# uncompressed (librdkafka with lz4, kafkajs with gzip).
#   compressed_test.sh PRODSIM FAULT_FREE_FILE KNOWN_REAL_DIR KNOWN_REAL_TEST
set -uo pipefail
prodsim=${1:?}; fault_free=${2:?}; known=${3:?}; known_test=${4:?}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
status=0
# FILE CLIENT KEY VALUE: FILE with the client's setting, in its [clients]
# table (made before [limits] if the file has none).
with_setting() {
  local file=$1 client=$2 key=$3 value=$4
  local header="^\[clients\.\"\?$client\"\?\]"
  if grep -q "$header" "$file"; then
    sed "/$header/a $key = \"$value\"" "$file"
  else
    sed "s/^\[limits\]/[clients.\"$client\"]\n$key = \"$value\"\n\n[limits]/" "$file"
  fi
}
fault_free_with() {  # CLIENT KEY CODEC
  local client=$1 key=$2 codec=$3 out
  with_setting "$fault_free" "$client" "$key" "$codec" > "$dir/ff-$client-$codec.toml"
  out=$("$prodsim" real "$dir/ff-$client-$codec.toml" --client="$client" --bound=120s 2>&1)
  if grep -q "is not built\|was not found" <<<"$out"; then
    echo "skip $client $codec: $(grep -m1 'not' <<<"$out")"
    return
  fi
  if grep -q ": pass client=.* acked=1000 errors=0 .*$codec-batches=[1-9]" <<<"$out"; then
    echo "ok   $client $codec: pass, 1000 acked, $(grep -o "$codec-batches=[0-9]*" <<<"$out")"
  else
    echo "FAIL $client $codec: want pass with 1000 acked and $codec batches:"
    grep -E "trial [0-9]+/" <<<"$out"
    status=1
  fi
}
for codec in gzip snappy lz4 zstd; do fault_free_with librdkafka '"compression.type"' "$codec"; done
fault_free_with kafkajs compression gzip
mkdir "$dir/known"
for file in "$known"/*.toml; do
  name=$(basename "$file")
  case $name in
    librdkafka-*) with_setting "$file" librdkafka '"compression.type"' lz4 > "$dir/known/$name" ;;
    kafkajs-*) with_setting "$file" kafkajs compression gzip > "$dir/known/$name" ;;
  esac
done
bash "$known_test" "$prodsim" "$dir/known" 3 2 || status=1
exit $status
