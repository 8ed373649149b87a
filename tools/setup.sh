#!/usr/bin/env bash
# Installs the Debian 12 packages prodsim needs, only those that are missing.
# Idempotent: a second run installs nothing and asks apt nothing.
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
  # clients/sarama (build.sh): Go, Debian's Sarama 1.22.1, and the
  # libraries Sarama 1.42.1 imports, for a build against a checkout.
  golang-go golang-github-shopify-sarama-dev golang-github-davecgh-go-spew-dev
  golang-gopkg-eapache-go-resiliency.v1-dev golang-github-eapache-go-xerial-snappy-dev
  golang-gopkg-eapache-queue.v1-dev golang-github-hashicorp-go-multierror-dev
  golang-github-jcmturner-gofork-dev golang-github-jcmturner-gokrb5.v8-dev
  golang-github-klauspost-compress-dev golang-github-pierrec-lz4-dev
  golang-github-rcrowley-go-metrics-dev golang-golang-x-net-dev
)
# The kafkajs driver (clients/kafkajs): Node.js and npm, Debian's unless the
# machine has them already (a NodeSource node carries its own npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
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
