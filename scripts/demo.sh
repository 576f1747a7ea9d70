#!/usr/bin/env bash
# The main job on the embedded default: a Mamba-2 2.7B layer written as the
# combined op is parsed, verified, decomposed into the six step ops and
# printed, with a short summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
layer=$root/examples/mamba2-2.7b.mlir

echo "== $layer: parse and verify"
"$bin/ssd-opt" "$layer" > /dev/null
echo "ok"
echo
echo "== ssd-decompose"
decomposed=$("$bin/ssd-opt" "$layer" --ssd-decompose)
echo "$decomposed"
echo
echo "== summary"
for op in combined chunk_cumsum chunk_state state_passing bmm segsum chunk_scan; do
  printf '  ssd.%-14s %d\n' "$op" "$(grep -c "ssd\.$op " <<<"$decomposed" || true)"
done
