#!/usr/bin/env bash
# The GPU suite, on the device machine (CUDA, no MLIR). Run from the
# repository root with the folder written by scripts/device/build-artifacts.sh
# carried along (default device-artifacts/):
#   scripts/device/run-gpu-suite.sh [ARTIFACTS_DIR] [RESULTS_DIR]
# Steps, each a PASS/FAIL line (the log of each under RESULTS_DIR):
#   1. runtime-only build (cmake -DSSD_BUILD_COMPILER=OFF) and its unit tests;
#   2. test/Runtime/device/run-on-device.sh (the runtime smoke test), and
#      the tile products and the warp-specialised main loops
#      (ssd-test-tile-product, ssd-test-pipelined-product) against host
#      products, and the whole SSD in one warp-specialised kernel
#      (ssd-test-warp-specialized-ssd) against a float64 chunked SSD, timed;
#   3. every golden case through ssd-run --backend gpu --artifact at chunk
#      sizes 64, 128, 256 in f32, bf16 and f16 (same bounds as the CPU path),
#      for the unfused and the fused strategy (the default state chain, auto:
#      the look-back or the turns per launch; the turns alone; by segments),
#      and the fused one with fp16 states (held to the bf16 bound), each with
#      its largest error; the default fused kernel also at chunk sizes 16
#      and 32 in f32 and bf16 (fused-small-chunks, where the artifacts hold
#      them); then L = 0 launches through the runtime
#      (run_empty_sequence.py: the states pass through), and
#      the fused kernel twice on one case, outputs compared bitwise;
#   4. L = 512K, b=1 h=80 p=64 n=128 (Mamba-2 layer, bf16, chunk 128), both
#      strategies: inputs generated on the device by ssd-bench, y and final
#      states of 4 heads over the whole sequence against the reference;
#      then x, dt, B and C as views of padded rows (ssd-bench --row-pad);
#   5. compute-sanitizer: memcheck on one golden case per strategy, racecheck
#      and synccheck on the fused kernel (racecheck at chunks 64 and 128, the
#      latter on TMA and on cp.async rows), all three on the cluster variant;
#   6. the benchmark (bench/ssd-bench, Mamba-2 2.7B shape), every variant in
#      the same process on the same inputs;
#   and, where ARTIFACTS_DIR/torch exists, the PyTorch op's CUDA tests
#   (python/tests/test_torch_gpu.py) and, where it holds hf-artifacts.txt,
#   the transformers client's (python/tests/test_transformers_gpu.py: Hugging
#   Face Mamba-2 130M and 2.7B prefill, routed, against transformers' torch
#   path and mamba_ssm's Triton SSD; carry bench/anchors/.cache for it)
#   before the sanitizer steps.
# Environment: SSD_SUITE_VARIANTS, the golden variants to run (default: all
# that build-artifacts.sh builds by default); SSD_SUITE_BENCH=0 leaves out
# the benchmark (step 6).
# Writes RESULTS_DIR/gpu-suite.json ({"steps": [{"name", "status", ...}]})
# and RESULTS_DIR/gpu-suite.log. RESULTS_DIR defaults to $OUT, else /tmp.
# Exits non-zero when any step fails.
set -u -o pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
art=${1:-$src/device-artifacts}
res=${2:-${OUT:-/tmp/ssd-gpu-suite}}
mkdir -p "$res"
build=/tmp/ssd-gpu-suite-build
log=$res/gpu-suite.log
json=$res/gpu-suite.json
: >"$log"
steps=()
status=0

record() { # record NAME STATUS DETAIL
  steps+=("{\"name\": \"$1\", \"status\": \"$2\", \"detail\": \"${3//\"/\'}\"}")
  echo "$2: $1${3:+ ($3)}" | tee -a "$log"
  [ "$2" = PASS ] || status=1
}

run_step() { # run_step NAME COMMAND...: logs the output, records PASS/FAIL
  local name=$1
  shift
  echo "=== $name: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then record "$name" PASS ""; else record "$name" FAIL "exit $?"; fi
}

