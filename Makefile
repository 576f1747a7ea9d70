# The two commands of the README. Both install what is missing, configure
# and build into build/ (tools in build/bin/), then run.
BUILD_DIR ?= build
PYTHON ?= python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit

.PHONY: demo test deps build check-lit check-python check-runtime-only check-fuzz check-consumer clean

demo: build
	./scripts/demo.sh

test: build
	$(MAKE) check-lit check-python check-runtime-only check-fuzz check-consumer

deps:
	./scripts/install-deps.sh

build: deps
	cmake -G Ninja -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)

check-lit:
	cmake --build $(BUILD_DIR) --target check-ssd

check-python:
	$(PYTHON) -m pip install -q -e python[test]
	SSD_MLIR_LIB=$(abspath $(BUILD_DIR))/lib $(PYTHON) -m pytest -q python/tests

# The runtime alone, as a GPU machine without LLVM/MLIR builds it.
check-runtime-only:
	cmake -G Ninja -S . -B $(BUILD_DIR)/runtime-only -DCMAKE_BUILD_TYPE=Release -DSSD_BUILD_COMPILER=OFF
	cmake --build $(BUILD_DIR)/runtime-only
	ctest --test-dir $(BUILD_DIR)/runtime-only --output-on-failure

# A bounded run of the mutation fuzzer over ssd-opt (parse, verify, every
# pipeline): a fixed seed, so that CI reruns the same inputs; for a longer
# exploring run: scripts/fuzz/fuzz_ssd_opt.py --seconds 3600 --seed N.
FUZZ_INPUTS ?= 150
check-fuzz:
	$(PYTHON) scripts/fuzz/fuzz_ssd_opt.py --ssd-opt $(BUILD_DIR)/bin/ssd-opt \
	  --inputs $(FUZZ_INPUTS) --seed 1 --crashes $(BUILD_DIR)/fuzz-crashes

# The installed CMake package as another project uses it: install the build
# into a fresh prefix, build test/Consumer against it alone (find_package),
# run its programs, the installed ssd-opt and the installed mlir-opt plugin.
INSTALL_DIR = $(abspath $(BUILD_DIR))/install
check-consumer:
	rm -rf $(INSTALL_DIR) $(BUILD_DIR)/consumer
	cmake --install $(BUILD_DIR) --prefix $(INSTALL_DIR)
	cmake -G Ninja -S test/Consumer -B $(BUILD_DIR)/consumer -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_PREFIX_PATH=$(INSTALL_DIR) -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
	cmake --build $(BUILD_DIR)/consumer
	ctest --test-dir $(BUILD_DIR)/consumer --output-on-failure

clean:
	rm -rf $(BUILD_DIR)
