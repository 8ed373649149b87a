#!/usr/bin/env bash
# Installs the Debian 12 packages prodsim needs, only those that are missing.
# Idempotent: a second run installs nothing and asks apt nothing.
#
# What a machine needs besides: Debian 12 with its package archive, and the
# npm registry, the Go module proxy (and its checksum database) for the
# clients' own dependencies, fetched at build time by their own tools
# (clients/kafkajs: npm ci; clients/sarama: go, pinned by go.sum). Go is the
# machine's (1.25 or newer, first on PATH: Sarama's go.mod files ask for
# it; Debian 12's golang-go is 1.19 and is not used); without it the Sarama
# driver is not built and CMake's log says so.
set -euo pipefail
packages=(
  build-essential cmake ninja-build clang libclang-rt-14-dev
  libabsl-dev libgtest-dev libgmock-dev librapidcheck-dev
  libtomlplusplus-dev libbenchmark-dev librdkafka-dev pkg-config
  # prodsim's command line (cli/flags.h): CLI11, header-only.
  libcli11-dev
  # tools/lint.sh: the style rules (.clang-format, .clang-tidy), and python3
  # to read the build's compile_commands.json.
  clang-format clang-tidy python3
  # xmllint: the JUnit reports validate under tools/junit.xsd (ctest).
  libxml2-utils
  # tools/ci/workflow_steps.py reads the GitHub workflows (ctest workflow_steps).
  python3-yaml
  # The wire codec takes compressed record batches as a Kafka 2.6 broker
  # does: gzip, snappy, lz4 and zstd.
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev
)
# The kafkajs driver (clients/kafkajs): Node.js and npm, Debian's unless the
# machine has them already (a NodeSource node carries its own npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
# The Java driver (clients/java): a JDK and Maven, Debian's unless the
# machine has them already (kafka-clients then comes from Maven Central).
if ! command -v javac >/dev/null || ! command -v mvn >/dev/null; then
  packages+=(openjdk-17-jdk-headless maven)
fi
# The newest librdkafka without a source build comes from a Python wheel
# (clients/librdkafka/build-version.sh pypi:confluent-kafka==2.16.1): pip
# and unzip, unless the machine has them.
if ! python3 -m pip --version >/dev/null 2>&1; then
  packages+=(python3-pip)
fi
command -v unzip >/dev/null || packages+=(unzip)
if ! command -v go >/dev/null; then
  echo "setup: no go on PATH: the Sarama and franz-go drivers (clients/sarama, clients/franz-go) will not be built (Go 1.25 or newer)" >&2
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages and not root; run as root or install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