[ -d "$art/golden" ] || { echo "error: no artifacts at $art (run build-artifacts.sh where MLIR is)"; exit 2; }
nvidia-smi -L | tee -a "$log"
head -n 3 "$art/manifest.txt" | tee -a "$log"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# ssd-run's flag parser (cxxopts.hpp): the copy build-artifacts.sh carries,
# as this machine has no apt, for this configure and run-on-device.sh's (the
# environment variable); a system one where the copy is absent.
cxxopts=()
if [ -f "$art/include/cxxopts.hpp" ]; then
  export SSD_CXXOPTS_INCLUDE_DIR
  SSD_CXXOPTS_INCLUDE_DIR=$(cd "$art/include" && pwd)
  cxxopts=(-DSSD_CXXOPTS_INCLUDE_DIR="$SSD_CXXOPTS_INCLUDE_DIR")
fi
run_step configure cmake -S "$src" -B "$build" "${generator[@]}" \
  -DSSD_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release "${cxxopts[@]}" || true
run_step build cmake --build "$build" -j "$(nproc)"
run_step runtime-unit-tests ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
run_step runtime-smoke "$src/test/Runtime/device/run-on-device.sh" /tmp/ssd-rt-smoke

# A kernel that hangs (a hand-off that never comes) fails its step, not the
# whole call: every GPU run has a time limit (exit 124 when it is hit).
ssd_run_bin=$build/bin/ssd-run
ssd_run() { timeout 120 "$ssd_run_bin" "$@"; }
# max_err VARIANT: the largest max_rel_err the variant's golden runs printed.
max_err() {
  grep "^$1 " -A2 "$log" | grep -o 'max_rel_err=[0-9.e+-]*' | cut -d= -f2 |
    sort -g | tail -n 1
}
# The commit the artifacts were built from (the device's copy of the
# repository may not hold its history): every result file records it.
commit=$(head -n 1 "$art/manifest.txt" | awk '{print $2}' | tr '+' '-')
export SSD_COMMIT=${SSD_COMMIT:-$commit}
run_step tile-products python3 "$src/scripts/device/run_tile_products.py" "$art/tile-products" \
  --json "$res/tile-products.json"
[ -f "$art/pipelined-products/cases.txt" ] &&
  run_step pipelined-products python3 "$src/scripts/device/run_pipelined_products.py" \
    "$art/pipelined-products" --json "$res/pipelined-products.json"
[ -f "$art/warp-specialized-ssd/cases.txt" ] &&
  run_step warp-specialized-ssd python3 "$src/scripts/device/run_warp_specialized_ssd.py" \
    "$art/warp-specialized-ssd" --json "$res/warp-specialized-ssd.json"

