# One helper per kind of target, so each folder's CMakeLists.txt stays a few
# lines (the habit of Abseil's absl_cc_library and leveldb's leveldb_test).

set(PRODSIM_WARNINGS -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wno-unused-parameter)
# g++ 12 reports false -Wrestrict overlaps inside std::string's inlined
# copies (GCC bug 105329, fixed in 13); it is off for g++ only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND PRODSIM_WARNINGS -Wno-restrict)
endif()
if(PRODSIM_WERROR)
  list(APPEND PRODSIM_WARNINGS -Werror)
endif()

# Floating point must mean the same on every compiler: no contraction into
# FMA, no fast-math. The PRNG's distributions depend on it.
set(PRODSIM_FP_FLAGS -ffp-contract=off)

if(PRODSIM_SANITIZE)
  set(PRODSIM_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
elseif(PRODSIM_UBSAN_ONLY)
  set(PRODSIM_SAN_FLAGS -fsanitize=undefined -fno-sanitize-recover=all)
else()
  set(PRODSIM_SAN_FLAGS "")
endif()
# libFuzzer's coverage instrumentation for every library a target links.
# clang 14 cannot compile our coroutines with UBSan's function check and
# coverage instrumentation together ("Cannot represent a difference across
# sections"), so fuzzing builds go without that one check (it guards calls
# through mistyped function pointers, which this code does not make).
#
# Coverage guides the search only where the behaviour under test lives: the
# producer model, the Kafka model, the faults, the scenario code. The kernel
# (sim/core, sim/net) and the checks set PRODSIM_NO_COVERAGE in their
# CMakeLists.txt: they run every step of every run, their coverage says
# nothing about the producer, and leaving them out saved a fifth of
# scenario_fuzzer's time. The instrumentation is -fsanitize=fuzzer-no-link's
# without trace-cmp: comparison tracing more than doubled the cost of a
# scenario run; the dictionaries carry the constants that matter instead.
# (Figures in fuzz/README.md.)
if(PRODSIM_FUZZ)
  set(PRODSIM_COVERAGE_FLAGS -fsanitize-coverage=inline-8bit-counters,indirect-calls,pc-table)
  if(PRODSIM_SANITIZE OR PRODSIM_UBSAN_ONLY)
    list(APPEND PRODSIM_SAN_FLAGS -fno-sanitize=function)
  endif()
endif()
# How a fuzz target links libFuzzer's main. ClusterFuzzLite's build.sh
# passes its $LIB_FUZZING_ENGINE here (split like a shell command line).
set(PRODSIM_LIB_FUZZING_ENGINE "-fsanitize=fuzzer" CACHE STRING
    "Link options of the fuzz targets with PRODSIM_FUZZ")
separate_arguments(PRODSIM_LIB_FUZZING_ENGINE_LIST UNIX_COMMAND "${PRODSIM_LIB_FUZZING_ENGINE}")

function(_prodsim_common target)
  target_compile_options(${target} PRIVATE ${PRODSIM_WARNINGS} ${PRODSIM_FP_FLAGS}
                         ${PRODSIM_SAN_FLAGS})
  target_link_options(${target} PRIVATE ${PRODSIM_SAN_FLAGS})
  if(NOT PRODSIM_NO_COVERAGE)
    target_compile_options(${target} PRIVATE ${PRODSIM_COVERAGE_FLAGS})
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# prodsim_library(NAME name SRCS ... DEPS ...)
function(prodsim_library)
  cmake_parse_arguments(P "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${P_NAME} STATIC ${P_SRCS})
  _prodsim_common(${P_NAME})
  target_link_libraries(${P_NAME} PUBLIC ${P_DEPS})
endfunction()

# prodsim_test(NAME name SRCS ... DEPS ... [LABELS ...])
# Each test binary is registered with ctest through gtest_discover_tests.
# With PRODSIM_FUZZ_TARGETS_ONLY it is defined against the stand-ins of
# CMakeLists.txt, left out of `all` and not registered: never built.
function(prodsim_test)
  cmake_parse_arguments(P "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${P_NAME} ${P_SRCS})
  _prodsim_common(${P_NAME})
  target_link_libraries(${P_NAME} PRIVATE ${P_DEPS} rapidcheck rapidcheck_gtest
                        GTest::gtest GTest::gmock GTest::gtest_main)
  if(PRODSIM_FUZZ_TARGETS_ONLY)
    set_target_properties(${P_NAME} PROPERTIES EXCLUDE_FROM_ALL ON)
    return()
  endif()
  include(GoogleTest)
  gtest_discover_tests(${P_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES
                       LABELS "${P_LABELS}")
endfunction()

# prodsim_binary(NAME name SRCS ... DEPS ...)
function(prodsim_binary)
  cmake_parse_arguments(P "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${P_NAME} ${P_SRCS})
  _prodsim_common(${P_NAME})
  target_link_libraries(${P_NAME} PRIVATE ${P_DEPS})
endfunction()

# prodsim_bench(NAME name SRCS ... DEPS ...): google-benchmark binaries
# (out of `all` with PRODSIM_FUZZ_TARGETS_ONLY, like prodsim_test).
function(prodsim_bench)
  cmake_parse_arguments(P "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${P_NAME} ${P_SRCS})
  _prodsim_common(${P_NAME})
  target_link_libraries(${P_NAME} PRIVATE ${P_DEPS} benchmark::benchmark)
  if(PRODSIM_FUZZ_TARGETS_ONLY)
    set_target_properties(${P_NAME} PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endfunction()

# prodsim_fuzzer(NAME name SRCS ... DEPS ... CORPUS dir...): a target that
# defines LLVMFuzzerTestOneInput. With PRODSIM_FUZZ (the fuzz and asan
# presets, clang) it links libFuzzer's main; otherwise it links
# fuzz/replay_main.cc. Either way ctest replays every file of its CORPUS
# directories through it (libFuzzer with -runs=0: run the corpus, no
# mutations), so each corpus runs in the gcc build without libFuzzer too.
function(prodsim_fuzzer)
  cmake_parse_arguments(P "" "NAME" "SRCS;DEPS;CORPUS" ${ARGN})
  if(PRODSIM_FUZZ)
    add_executable(${P_NAME} ${P_SRCS})
    _prodsim_common(${P_NAME})
    target_link_options(${P_NAME} PRIVATE ${PRODSIM_LIB_FUZZING_ENGINE_LIST})
    add_test(NAME fuzz_corpus_replay:${P_NAME} COMMAND ${P_NAME} -runs=0 ${P_CORPUS})
    install(TARGETS ${P_NAME} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  else()
    add_executable(${P_NAME} ${P_SRCS} ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
    _prodsim_common(${P_NAME})
    add_test(NAME fuzz_corpus_replay:${P_NAME} COMMAND ${P_NAME} ${P_CORPUS})
  endif()
  target_link_libraries(${P_NAME} PRIVATE ${P_DEPS})
endfunction()
