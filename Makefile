# Thin front end over CMake. `make demo` and `make test` install what they need first.

# Tests run with OpenMP's idle threads asleep, not spinning: under ctest -j, a test's spinning
# threads took the cores the other test processes needed (hn_ops_tests 34.2 s against 7.8 s,
# 300 random graphs 3.5-17 s against 0.3 s, on 2 cores at load 4-6). Results do not depend on it;
# benchmarks keep OpenMP's default.
check test test-sanitize test-tsan soak: export OMP_WAIT_POLICY = PASSIVE
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# The sanitizer builds' optimization and debug info (-O1: a quicker build, still fast tests;
# -g1: line tables name every frame of a report, and a heavy file compiles in about a quarter
# less time than with -g).
SANITIZER_FLAGS ?= -O1 -g1

.PHONY: all setup setup-mxnet setup-onnx configure build demo check check-one test test-sanitize \
  test-tsan soak fuzz fuzz-graphs fuzz-graphs-mxnet bench clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 \
	  || (cat $(BUILD).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

# The documentation site in $(BUILD)/docs (scripts/docs.sh): C, C++, Java, Scala and R references
# and the guides of docs/; the Maven builds fetch what they lack on their first run.
.PHONY: docs
docs: build
	@bash scripts/docs.sh $(BUILD)

# The quick loop: the Release build and the CTest labels unit, ops, capi, diff and cli, without
# the reference venvs (setup-mxnet, setup-onnx), the sanitizer trees or the JVM and R tests.
# diff.mxnet_random_graphs is also labelled diff but runs real MXNet (label mxnet): left to
# make test.
check: build
	@ctest --test-dir $(BUILD) -L '^(unit|ops|capi|diff|cli)$$' -LE '^mxnet$$' --output-on-failure \
	  -j$(JOBS)

# One gtest case (or a --gtest_filter pattern) from whichever test binary holds it:
# make check-one T=Suite.Case (scripts/check-one.sh).
check-one: configure
	@bash scripts/check-one.sh $(BUILD) '$(T)' $(JOBS)

# Real MXNet (test-time reference) is installed before configuring, so CMake finds it.
setup-mxnet:
	@bash scripts/setup-mxnet.sh

# The onnx/onnxruntime wheels (ONNX parity tests, `hybridnet convert --check`), likewise.
setup-onnx:
	@bash scripts/setup-onnx.sh

# The sanitizer passes run first so the last line printed is the whole suite's summary.
# The free disk is printed first: build trees and scratch models take several GB (a full disk
# shows as failed writes in whichever test hits it).
test: setup-mxnet setup-onnx build test-sanitize test-tsan
	@df -h $(BUILD) | awk 'NR == 2 {print "free disk under $(BUILD): " $$4}'
	@ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# ASan + UBSan build of the C++ unit, op and C API tests.
test-sanitize: setup
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHN_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_DEBUG="$(SANITIZER_FLAGS)" -DCMAKE_C_FLAGS_DEBUG="$(SANITIZER_FLAGS)" \
	  -DHN_BUILD_BENCH=OFF -DHN_BUILD_JAVA=OFF -DHN_BUILD_SCALA=OFF -DHN_BUILD_R=OFF \
	  > $(ASAN_BUILD).configure.log 2>&1 || (cat $(ASAN_BUILD).configure.log; exit 1)
	@cmake --build $(ASAN_BUILD) -j$(JOBS) --target hn_unit_tests hn_cxx20_tests hn_ops_tests hn_c_api_tests \
	  hn_fuzz_replay_symbol_json hn_fuzz_replay_params hn_fuzz_replay_npy hn_fuzz_replay_model
	@ctest --test-dir $(ASAN_BUILD) -L 'unit|ops|capi|fuzz' --output-on-failure -j$(JOBS)

# ThreadSanitizer build of the C API concurrency tests (label tsan); any report fails them.
test-tsan: setup
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHN_TSAN=ON \
	  -DCMAKE_CXX_FLAGS_DEBUG="$(SANITIZER_FLAGS)" -DCMAKE_C_FLAGS_DEBUG="$(SANITIZER_FLAGS)" \
	  -DHN_BUILD_BENCH=OFF -DHN_BUILD_JAVA=OFF -DHN_BUILD_SCALA=OFF -DHN_BUILD_R=OFF \
	  > $(TSAN_BUILD).configure.log 2>&1 || (cat $(TSAN_BUILD).configure.log; exit 1)
	@cmake --build $(TSAN_BUILD) -j$(JOBS) --target hn_c_api_test_concurrency
	@ctest --test-dir $(TSAN_BUILD) -L tsan --output-on-failure -j$(JOBS)

# The long soak of the Java and R bindings (CTest label soak; `make test` runs it short):
# create-forward-close cycles and training steps, closed and left to the GC, and close() racing
# forward().
SOAK_CYCLES ?= 100000
SOAK_ROUNDS ?= 5000
SOAK_TRAIN_STEPS ?= 10000
soak: build
	@HYBRIDNET_SOAK_CYCLES=$(SOAK_CYCLES) HYBRIDNET_SOAK_ROUNDS=$(SOAK_ROUNDS) \
	  HYBRIDNET_SOAK_TRAIN_STEPS=$(SOAK_TRAIN_STEPS) \
	  ctest --test-dir $(BUILD) -L soak --output-on-failure --verbose

# libFuzzer over every loader (clang, ASan + UBSan), FUZZ_SECONDS per target (scripts/fuzz.sh).
fuzz: setup
	@bash scripts/setup.sh fuzz
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DHN_FUZZ=ON -DHN_BUILD_BENCH=OFF -DHN_BUILD_JAVA=OFF -DHN_BUILD_SCALA=OFF -DHN_BUILD_R=OFF \
	  > $(FUZZ_BUILD).configure.log 2>&1 || (cat $(FUZZ_BUILD).configure.log; exit 1)
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target hn_fuzz_symbol_json hn_fuzz_params hn_fuzz_npy \
	  hn_fuzz_model
	@bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Differential testing of random whole graphs for GRAPH_MINUTES from GRAPH_SEED (make test runs
# a fixed 20 000-graph slice): eager, graph executor (fusion/planning on and off), C API, export.
GRAPH_MINUTES ?= 10
GRAPH_SEED ?= 1000000
fuzz-graphs: build
	@$(BUILD)/bin/hn_graph_diff --minutes $(GRAPH_MINUTES) --seed $(GRAPH_SEED)

# The generator's graphs in real MXNet 1.9.1 (make test runs 500): GRAPHS graphs from GRAPH_SEED.
GRAPHS ?= 20000
fuzz-graphs-mxnet: build setup-mxnet
	@$(HOME)/.cache/hybridnet/mxnet-1.9.1/bin/python tests/common/mxnet_check.py \
	  $(BUILD)/test_tmp/mxnet_graphs_long $(BUILD)/bin/hn_graph_diff --graphs $(GRAPHS) \
	  --seed $(GRAPH_SEED) --export

# Python's peer PyTorch (Debian's python3-torch, large) is installed for the benchmark only.
bench: build
	@bash scripts/setup.sh bench
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD).configure.log $(ASAN_BUILD) $(ASAN_BUILD).configure.log \
	  $(TSAN_BUILD) $(TSAN_BUILD).configure.log $(FUZZ_BUILD) $(FUZZ_BUILD).configure.log