# The golden cases at chunks 64, 128, 256 in f32, bf16, f16 for each
# variant; where build-artifacts.sh built them, the default fused kernel's
# at chunks 16 and 32 (f32, bf16) as the variant fused-small-chunks.
variants=${SSD_SUITE_VARIANTS:-unfused fused fused-segment fused-f16state fused-wgmma fused-cp-async fused-lookback fused-chunk fused-cluster fused-ws fused-ws-pieces fused-ws-f16state}
[ -d "$art/golden-art/fused-small-chunks" ] && variants="$variants fused-small-chunks"
for variant in $variants; do
  state_flags=()
  [[ $variant == *f16state ]] && state_flags=(--state-dtype f16)
  chunks="64 128 256" dtypes="f32 bf16 f16"
  [ "$variant" = fused-small-chunks ] && chunks="16 32" dtypes="f32 bf16"
  pass=0
  fail=0
  skipped=0
  failed=()
  for case in "$art"/golden/*/; do
    name=$(basename "$case")
    for q in $chunks; do
      for dtype in $dtypes; do
        a="$art/golden-art/$variant/$name-q$q-$dtype"
        # A layer the variant does not apply to (build-artifacts.sh says why).
        if [ -f "$a.skipped" ]; then skipped=$((skipped + 1)); continue; fi
        out=$(ssd_run --case "$case" --backend gpu --artifact "$a" \
                --chunk-size "$q" --dtype "$dtype" "${state_flags[@]}" 2>&1)
        rc=$?
        echo "$variant $out" >>"$log"
        if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$name-q$q-$dtype:rc$rc"); fi
      done
    done
  done
  err=$(max_err "$variant")
  if [ $fail -eq 0 ] && [ $pass -gt 0 ]; then
    record "golden-gpu-$variant" PASS "$pass runs, max_rel_err=$err$([ $skipped -gt 0 ] && echo ", $skipped layers the variant does not apply to")"; else
    record "golden-gpu-$variant" FAIL "$pass passed, $fail failed: ${failed[*]}"; fi
done

# Sequences without tokens: every state passes through, on each strategy's
# artifact (the fused kernel runs its init and final items only).
empty_sequence=()
for variant in ${SSD_SUITE_VARIANTS:-unfused fused fused-chunk fused-ws fused-ws-pieces}; do
  [ -d "$art/empty-sequence/$variant" ] && empty_sequence+=("$art/empty-sequence/$variant")
done
if [ ${#empty_sequence[@]} -gt 0 ]; then
  run_step empty-sequence env PYTHONPATH="$src/python" SSD_MLIR_RUNTIME_LIB="$build/lib" \
    timeout 120 python3 "$src/scripts/device/run_empty_sequence.py" "${empty_sequence[@]}"
fi

# Determinism: the persistent and the warp-specialised kernels twice on one
# case each, outputs bitwise equal.
for variant in fused fused-ws-pieces; do
  repeat_art="$art/golden-art/$variant/c05_mamba2_head-q128-bf16"
  [ -d "$repeat_art" ] || continue
  repeat_dir=$res/repeat
  rm -rf "$repeat_dir"
  mkdir -p "$repeat_dir/1" "$repeat_dir/2"
  for run in 1 2; do
    ssd_run --case "$art/golden/c05_mamba2_head" --backend gpu \
      --artifact "$repeat_art" --chunk-size 128 \
      --dtype bf16 --out "$repeat_dir/$run" >>"$log" 2>&1
  done
  if cmp "$repeat_dir/1/y.npy" "$repeat_dir/2/y.npy" >>"$log" 2>&1 &&
     cmp "$repeat_dir/1/final_states.npy" "$repeat_dir/2/final_states.npy" >>"$log" 2>&1; then
    record "$variant-bitwise-repeat" PASS "c05 bf16 Q=128, y and final_states"
  else
    record "$variant-bitwise-repeat" FAIL "c05 bf16 Q=128: outputs differ between runs"
  fi
  rm -rf "$repeat_dir"
done

# Packed sequences stay apart: the first tokens of x09's sequences 4 and 2
# poisoned (x infinite, B and C NaN), every other sequence's outputs bit for
# bit as without (the tokens partial last chunks read past their sequence's
# end).
for variant in ${SSD_SUITE_VARIANTS:-fused fused-ws fused-ws-pieces fused-ws-f16state}; do
  iso_art="$art/golden-art/$variant/x09_varlen_warp_specialized-q128-bf16"
  [ -d "$iso_art" ] || continue
  state_dtype=f32; [ "$variant" = fused-ws-f16state ] && state_dtype=f16
  for k in 4 2; do
    run_step "$variant-sequence-isolation-$k" timeout 120 python3 "$src/scripts/device/run_sequence_isolation.py" \
      --ssd-run "$ssd_run_bin" --case "$art/golden/x09_varlen_warp_specialized" --poison-sequence $k \
      --backend gpu --artifact "$iso_art" --chunk-size 128 --dtype bf16 --state-dtype $state_dtype
  done
done

# Long sequence: int32 index overflow and the state chain at 512K tokens.
# '+' (as in abc1234+dirty) is not allowed in the result file names.
long_runs=()
for variant in default unfused fused fused-cp-async fused-ws; do
  [ -d "$art/mamba2-$variant-q128-bf16" ] && long_runs+=(--run "$art/mamba2-$variant-q128-bf16:1:524288")
done
run_step long-512k timeout 300 "$build/bin/ssd-bench" "${long_runs[@]}" \
  --warmup 1 --iters 3 --check-heads 4 --check-tokens 0 --what long-512k \
  --commit "$commit" \
  --json "$res/long-512k.json"
check_bench_error() { # check_bench_error NAME JSON: every row within the bf16 bound
  [ -f "$2" ] || return 0
  local err ok
  err=$(python3 -c "import json;r=json.load(open('$2'))['rows'];print(max(x['max_rel_err'] for x in r) if r else 'nan')" 2>/dev/null)
  ok=$(python3 -c "print(1 if float('$err') <= 1.5e-2 else 0)" 2>/dev/null)
  [ "$ok" = 1 ] && record "$1" PASS "max_rel_err=$err (bf16 bound 1.5e-2)" \
                || record "$1" FAIL "max_rel_err=$err (bf16 bound 1.5e-2)"
}
check_bench_error long-512k-accuracy "$res/long-512k.json"

# x, dt, B, C (and z) as views of padded token rows, as a model's projection
# split hands them over: the kernels read them in place (the padding holds
# NaN), every strategy, two batch rows, the whole sequence checked.
view_runs=()
for variant in unfused fused fused-cp-async fused-ws; do
  [ -d "$art/mamba2-$variant-q128-bf16" ] && view_runs+=(--run "$art/mamba2-$variant-q128-bf16:2:3000")
done
run_step projection-views timeout 300 "$build/bin/ssd-bench" "${view_runs[@]}" \
  --row-pad 8 --warmup 1 --iters 3 --check-heads 4 --check-tokens 0 \
  --what projection-views --commit "$commit" --json "$res/projection-views.json"
check_bench_error projection-views-accuracy "$res/projection-views.json"

# The PyTorch op on CUDA tensors (reference cases, in_proj views, streams,
# CUDA graph replay, torch.compile), on the runtime built above.
if [ -d "$art/torch/cases" ]; then
  run_step torch-op env SSD_MLIR_RUNTIME_LIB="$build/lib" \
    SSD_MLIR_ARTIFACTS="$art/torch/artifacts" SSD_MLIR_TORCH_CASES="$art/torch/cases" \
    SSD_MLIR_CACHE="$res/torch-cache" timeout 600 python3 -m pytest -q -p no:cacheprovider \
    "$src/python/tests/test_torch_gpu.py"
fi

# Hugging Face transformers' Mamba-2 (130M and 2.7B shapes, random weights,
# a 1x2048 prefill) with its SSD routed to the op: logits against
# transformers' torch path, prefill times against it and against mamba_ssm's
# Triton SSD routed in (python/tests/test_transformers_gpu.py; times in
# RESULTS_DIR/hf-mamba2.json), where build-torch-cases.py built the models'
# artifacts. Needs bench/anchors/.cache carried (fetch.sh: mamba_ssm's Triton
# files; fetch-hf.sh: transformers' wheels, installed into a folder of their
# own only where transformers 5.x is not importable).
if [ -f "$art/torch/hf-artifacts.txt" ]; then
  anchors=${SSD_ANCHORS_CACHE:-$src/bench/anchors/.cache}
  hf_site=
  if ! python3 -c 'import sys, transformers; sys.exit(int(transformers.__version__.split(".")[0]) < 5)' 2>/dev/null; then
    hf_site=/tmp/ssd-hf-site
    run_step transformers-install python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --upgrade --target "$hf_site" "$anchors"/hf-wheels/*.whl
  fi
  run_step transformers-mamba2 env ${hf_site:+PYTHONPATH=$hf_site${PYTHONPATH:+:$PYTHONPATH}} \
    SSD_MLIR_RUNTIME_LIB="$build/lib" SSD_MLIR_ARTIFACTS="$art/torch/artifacts" \
    SSD_MLIR_CACHE="$res/torch-cache" SSD_MLIR_ANCHORS_CACHE="$anchors" \
    SSD_MLIR_HF_RESULTS="$res/hf-mamba2.json" timeout 600 python3 -m pytest -q -s \
    -p no:cacheprovider "$src/python/tests/test_transformers_gpu.py"
  [ -f "$res/hf-mamba2.json" ] && python3 - "$res/hf-mamba2.json" <<'PY' | tee -a "$log"
import json, sys
doc = json.load(open(sys.argv[1]))
for name, row in doc["models"].items():
    ms = ", ".join(f"{k} {v:.2f} ms" for k, v in row.get("ms", {}).items())
    err = row.get("bf16_max_rel_err_ssd_mlir")
    print(f"note: {name} prefill {doc['batch']}x{doc['seqlen']} bf16: {ms or 'not timed'}; "
          f"logits max_rel_err {err if err is None else f'{err:.2e}'} (transformers {doc['transformers']})")
PY
fi

sanitizer=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
# The unfused kernels only where their artifacts were built (as wgmma below).
if [ -d "$art/golden-art/unfused" ]; then
  run_step memcheck timeout 300 "$sanitizer" --tool memcheck --error-exitcode 9 \
    "$ssd_run_bin" --case "$art/golden/c02_all_features" --backend gpu \
    --artifact "$art/golden-art/unfused/c02_all_features-q64-f32" --chunk-size 64
else
  echo "note: memcheck of the unfused kernels not run (no unfused artifacts in $art)" | tee -a "$log"
fi
run_step memcheck-fused timeout 300 "$sanitizer" --tool memcheck --error-exitcode 9 \
  "$ssd_run_bin" --case "$art/golden/c04_varlen" --backend gpu \
  --artifact "$art/golden-art/fused/c04_varlen-q64-bf16" --chunk-size 64 --dtype bf16
run_step racecheck-fused timeout 300 "$sanitizer" --tool racecheck --error-exitcode 9 \
  "$ssd_run_bin" --case "$art/golden/c02_all_features" --backend gpu \
  --artifact "$art/golden-art/fused/c02_all_features-q64-f32" --chunk-size 64
# The wgmma variant only where its artifacts were built (build-artifacts.sh
# with SSD_ARTIFACT_VARIANTS may leave it out; then the log says so).
if [ -d "$art/golden-art/fused-wgmma" ]; then
  run_step racecheck-fused-wgmma timeout 300 "$sanitizer" --tool racecheck --error-exitcode 9 \
    "$ssd_run_bin" --case "$art/golden/c03_seq_idx" --backend gpu \
    --artifact "$art/golden-art/fused-wgmma/c03_seq_idx-q64-bf16" --chunk-size 64 --dtype bf16
else
  echo "note: racecheck-fused-wgmma not run (no fused-wgmma artifacts in $art)" | tee -a "$log"
fi
# The fused kernel's TMA copies (mbarrier-completed, into swizzled rows; the
# default on sm_90a) on x02_tma_features: the golden cases' head and state
# sizes other than c05's take cp.async, which would leave them unchecked.
tma_art=$art/golden-art/fused/x02_tma_features-q64-bf16
if [ -d "$tma_art" ]; then
  grep -q '"kind": "tma"' "$tma_art/manifest.json" ||
    record fused-tma-sanitizer-case FAIL "$tma_art does not copy by TMA"
  for tool in memcheck racecheck synccheck; do
    run_step $tool-fused-tma timeout 300 "$sanitizer" --tool $tool --error-exitcode 9 \
      "$ssd_run_bin" --case "$art/golden/x02_tma_features" --backend gpu \
      --artifact "$tma_art" --chunk-size 64 --dtype bf16
  done
else
  echo "note: the TMA sanitizer runs not run (no $tma_art)" | tee -a "$log"
fi
# Chunk 128 (one 128-row scan tile, the Mamba-2 layer's chunk size) on both
# row paths: TMA (the default) and cp.async (the default without TMA).
for variant in fused fused-cp-async; do
  a=$art/golden-art/$variant/x02_tma_features-q128-bf16
  if [ -d "$a" ]; then
    run_step racecheck-$variant-q128 timeout 300 "$sanitizer" --tool racecheck --error-exitcode 9 \
      "$ssd_run_bin" --case "$art/golden/x02_tma_features" --backend gpu \
      --artifact "$a" --chunk-size 128 --dtype bf16
  else
    echo "note: racecheck-$variant-q128 not run (no $a)" | tee -a "$log"
  fi
done
# all_sanitizers VARIANT CASE: memcheck, racecheck and synccheck on the
# variant's artifact of CASE at chunk 128 (bf16); returns 1 where it is not
# built.
all_sanitizers() {
  local a=$art/golden-art/$1/$2-q128-bf16 tool
  [ -d "$a" ] || return 1
  for tool in memcheck racecheck synccheck; do
    run_step $tool-$1-q128 timeout 300 "$sanitizer" --tool $tool --error-exitcode 9 \
      "$ssd_run_bin" --case "$art/golden/$2" --backend gpu \
      --artifact "$a" --chunk-size 128 --dtype bf16
  done
}
# Clusters: the paired tickets, the multicast rows and the rows-free
# barrier, on the case with odd item counts.
all_sanitizers fused-cluster x03_cluster_odd ||
  echo "note: the cluster sanitizer runs not run (no fused-cluster artifacts)" | tee -a "$log"
# The warp-specialised kernels: the prep warps' stages, the y tiles and
# their barriers; pieces on a ragged case, the unfactored weights alone.
all_sanitizers fused-ws-pieces x05_warp_specialized ||
  echo "note: the pieces sanitizer runs not run (no fused-ws-pieces artifacts)" | tee -a "$log"
all_sanitizers fused-ws x06_wide_decays ||
  echo "note: the wide-decay sanitizer runs not run (no fused-ws artifacts)" | tee -a "$log"
run_step racecheck-fused-bf16 timeout 300 "$sanitizer" --tool racecheck --error-exitcode 9 \
  "$ssd_run_bin" --case "$art/golden/c03_seq_idx" --backend gpu \
  --artifact "$art/golden-art/fused/c03_seq_idx-q64-bf16" --chunk-size 64 --dtype bf16
run_step synccheck-fused timeout 300 "$sanitizer" --tool synccheck --error-exitcode 9 \
  "$ssd_run_bin" --case "$art/golden/c03_seq_idx" --backend gpu \
  --artifact "$art/golden-art/fused/c03_seq_idx-q64-bf16" --chunk-size 64 --dtype bf16

if [ "${SSD_SUITE_BENCH:-1}" != 0 ]; then
  mkdir -p "$res/bench"
  runs=()
  for variant in default unfused fused fused-segment fused-f16state fused-wgmma fused-cp-async fused-lookback fused-cluster; do
    for q in 128 256; do
      [ -d "$art/mamba2-$variant-q$q-bf16" ] || continue
      for bl in 1:2048 1:16384 1:131072 8:16384; do runs+=(--run "$art/mamba2-$variant-q$q-bf16:$bl"); done
    done
  done
  run_step bench timeout 300 "$build/bin/ssd-bench" "${runs[@]}" --warmup 10 --iters 30 \
    --check-heads 2 --check-tokens 2048 --what fused-vs-unfused-mamba2 --commit "$commit" \
    --results-dir "$res/bench"
  cp "$res"/bench/*.json "$res/" 2>/dev/null
fi

{
  echo "{\"commit\": \"$commit\", \"status\": \"$([ $status -eq 0 ] && echo PASS || echo FAIL)\", \"steps\": ["
  for i in "${!steps[@]}"; do echo "  ${steps[$i]}$([ $((i + 1)) -lt ${#steps[@]} ] && echo ,)"; done
  echo "]}"
} >"$json"
echo "wrote $json"
exit $status
