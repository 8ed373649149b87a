#!/bin/bash -eu
# ClusterFuzzLite's build of prodsim's fuzz targets (fuzz/README.md): runs in
# the image of .clusterfuzzlite/Dockerfile with ClusterFuzzLite's $CC, $CXX,
# $CXXFLAGS (sanitizer and coverage flags) and $LIB_FUZZING_ENGINE, and
# leaves in $OUT each target, its seed corpus (<target>_seed_corpus.zip) and
# its dictionary (<target>.dict). Not run in ClusterFuzzLite's image (no
# Docker daemon where it was written, so the image cannot be built);
# fuzz/README.md says what was tried instead.
set -euo pipefail  # also when run as `bash build.sh`, which ignores the #! flags
targets=(scenario_parser_fuzzer broker_state_fuzzer scenario_fuzzer wire_codec_fuzzer)
deps=$WORK/deps

# UBSan as ClusterFuzzLite configures it would stop on unsigned wrap-around,
# which the PRNG and hashes do on purpose; and clang 14 could not compile
# our coroutines with the function check and coverage together (see
# cmake/prodsim.cmake).
if [[ ${SANITIZER:-} == undefined ]]; then
  export CFLAGS="$CFLAGS -fno-sanitize=unsigned-integer-overflow,function"
  export CXXFLAGS="$CXXFLAGS -fno-sanitize=unsigned-integer-overflow,function"
fi

# Abseil, static, built with the same flags as the targets.
cmake -S "$SRC/abseil-cpp" -B "$WORK/abseil-build" -DCMAKE_INSTALL_PREFIX="$deps" \
  -DCMAKE_CXX_STANDARD=20 -DABSL_PROPAGATE_CXX_STD=ON -DABSL_BUILD_TESTING=OFF \
  -DBUILD_SHARED_LIBS=OFF
cmake --build "$WORK/abseil-build" -j"$(nproc)"
cmake --install "$WORK/abseil-build"
# toml++: headers and its CMake package only.
cmake -S "$SRC/tomlplusplus" -B "$WORK/toml-build" -DCMAKE_INSTALL_PREFIX="$deps"
cmake --install "$WORK/toml-build"

# PRODSIM_FUZZ with neither PRODSIM_SANITIZE nor PRODSIM_UBSAN_ONLY adds no
# sanitizer of its own, only coverage instrumentation (cmake/prodsim.cmake;
# $CXXFLAGS has libFuzzer's full instrumentation anyway): the sanitizers are
# the ones ClusterFuzzLite puts in $CXXFLAGS. No build type: its flags decide
# the optimization too.
cmake -S "$SRC/prodsim" -B "$WORK/build" -DCMAKE_PREFIX_PATH="$deps" \
  -DPRODSIM_FUZZ=ON -DPRODSIM_FUZZ_TARGETS_ONLY=ON \
  -DPRODSIM_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$WORK/build" -j"$(nproc)" --target "${targets[@]}"

for t in "${targets[@]}"; do
  cp "$WORK/build/fuzz/$t" "$OUT/"
done
# Seed corpora and dictionaries as fuzz/CMakeLists.txt and fuzz/run-ci use them.
cd "$SRC/prodsim"
zip -q -j "$OUT/scenario_parser_fuzzer_seed_corpus.zip" fuzz/corpus/scenario_parser/* \
  scenarios/known/*.toml scenarios/corpus/*.toml
zip -q -j "$OUT/broker_state_fuzzer_seed_corpus.zip" fuzz/corpus/broker_state/*
zip -q -j "$OUT/scenario_fuzzer_seed_corpus.zip" fuzz/corpus/scenario_fuzzer/*
zip -q -j "$OUT/wire_codec_fuzzer_seed_corpus.zip" fuzz/corpus/wire_codec/*
cp fuzz/dict/scenario.dict "$OUT/scenario_parser_fuzzer.dict"
# libFuzzer options (ClusterFuzz's <target>.options format), where a target has them.
for t in "${targets[@]}"; do
  if [[ -f fuzz/$t.options ]]; then
    cp "fuzz/$t.options" "$OUT/"
  fi
done
if [[ -f fuzz/dict/scenario_fuzzer.dict ]]; then
  cp fuzz/dict/scenario_fuzzer.dict "$OUT/scenario_fuzzer.dict"
fi
