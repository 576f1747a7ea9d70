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

# The same layer on the CPU backend, on generated inputs of a short sequence,
# against the project's independent reference (a plain double-precision
# recurrence): bf16 inputs, f32 state, chunk size 128.
echo
echo "== CPU backend: Mamba-2 2.7B layer, b=1 L=512, bf16 inputs, f32 state"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/ssd-make-case" -o "$work/case" --name mamba2-2.7b --batch 1 --seqlen 512 \
  --nheads 80 --headdim 64 --dstate 128 --ngroups 1 \
  --features D,dt_bias,softplus --seed 1
"$bin/ssd-run" --case "$work/case" --backend cpu --chunk-size 128 --dtype bf16 \
  --repeat 3
