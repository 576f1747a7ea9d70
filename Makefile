# The two commands of the README. Both install what is missing, configure
# and build into build/ (tools in build/bin/), then run.
BUILD_DIR ?= build
PYTHON ?= python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit

.PHONY: demo test deps build check-lit check-python check-wheel check-runtime-only check-fuzz \
	check-property check-sanitizers check-consumer clean

demo: build
	./scripts/demo.sh

test: build
	$(MAKE) check-lit check-python check-wheel check-runtime-only check-fuzz check-property \
	  check-sanitizers check-consumer

deps:
	./scripts/install-deps.sh

build: deps
	cmake -G Ninja -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR)

check-lit:
	cmake --build $(BUILD_DIR) --target check-ssd

# The tests (the PyTorch op's too: the torch extra installs PyTorch; its
# CUDA tests skip without a GPU; the numpy extra, numpy for the op on numpy
# arrays; the transformers extra, Hugging Face transformers for the Mamba-2
# client's tests; python/constraints-ci.txt bounds them to the releases
# tested), then a static type check of
# the package (mypy --strict; its settings are in python/pyproject.toml).
check-python:
	$(PYTHON) -m pip install -q -c python/constraints-ci.txt -e 'python[test,numpy,torch,transformers]'
	SSD_MLIR_LIB=$(abspath $(BUILD_DIR))/lib $(PYTHON) -m pytest -q python/tests
	$(PYTHON) -m mypy --strict --config-file python/pyproject.toml \
	  --cache-dir python/.mypy_cache python/ssd_mlir

# The platform wheel (python/README.md): built from this build with the
# package's backend (pip wheel ./python -C ssd-mlir-build=BUILD), its contents
# checked (unzip -l: the libraries, the py3-none-<platform> tag, RUNPATH
# $ORIGIN, RECORD), installed into a fresh venv and smoke-tested there
# without $SSD_MLIR_LIB (scripts/wheel/smoke.py: version, parse and verify,
# a pipeline, a CPU layer against the reference). About 20 s.
check-wheel:
	$(PYTHON) scripts/wheel/check_wheel.py --build $(BUILD_DIR) --work $(BUILD_DIR)/wheel

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

# Random layer cases (every optional input, packed and varlen, chunk sizes 1
# to 4096, f32/bf16/f16) through ssd-run's CPU path against the reference,
# a fixed seed; failing cases are kept in $(BUILD_DIR)/property-failures
# with the command that reruns them. See docs/testing.md for the GPU run.
PROPERTY_CASES ?= 200
EMBEDDED_PROPERTY_CASES ?= 100
check-property:
	$(PYTHON) scripts/fuzz/property_cases.py --bin $(BUILD_DIR)/bin \
	  --cases $(PROPERTY_CASES) --seed 1 --failures $(BUILD_DIR)/property-failures
	# The same kind of cases through the Python package's dynamic-shape kernels.
	$(PYTHON) scripts/fuzz/property_cases.py --bin $(BUILD_DIR)/bin --backend embedded \
	  --cases $(EMBEDDED_PROPERTY_CASES) --seed 1 \
	  --failures $(BUILD_DIR)/property-failures-embedded

# The tools, runtime and unit tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer (SSD_SANITIZE; -O1 keeps the build short), then
# the lit suite, ctest, and short passes of the property test and the fuzzer
# run there. A report aborts the process, so that it fails its test even
# where the test expects a non-zero exit status. Leak checking stays on: MLIR's
# registries are held by globals, which LeakSanitizer counts as reachable.
# The Python package's tests are left out: its ctypes library would need the
# ASan runtime preloaded into the interpreter.
SANITIZE_DIR ?= $(BUILD_DIR)/sanitize
SANITIZER_ENV = \
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1 \
  UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1 \
  ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
check-sanitizers:
	cmake -G Ninja -S . -B $(SANITIZE_DIR) $(CMAKE_FLAGS) -DSSD_SANITIZE=ON \
	  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG"
	cmake --build $(SANITIZE_DIR)
	$(SANITIZER_ENV) cmake --build $(SANITIZE_DIR) --target check-ssd
	$(SANITIZER_ENV) ctest --test-dir $(SANITIZE_DIR) --output-on-failure
	$(SANITIZER_ENV) $(PYTHON) scripts/fuzz/property_cases.py --bin $(SANITIZE_DIR)/bin \
	  --cases 30 --seed 2 --failures $(SANITIZE_DIR)/property-failures
	$(SANITIZER_ENV) $(PYTHON) scripts/fuzz/fuzz_ssd_opt.py --ssd-opt $(SANITIZE_DIR)/bin/ssd-opt \
	  --inputs 100 --seed 2 --crashes $(SANITIZE_DIR)/fuzz-crashes

clean:
	rm -rf $(BUILD_DIR)
