#!/usr/bin/env bash
# Device smoke test of the SSD runtime, for a GPU machine without MLIR:
# builds the runtime-only CMake configuration, runs its unit tests, builds
# the artifact (kernels.cu + manifest.json) with nvcc, runs smoke.cpp on it.
# Prints PASS/FAIL lines; exits non-zero on any FAIL.
#   test/Runtime/device/run-on-device.sh [WORK_DIR]
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
work=${1:-$(mktemp -d /tmp/ssd-rt-device.XXXXXX)}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda/bin/nvcc}
cxx=${CXX:-c++}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
mkdir -p "$work/artifact"
status=0

step() { # step NAME COMMAND...: runs it, prints PASS/FAIL, keeps the log
  local name=$1 log="$work/$1.log"
  shift
  if "$@" >"$log" 2>&1; then
    echo "PASS: $name"
  else
    echo "FAIL: $name (log: $log)"
    tail -n 30 "$log"
    status=1
    return 1
  fi
}

nvidia-smi -L 2>/dev/null | head -n 4

step configure cmake -S "$src" -B "$work/build" "${generator[@]}" \
  -DSSD_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release || exit 1
step build cmake --build "$work/build" -j "$(nproc)" || exit 1
step unit-tests ctest --test-dir "$work/build" --output-on-failure -j "$(nproc)"

step artifact "$nvcc" -cubin -arch=sm_90a -O3 -o "$work/artifact/kernels.cubin" \
  "$here/kernels.cu" || exit 1
cp "$here/manifest.json" "$work/artifact/manifest.json"

# The smoke program allocates through the driver itself, so it links libcuda
# (the stub at build time); the runtime it tests does not.
step smoke-build "$cxx" -std=c++17 -O1 -Wall -o "$work/smoke" "$here/smoke.cpp" \
  -I"$src/include" -I"$cuda/include" -L"$work/build/lib" -lSSDRuntime \
  -L"$cuda/lib64/stubs" -L"$cuda/lib64" -lcuda -Wl,-rpath,"$work/build/lib" || exit 1

echo "== smoke"
"$work/smoke" "$work/artifact" || status=1

if command -v compute-sanitizer >/dev/null; then
  step sanitizer compute-sanitizer --error-exitcode 1 "$work/smoke" "$work/artifact"
fi

echo "== $( ((status)) && echo FAIL || echo PASS ): runtime device smoke test (work dir $work)"
exit $status
