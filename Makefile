# gpufl: the commands README.md promises. CMake does the building; this file
# only strings the steps together.
#
#   make deps      install missing Debian build dependencies (apt-get)
#   make demo      build, record an example workload, print its report; write its
#                  HTML report and Perfetto trace (tools/demo.sh)
#   make test      build and pass every test, plus ASan+UBSan and TSan runs, a
#                  bounded fuzzing run of the trace readers (make fuzz) and the
#                  Release, MinSizeRel and clang builds (make build-variants)
#   make gpu-test  the tests that need an NVIDIA GPU (skip cleanly without)
#   make bench     the benchmarks; figures go to bench/RESULTS.md by hand
#   make bench-gpu the Trace engine benchmarks (a GPU; PyTorch for two of them)

JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
BUILD     ?= build
DEMO_LOGS ?= $(BUILD)/demo-logs
CMAKE_ARGS ?=
FUZZ_SECONDS ?= 15
# Debian's python3 where there is one (the one the Python package is tested with)
PYTHON3   ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)

.PHONY: all deps deps-sanitizers deps-test-tools build demo test test-asan test-tsan fuzz build-variants gpu-test bench bench-gpu clean

all: build

deps:
	@tools/install-deps.sh

deps-sanitizers:
	@tools/install-deps.sh --sanitizers

# protoc, headless Chromium, clang-format and Debian's Python test packages, for
# the Perfetto export's, the HTML report's, the format and the Python package's tests
deps-test-tools:
	@tools/install-deps.sh --test-tools

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@tools/demo.sh $(BUILD) $(DEMO_LOGS)

test: build deps-sanitizers deps-test-tools
	@echo "== all tests"
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan test-tsan fuzz build-variants

# Every unit test again under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	@echo "== unit tests under ASan+UBSan"
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFL_SANITIZE=address,undefined \
	  -DGPUFL_BUILD_BENCH=OFF -DGPUFL_BUILD_EXAMPLES=OFF >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -L unit

# The concurrency stress tests under ThreadSanitizer (clang's: GCC's TSan
# does not model atomic_thread_fence).
test-tsan: deps-sanitizers
	@echo "== stress tests under TSan"
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DGPUFL_SANITIZE=thread -DGPUFL_BUILD_BENCH=OFF -DGPUFL_BUILD_EXAMPLES=OFF >/dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS)
	@cd $(BUILD)-tsan && ctest --output-on-failure -j $(JOBS) -L stress

# libFuzzer (clang, ASan+UBSan) on the NDJSON and .gflt readers, seeded with
# freshly recorded sessions, FUZZ_SECONDS each; fails on any crash, leak or
# timeout (tests/fuzz/run.sh).
fuzz: deps-sanitizers
	@echo "== fuzzing the trace readers, $(FUZZ_SECONDS) s each"
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFL_FUZZ=ON \
	  -DGPUFL_SANITIZE=address,undefined -DGPUFL_BUILD_TESTS=OFF -DGPUFL_BUILD_BENCH=OFF \
	  -DGPUFL_BUILD_EXAMPLES=OFF -DGPUFL_BUILD_CLI=OFF >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_ndjson fuzz_gflt fuzz_seeds
	@tests/fuzz/run.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

# The build types users and packagers pick, each in its own directory, with
# -Werror as always: optimisation levels and compilers warn about different
# things (gcc's -Wmaybe-uninitialized only at -O2 and -Os). Everything is
# built (tests, benchmarks, examples); nothing is run. ccache when present.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
LAUNCHERS = $(if $(CCACHE),$(foreach l,C CXX CUDA,-DCMAKE_$(l)_COMPILER_LAUNCHER=$(CCACHE)))

build-variants: deps-sanitizers
	@echo "== Release and MinSizeRel builds (gcc), RelWithDebInfo build (clang)"
	@CC=gcc CXX=g++ cmake -S . -B $(BUILD)-release -DCMAKE_BUILD_TYPE=Release $(LAUNCHERS) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-release -j $(JOBS)
	@CC=gcc CXX=g++ cmake -S . -B $(BUILD)-minsizerel -DCMAKE_BUILD_TYPE=MinSizeRel $(LAUNCHERS) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-minsizerel -j $(JOBS)
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHERS) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-clang -j $(JOBS)

gpu-test: build
	@cd $(BUILD) && ctest --output-on-failure -L gpu --no-tests=ignore

bench: build
	@$(BUILD)/bench/bench_scope
	@$(BUILD)/bench/bench_writer
	@$(BUILD)/bench/bench_memory
	@$(BUILD)/bench/bench_exporter
	@$(BUILD)/bench/bench_metrics_listen
	@$(BUILD)/bench/bench_trace
	@$(BUILD)/bench/bench_export
	@$(BUILD)/bench/bench_analyze
	@$(BUILD)/bench/bench_report
	@if [ -x $(BUILD)/bench/bench_stack_capture ]; then $(BUILD)/bench/bench_stack_capture; fi
	@GPUFL_LIBRARY=$(BUILD)/libgpufl.so PYTHONPATH=python $(PYTHON3) bench/bench_python_scope.py
	@GPUFL_LIBRARY=$(BUILD)/libgpufl.so PYTHONPATH=python $(PYTHON3) bench/bench_python_load.py \
	  --writer $(BUILD)/bench/bench_write_gflt

# Each prints one block of figures; the Python ones skip, saying so, without
# PyTorch (or torchvision) and run their programs under $(BUILD)/gpufl run.
bench-gpu: build
	@$(BUILD)/bench/bench_launch_overhead
	@python3 bench/gpu/bench_torch_ops.py $(BUILD)/gpufl
	@python3 bench/gpu/bench_resnet50.py $(BUILD)/gpufl

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz $(BUILD)-release $(BUILD)-minsizerel $(BUILD)-clang
