# gpufl: the commands README.md promises. CMake does the building; this file
# only strings the steps together.
#
#   make deps      install missing Debian build dependencies (apt-get)
#   make demo      build, record the example program, print its summary
#   make test      build and pass every test, plus ASan+UBSan and TSan runs
#   make gpu-test  the tests that need an NVIDIA GPU (skip cleanly without)
#   make bench     the benchmarks; figures go to bench/RESULTS.md by hand

JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
BUILD     ?= build
DEMO_LOGS ?= $(BUILD)/demo-logs
CMAKE_ARGS ?=

.PHONY: all deps deps-sanitizers build demo test test-asan test-tsan gpu-test bench clean

all: build

deps:
	@tools/install-deps.sh

deps-sanitizers:
	@tools/install-deps.sh --sanitizers

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== recording examples/demo.c (nested scopes, loader threads, CPU work, host sampling)"
	@dir=$$($(BUILD)/examples/demo $(DEMO_LOGS)) && \
	  echo "== session directory: $$dir" && ls -l $$dir && echo && \
	  $(BUILD)/gpufl summary $$dir

test: build deps-sanitizers
	@echo "== all tests"
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan test-tsan

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

gpu-test: build
	@cd $(BUILD) && ctest --output-on-failure -L gpu --no-tests=ignore

bench: build
	@$(BUILD)/bench/bench_scope
	@$(BUILD)/bench/bench_writer
	@$(BUILD)/bench/bench_memory

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
