# Halo's entry points. `make run` and `make test` set up a fresh Debian 12 machine first.
# deps: packages + .venv | build: configure + compile | run: main job | test: every test | bench
PRESET ?= default
BUILD  := build
JOBS   ?= $(shell nproc)
export CCACHE_DIR ?= $(HOME)/.cache/ccache
# Share the compiler cache between checkouts (CI builds a fresh clone elsewhere).
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: deps build run test bench screenshots clean

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

# Each workbench view with finished runs loaded (offscreen) -> build/screenshots/*.png
screenshots: build
	QT_QPA_PLATFORM=offscreen $(BUILD)/bin/gui_screenshots $(BUILD)/screenshots

clean:
	rm -rf $(BUILD)
