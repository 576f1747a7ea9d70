#!/usr/bin/env bash
# Fetches Hugging Face transformers, for the GPU machine's transformers client
# test (python/tests/test_transformers_gpu.py), from PyPI into
# bench/anchors/.cache/hf-wheels/ (ignored by git; carried with the rest of
# bench/anchors/.cache). The GPU suite installs them, with no network and no
# dependency resolution, into a folder of their own only where transformers
# 5.x is not importable (scripts/device/run-gpu-suite.sh, step transformers):
#   python3 -m pip install --no-index --no-deps --target /tmp/hf-site \
#     bench/anchors/.cache/hf-wheels/*.whl
#
#   bench/anchors/fetch-hf.sh            (from anywhere; needs python3 + pip)
#
# What is fetched: the wheels `import transformers` and a Mamba-2 model's
# forward need beside PyTorch, each without its dependencies (checked with
# PyTorch and its own requirements alone on the path): transformers,
# huggingface-hub and what it imports (httpx2, httpcore2, h11, idna,
# truststore), safetensors, regex, pyyaml, tqdm, packaging. Left out, since
# importing transformers and running the model does not need them: tokenizers
# (3.4 MB; text models' tokenizers), hf-xet (4.3 MB; Hub downloads), typer,
# click, rich, pydantic (the command line), and numpy, filelock, fsspec,
# typing-extensions (PyTorch's requirements, installed wherever it is).
# About 17 MB.
#
# Target: CPython $HF_PYTHON (default 3.12, the device image's) on Linux
# $HF_MACHINE (default x86_64). Versions: TRANSFORMERS_VERSION (default
# 5.24.0, the release the CPU tests ran with) and HUB_VERSION (2.4.0).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$here/.cache/hf-wheels
py=${HF_PYTHON:-3.12}
machine=${HF_MACHINE:-x86_64}
transformers_version=${TRANSFORMERS_VERSION:-5.24.0}
hub_version=${HUB_VERSION:-2.4.0}
abi=cp${py/./}

rm -rf "$out"
mkdir -p "$out"
pip=(python3 -m pip download --no-deps --disable-pip-version-check -q --only-binary :all:
     -d "$out" --python-version "$py" --implementation cp --abi "$abi" --abi abi3
     --abi none --platform "manylinux_2_28_$machine" --platform "manylinux_2_17_$machine"
     --platform "manylinux2014_$machine" --platform any)
echo "wheels for CPython $py on $machine: transformers $transformers_version, huggingface-hub $hub_version, ..."
"${pip[@]}" "transformers==$transformers_version" "huggingface-hub==$hub_version" \
  "safetensors==0.8.0" "regex==2026.11.19" "pyyaml==6.0.4" "tqdm==4.70.1" \
  "packaging==26.4" "httpx2==2.16.2" "httpcore2==2.16.2" "h11==0.16.0" "idna==3.20" \
  "truststore==0.10.5"
ls -1 "$out"
du -sh "$out"
echo "carry bench/anchors/.cache to the GPU machine (see bench/anchors/README.md)"
