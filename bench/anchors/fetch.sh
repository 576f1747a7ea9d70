#!/usr/bin/env bash
# Fetches the anchors (the public SSD implementations the project is measured
# against) from PyPI into bench/anchors/.cache/ (ignored by git), the folder to
# carry to the GPU machine, which has no network:
#   .cache/wheels/        fla-core (chunk_simple_gla), jax-linear-attention
#                         (Mosaic GPU simple GLA / Mamba-2 SSD) and equinox +
#                         wadler-lindig (imported by jla.layers), pure-Python
#                         wheels for Python 3.12, installed there with
#                         pip install --no-index --no-deps --target
#   .cache/wheels/extra/  packaging, installed there only where it is missing
#   .cache/mamba/         the Triton files of mamba-ssm's source distribution
#                         that mamba_ssm.ops.triton.ssd_combined's forward
#                         imports, and nothing else: no package __init__.py
#                         (mamba_ssm/__init__.py imports the CUDA extensions;
#                         run_anchors.py registers the packages itself)
#   .cache/sdist/         the mamba-ssm source distribution as downloaded
#
#   bench/anchors/fetch.sh            (from anywhere; needs python3 + pip)
# Versions: override with FLA_VERSION, JLA_VERSION, MAMBA_VERSION.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=$here/.cache
fla_version=${FLA_VERSION:-0.6.0}
jla_version=${JLA_VERSION:-0.1.0}
mamba_version=${MAMBA_VERSION:-2.3.2.post1}
pip=(python3 -m pip download --no-deps --disable-pip-version-check -q)
wheel_target=(--only-binary :all: --python-version 3.12 --implementation py --platform any)

# Its own folders only: fetch-hf.sh keeps its wheels in .cache/hf-wheels.
rm -rf "$cache/wheels" "$cache/sdist" "$cache/mamba"
mkdir -p "$cache/wheels/extra" "$cache/sdist" "$cache/mamba"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "wheels: fla-core $fla_version, jax-linear-attention $jla_version, equinox, wadler-lindig"
"${pip[@]}" "${wheel_target[@]}" -d "$cache/wheels" \
  "fla-core==$fla_version" "jax-linear-attention==$jla_version" \
  "equinox==0.13.8" "wadler-lindig==0.1.8"
"${pip[@]}" "${wheel_target[@]}" -d "$cache/wheels/extra" "packaging"

# mamba-ssm is published as a source distribution only. pip reads its
# metadata before it keeps the file, and its setup.py imports torch (absent
# here) and builds CUDA extensions unless MAMBA_SKIP_CUDA_BUILD=TRUE. For the
# metadata step alone: a stand-in 'torch' whose cpp_extension names are all
# None, and the 'wheel' package setup.py imports, on PYTHONPATH, without
# build isolation (which would drop PYTHONPATH). Nothing is built or run.
mkdir -p "$tmp/py/torch/utils"
cat >"$tmp/py/torch/__init__.py" <<'PY'
# Stand-in for the metadata step of mamba-ssm's setup.py (fetch.sh); not torch.
__version__ = "0.0"


class version:
    cuda = None
    hip = None
PY
: >"$tmp/py/torch/utils/__init__.py"
cat >"$tmp/py/torch/utils/cpp_extension.py" <<'PY'
def __getattr__(name):  # BuildExtension, CUDAExtension, CUDA_HOME, ...
    return None
PY
"${pip[@]}" "${wheel_target[@]}" -d "$tmp/whl" "wheel<0.46"
python3 - "$tmp/whl" "$tmp/py" <<'PY'
import glob, sys, zipfile
for w in glob.glob(sys.argv[1] + "/*.whl"):
    zipfile.ZipFile(w).extractall(sys.argv[2])
PY
if ! python3 -c 'import setuptools' 2>/dev/null; then
  "${pip[@]}" "${wheel_target[@]}" -d "$tmp/whl2" "setuptools"
  python3 -c 'import glob,sys,zipfile; [zipfile.ZipFile(w).extractall(sys.argv[2]) for w in glob.glob(sys.argv[1]+"/*.whl")]' \
    "$tmp/whl2" "$tmp/py"
fi
echo "sdist: mamba-ssm $mamba_version"
MAMBA_SKIP_CUDA_BUILD=TRUE PYTHONPATH="$tmp/py" "${pip[@]}" --no-binary :all: \
  --no-build-isolation -d "$cache/sdist" "mamba-ssm==$mamba_version"

# The forward's files, then a check that every mamba_ssm module they import
# was taken (a newer release that adds one fails here, not on the device).
python3 - "$cache/sdist" "$cache/mamba" <<'PY'
import glob, os, re, sys, tarfile
sdist, = glob.glob(os.path.join(sys.argv[1], "mamba_ssm-*.tar.gz"))
out = sys.argv[2]
wanted = ["mamba_ssm/ops/triton/" + f + ".py" for f in
          ("ssd_combined", "ssd_chunk_state", "ssd_state_passing", "ssd_bmm",
           "ssd_chunk_scan", "layernorm_gated", "k_activations", "softplus")]
wanted += ["mamba_ssm/utils/torch.py", "mamba_ssm/utils/determinism.py", "LICENSE", "AUTHORS"]
with tarfile.open(sdist) as tar:
    members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
    for name in wanted:
        if name not in members:
            if name in ("LICENSE", "AUTHORS"):
                continue
            sys.exit(f"fetch.sh: {name} is not in {os.path.basename(sdist)}")
        data = tar.extractfile(members[name]).read()
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
missing = set()
for path in glob.glob(os.path.join(out, "mamba_ssm", "**", "*.py"), recursive=True):
    for line in open(path, encoding="utf-8"):
        # Module-level imports only: the forward never reaches the indented ones.
        m = re.match(r"from (mamba_ssm(?:\.\w+)+) import", line)
        if m and not os.path.exists(os.path.join(out, *m.group(1).split(".")) + ".py"):
            missing.add(m.group(1))
if missing:
    sys.exit("fetch.sh: the extracted files import modules not taken: " + ", ".join(sorted(missing)))
print("mamba_ssm files:", len(glob.glob(os.path.join(out, "mamba_ssm", "**", "*.py"), recursive=True)))
PY

du -sh "$cache"
echo "carry bench/anchors/.cache to the GPU machine (see bench/anchors/README.md)"
