# Halo's entry points. `make run` and `make test` set up a fresh Debian 12 machine first.
# deps: packages + .venv | build: configure + compile | run: main job | test: every test | bench
# package: the .deb (CPU build; check-package.sh, then apt-installed on a fresh Debian 12 chroot) | test-asan: core tests
# under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)
PRESET ?= default
BUILD  := build
JOBS   ?= $(shell nproc)
export CCACHE_DIR ?= $(HOME)/.cache/ccache
# Share the compiler cache between checkouts (CI builds a fresh clone elsewhere).
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: deps build run test bench soak screenshots clean package test-asan format format-check gpu-bundle gpu-check

deps:
	@packaging/bootstrap.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET) >/dev/null

build: deps $(BUILD)/build.ninja
	cmake --build --preset $(PRESET) -j $(JOBS)

run: build
	@packaging/run-main.sh

test: build
	ctest --preset $(PRESET) -j $(JOBS) --timeout 1200

bench: build
	$(BUILD)/bin/halo bench comm

# The soak (docs/guide/faults.md): 8 ranks (sp 4 x dp 2), 500 steps, a concurrent history reader;
# no lost metric row, RSS growth <= 2 % after warm-up, PRAGMA integrity_check. Not part of test.
soak: build
	packaging/soak.sh

# Each workbench view with finished runs loaded (offscreen) -> build/screenshots/*.png
screenshots: build
	QT_QPA_PLATFORM=offscreen $(BUILD)/bin/gui_screenshots $(BUILD)/screenshots
# Test binaries run under the sanitizers: every suite of core/ (launch_tests, data_tests and
# eval_tests also run the sanitized `halo`; multi-process suites run sanitized ranks).
ASAN_TESTS ?= util_tests shard_tests arch_tests config_tests protocol_tests io_tests store_tests parallel_tests model_tests memory_tests \
  train_tests train_openlane_tests train_predictor_tests data_tests eval_tests \
  launch_tests

package: deps
	cmake --preset package >/dev/null
	cmake --build --preset package -j $(JOBS)
	cd build-package && cpack -G DEB
	packaging/check-package.sh build-package/halo_*.deb
	@if [ "$$(id -u)" = 0 ]; then packaging/fresh-install-check.sh build-package/halo_*.deb; \
	 else echo "package: not root, so no fresh-install check (sudo packaging/fresh-install-check.sh build-package/halo_*.deb)"; fi

test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS) --target asan_canary $(ASAN_TESTS) || \
	  { echo "test-asan: the build failed; disk and memory now:"; df -h .; free -m; exit 1; }
	packaging/run-asan-tests.sh build-asan $(ASAN_TESTS)

# The GPU check (docs/guide/gpu-check.md). gpu-bundle: the headers and libraries the GPU machine
# lacks, unpacked from Debian packages into .gpu-bundle (carried with the device call).
# gpu-check: on a CUDA machine the full check; here (no CUDA) its dry run on the CPU with tiny
# shapes and build/bin/halo, well under 3 minutes (CI runs it after `make test`).
gpu-bundle:
	@packaging/gpu-bundle.sh
gpu-check: gpu-bundle build
	packaging/gpu-check.sh

# The tree as .clang-format says: `format` rewrites, `format-check` (CI) lists what differs.
FORMAT_FILES = $(shell git ls-files '*.cpp' '*.h')
format:
	@clang-format -i $(FORMAT_FILES) && echo "format: $(words $(FORMAT_FILES)) files formatted"
format-check:
	@out=$$(clang-format --dry-run $(FORMAT_FILES) 2>&1); \
	 if [ -n "$$out" ]; then echo "$$out" | grep -E '^[^ ].*warning' | cut -d: -f1 | sort -u; \
	   echo "format-check: the files above differ from .clang-format (run make format)"; exit 1; fi; \
	 echo "format-check: $(words $(FORMAT_FILES)) files formatted"

clean:
	rm -rf $(BUILD) build-asan build-package
