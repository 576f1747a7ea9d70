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

# The same layer compiled for Hopper (sm_90a) by ssd-compile with each GPU
# strategy; ptxas reports registers and shared memory per kernel. Running it
# needs a GPU: ssd-run --backend gpu (here, when one answers) or
# scripts/device/run-gpu-suite.sh on a GPU machine without MLIR.
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
for strategy in fused unfused; do
  echo
  echo "== sm_90a, strategy $strategy: the kernels, registers and shared memory (ptxas)"
  "$bin/ssd-compile" "$layer" --target sm_90a --strategy "$strategy" -o "$work/art-$strategy"
  # ptxas below counts static shared memory; the manifest gives each kernel's
  # dynamic shared memory (the fused kernel's arena), set at launch.
  python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print('  %d kernel(s): %s' % (len(m['kernels']), ', '.join('%s (%s bytes dynamic shared memory)' % (k['name'], k.get('shared_memory', 0)) for k in m['kernels'])))" \
    "$work/art-$strategy/manifest.json"
  if [ -x "$ptxas" ]; then
    "$bin/ssd-opt" "$layer" --ssd-gpu-$strategy-pipeline="format=isa" -o "$work/$strategy.mlir"
    python3 "$root/scripts/gpu-binary-ptx.py" "$work/$strategy.mlir" "$work/$strategy.ptx"
    "$ptxas" -v -arch=sm_90a "$work/$strategy.ptx" -o "$work/$strategy.cubin" 2>&1 |
      grep -E "Compiling entry|Used [0-9]+ registers" | sed 's/^ptxas info *: /  /'
  else
    echo "  (ptxas not found: no resource report)"
  fi
done
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "== GPU run of the layer (fused)"
  "$bin/ssd-run" --case "$work/case" --backend gpu --strategy fused --chunk-size 128 --dtype bf16
fi
