#!/usr/bin/env bash
# On the GPU machine, from the repository root, with bench/anchors/.cache
# (bench/anchors/fetch.sh) and device-artifacts/ (scripts/device/build-artifacts.sh)
# carried along: installs the carried wheels into /tmp/anchors-site (no network,
# no dependencies fetched: torch, triton, jax, einops and numpy are the machine's)
# and runs run_anchors.py with the given flags, e.g.
#   bench/anchors/run.sh --artifacts device-artifacts --out "$OUT"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${ANCHORS_CACHE:-$here/.cache}
site=${ANCHORS_SITE:-/tmp/anchors-site}
[ -d "$cache/wheels" ] || { echo "error: no $cache/wheels (run bench/anchors/fetch.sh where PyPI is reachable, carry the folder)"; exit 2; }
install=(python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site")
"${install[@]}" "$cache"/wheels/*.whl
python3 -c 'import packaging' 2>/dev/null || "${install[@]}" "$cache"/wheels/extra/*.whl
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
exec python3 "$here/run_anchors.py" --cache "$cache" "$@"
