#!/usr/bin/env bash
# Precompiles, where MLIR is installed, everything scripts/device/run-gpu-suite.sh
# runs on the GPU machine (which has no MLIR), into one folder to carry there:
#   OUT_DIR/golden/<case>/              the golden cases (../shared does not travel)
#                                      and the generated extra cases (x01 to x08)
#   OUT_DIR/golden-art/<variant>/<case>-q<Q>-<dtype>/   one artifact per
#                                      variant (unfused, fused, fused-segment: the fused
#                                      kernel with its state chain by segments,
#                                      fused-lookback[-f16state]: by decoupled look-back,
#                                      fused-chunk: the turn chain alone (the default,
#                                      auto, holds it beside the look-back kernel),
#                                      fused-f16state: the fused kernel with fp16
#                                      states, fused-wgmma, fused-state-mmasync: the
#                                      chunk-state product on mma.sync instead of the
#                                      default's wgmma (--state-mma mma.sync; opt-in,
#                                      not built by default), fused-cp-async: x, B
#                                      and C by cp.async instead of the default
#                                      TMA), fused-cluster: clusters of two blocks
#                                      (--cluster 2; layers it cannot pair leave
#                                      DIR.skipped with the compiler's reason
#                                      instead of DIR), fused-ws: the
#                                      warp-specialised kernels (--warp-specialized
#                                      always; layers they do not take leave
#                                      DIR.skipped), fused-ws-pieces: the same with
#                                      every sequence in 3 pieces, fused-ws-f16state:
#                                      with fp16 initial and final states,
#                                      fused-ws-three and
#                                      fused-ws-panels: their other layouts (three
#                                      stages, two published states, y in tiles of
#                                      its own: the default before 4 stages; C and
#                                      B through panel maps; opt-in,
#                                      not built by default); the other fused
#                                      variants pin the persistent kernel
#                                      (--warp-specialized never); case, chunk
#                                      size, dtype;
#                                      with fused among the variants, also
#                                      fused-small-chunks: the fused kernel at
#                                      chunk sizes 16 and 32 (f32, bf16)
#   OUT_DIR/mamba2-<variant>-q<Q>-bf16/   the Mamba-2 2.7B layer (benchmark, long case),
#                                      the same variants; granite-h-{small,tiny,350m}-...
#                                      the Granite 4.0 H layers (benchmark)
#   OUT_DIR/empty-sequence/<variant>/   a layer for the L = 0 launches
#                                      (run_empty_sequence.py)
#   OUT_DIR/tile-products/, pipelined-products/, warp-specialized-ssd/
#                                      the test passes' kernels alone (<name>.cubin
#                                      and cases.txt, for run_tile_products.py,
#                                      run_pipelined_products.py and
#                                      run_warp_specialized_ssd.py)
#   OUT_DIR/include/cxxopts.hpp        the flag parser ssd-run is built with
#                                      (the GPU machine has no apt): run-gpu-suite.sh
#                                      configures with -DSSD_CXXOPTS_INCLUDE_DIR=OUT_DIR/include
#   OUT_DIR/manifest.txt               what was built, by which commit
#
#   scripts/device/build-artifacts.sh [OUT_DIR] [BUILD_DIR] [GOLDEN_DIR]
# Defaults: device-artifacts/ (ignored by git), build-aot/, ../shared/golden.
# SSD_ARTIFACT_VARIANTS (default: all of them) limits the variants compiled, e.g.
# "fused" to compare one changed kernel (run the suite with the same
# SSD_SUITE_VARIANTS).
# Exits non-zero when any artifact fails to compile (and names it).
set -u -o pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/device-artifacts}
build=${2:-$src/build-aot}
golden=${3:-$src/../shared/golden}
compile=$build/bin/ssd-compile
[ -x "$compile" ] || { echo "error: $compile not built (ninja -C $build ssd-compile)"; exit 2; }
[ -f "$golden/README.md" ] || { echo "error: no golden cases at $golden"; exit 2; }

rm -rf "$out"
status=0
built=0
variants=${SSD_ARTIFACT_VARIANTS:-unfused fused fused-segment fused-f16state fused-wgmma fused-cp-async fused-lookback fused-chunk fused-cluster fused-ws fused-ws-pieces fused-ws-f16state}
mkdir -p "$out/golden" "$out/tile-products"
for variant in $variants; do mkdir -p "$out/golden-art/$variant"; done

# cxxopts.hpp (Debian's libcxxopts-dev), one header: the one this build found.
cxxopts_dir=$(sed -n 's/^SSD_CXXOPTS_INCLUDE_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
[ -f "$cxxopts_dir/cxxopts.hpp" ] || cxxopts_dir=/usr/include
mkdir -p "$out/include"
cp "$cxxopts_dir/cxxopts.hpp" "$out/include/cxxopts.hpp" ||
  { echo "FAIL: no cxxopts.hpp to carry (apt-get install libcxxopts-dev)"; status=1; }

# The layer flags of a case folder, as ssd-run derives them (LayerSpec).
case_flags() {
  python3 - "$1" <<'PY'
import json, sys, os
c = json.load(open(os.path.join(sys.argv[1], "case.json")))
ins = set(c["inputs"])
f = []
if "D" in ins:
    with open(os.path.join(sys.argv[1], "D.npy"), "rb") as fh:
        head = fh.read(256).decode("latin1")
    f.append("Dhp" if "'shape': (%d, " % c["nheads"] in head else "D")
for name, feat in (("z", "z"), ("dt_bias", "dt_bias")):
    if name in ins: f.append(feat)
if c.get("dt_softplus"): f.append("softplus")
lim = c.get("dt_limit") or [0.0, None]
args = []
if lim[0] != 0.0 or lim[1] is not None:
    args += ["--dt-limit", "%r,%s" % (float(lim[0]), "inf" if lim[1] is None else repr(float(lim[1])))]
if "initial_states" in ins: f.append("initial_states")
if "seq_idx" in ins: f.append("seq_idx")
if "cu_seqlens" in ins: f.append("varlen")
print(" ".join(["--nheads", str(c["nheads"]), "--headdim", str(c["headdim"]),
                "--dstate", str(c["dstate"]), "--ngroups", str(c["ngroups"])]
               + (["--features", ",".join(f)] if f else []) + args))
PY
}

# The ssd-compile flags of a variant.
variant_flags() {
  # The persistent kernel's variants say never: by default a layer the
  # warp-specialised kernels take gets those alone (fused-ws, fused-ws-pieces).
  local persistent="--strategy fused --warp-specialized never"
  case $1 in
    # The compiler's own choices: what a caller of the defaults runs (the
    # warp-specialised kernels where they apply, else the persistent one).
    default) echo "--strategy fused" ;;
    unfused) echo "--strategy unfused" ;;
    fused) echo "$persistent" ;;
    fused-segment) echo "$persistent --state-chain segment" ;;
    fused-lookback) echo "$persistent --state-chain lookback" ;;
    fused-chunk) echo "$persistent --state-chain chunk" ;;
    fused-lookback-f16state) echo "$persistent --state-chain lookback --state-dtype f16" ;;
    fused-f16state) echo "$persistent --state-dtype f16" ;;
    fused-wgmma) echo "$persistent --mma wgmma" ;;
    fused-state-mmasync) echo "$persistent --state-mma mma.sync" ;;
    fused-cp-async) echo "$persistent --copy cp.async" ;;
    fused-cluster) echo "$persistent --cluster 2" ;;
    fused-ws) echo "--strategy fused --warp-specialized always" ;;
    fused-ws-pieces) echo "--strategy fused --warp-specialized always --warp-specialized-pieces 3" ;;
    fused-ws-f16state) echo "--strategy fused --warp-specialized always --state-dtype f16" ;;
    # The warp-specialised kernel's other layouts (not in the default list):
    # three stages, two published states and y in tiles of its own (the
    # default until 4 stages measured faster), C and B through panel maps.
    fused-ws-three) echo "--strategy fused --warp-specialized always --warp-specialized-stages 3 --warp-specialized-published-buffers 2 --warp-specialized-y tiles" ;;
    fused-ws-panels) echo "--strategy fused --warp-specialized always --warp-specialized-panel-maps" ;;
  esac
}

compile_one() { # compile_one VARIANT DIR FLAGS...
  local variant=$1 dir=$2
  shift 2
  # shellcheck disable=SC2046
  if "$compile" "$@" --target sm_90a $(variant_flags "$variant") -o "$dir" 2>"$dir.err"; then
    rm -f "$dir.err"
    built=$((built + 1))
  elif { [ "$variant" = fused-cluster ] && grep -q "cluster=2 " "$dir.err"; } ||
       { [[ "$variant" == fused-ws* ]] && grep -q "warp-specialized=always" "$dir.err"; }; then
    # The layer has no TMA rows or cannot be paired, or the warp-specialised
    # kernel does not take it: the compiler says why.
    mv "$dir.err" "$dir.skipped"
  else
    echo "FAIL: $(basename "$dir"): $(head -n 1 "$dir.err")"
    status=1
  fi
}

# Cases the golden set lacks, generated with the project's reference:
# x01_positive_A (A dt > 0: the state grows; the kernels must not clamp);
# x02_tma_features (whole 64-element panels of headdim and dstate, so that
# the fused kernel copies by TMA, with groups, seq_idx, D per channel, z, dt_bias,
# softplus, initial states and a ragged last chunk; no golden case but c05
# has those panels).
extra=$out/extra-cases
mkdir -p "$extra"
"$build/bin/ssd-make-case" -o "$extra/x01_positive_A" --name x01_positive_A --batch 2 \
  --seqlen 300 --nheads 4 --headdim 16 --dstate 16 --ngroups 2 --features D,z,initial_states \
  --a-range 0.02,0.1 --dt-range 0.01,0.1 --seed 7 || { echo "FAIL: x01_positive_A"; status=1; }
"$build/bin/ssd-make-case" -o "$extra/x02_tma_features" --name x02_tma_features --batch 2 \
  --seqlen 300 --nheads 4 --headdim 128 --dstate 64 --ngroups 2 \
  --features Dhp,z,dt_bias,softplus,initial_states --seq-idx-cuts 100,220 --seed 8 ||
  { echo "FAIL: x02_tma_features"; status=1; }
# x03_cluster_odd: TMA rows, 2 heads per group in 3 groups and 3 batch rows,
# so that chunk 128 gives odd chunk counts (9 cumsum items, 27 CB items):
# clusters pad those ranges to pairs.
"$build/bin/ssd-make-case" -o "$extra/x03_cluster_odd" --name x03_cluster_odd --batch 3 \
  --seqlen 300 --nheads 6 --headdim 64 --dstate 128 --ngroups 3 \
  --features D,z,dt_bias,softplus,initial_states --seed 9 ||
  { echo "FAIL: x03_cluster_odd"; status=1; }
# x04_one_token_seq_idx: one token, seq_idx, three batch rows, initial
# states (the CPU path once read such a layer's reset flags past the first
# row: bench/NOTES-cpu.md).
"$build/bin/ssd-make-case" -o "$extra/x04_one_token_seq_idx" --name x04_one_token_seq_idx \
  --batch 3 --seqlen 1 --nheads 4 --headdim 64 --dstate 64 --ngroups 2 \
  --features D,dt_bias,softplus,initial_states --seq-idx-cuts 0 --seed 10 ||
  { echo "FAIL: x04_one_token_seq_idx"; status=1; }

# x05_warp_specialized: a layer the warp-specialised kernel takes (bf16,
# dstate 128, two 64-column blocks of headdim, 8 heads in 2 groups, D,
# dt_bias, softplus, a dt limit, initial states) with a ragged last chunk.
"$build/bin/ssd-make-case" -o "$extra/x05_warp_specialized" --name x05_warp_specialized \
  --batch 2 --seqlen 300 --nheads 8 --headdim 128 --dstate 128 --ngroups 2 \
  --features D,dt_bias,softplus,initial_states --dt-limit 0.001,0.3 --seed 11 ||
  { echo "FAIL: x05_warp_specialized"; status=1; }
# x06_wide_decays and x07_narrow_decays: layers the warp-specialised kernel
# takes whose chunks decay by more than e^-64 (the causal weights taken as
# exp(g_t - g_s) dt_s) and by far less (factored as e_t f_s).
"$build/bin/ssd-make-case" -o "$extra/x06_wide_decays" --name x06_wide_decays \
  --batch 2 --seqlen 300 --nheads 4 --headdim 64 --dstate 128 --ngroups 1 \
  --features D,dt_bias,softplus,initial_states --a-range -16,-8 --dt-range 0.2,1 --seed 12 ||
  { echo "FAIL: x06_wide_decays"; status=1; }
"$build/bin/ssd-make-case" -o "$extra/x07_narrow_decays" --name x07_narrow_decays \
  --batch 2 --seqlen 300 --nheads 4 --headdim 64 --dstate 128 --ngroups 1 \
  --features D,dt_bias,softplus,initial_states --a-range -1,-0.5 --dt-range 0.01,0.2 --seed 13 ||
  { echo "FAIL: x07_narrow_decays"; status=1; }
# x08_long_warp_specialized: 1100 tokens (18 chunks of 64, a ragged last):
# every stage of a ring of up to 4 is used in both phases more than once
# (the shorter cases wrap a 4-stage ring at most once), in one piece and
# in three.
"$build/bin/ssd-make-case" -o "$extra/x08_long_warp_specialized" --name x08_long_warp_specialized \
  --batch 1 --seqlen 1100 --nheads 4 --headdim 64 --dstate 128 --ngroups 1 \
  --features D,dt_bias,softplus,initial_states --seed 14 ||
  { echo "FAIL: x08_long_warp_specialized"; status=1; }
# x09_varlen_warp_specialized: packed sequences the warp-specialised kernels
# take (fused-ws: --warp-specialized always, as auto gives them; the other
# fused variants pin the persistent kernel): lengths 100, 0, 63, 537 and 400, so that a sequence is
# empty, one is shorter than a chunk, and the partial last chunks' boxes
# read the next sequence's tokens; per-sequence initial states, two groups.
"$build/bin/ssd-make-case" -o "$extra/x09_varlen_warp_specialized" --name x09_varlen_warp_specialized \
  --seqlen 1100 --nheads 4 --headdim 64 --dstate 128 --ngroups 2 \
  --features D,dt_bias,softplus,initial_states --cu-seqlens 0,100,100,163,700,1100 --seed 15 ||
  { echo "FAIL: x09_varlen_warp_specialized"; status=1; }

for case in "$golden"/*/ "$extra"/*/; do
  name=$(basename "$case")
  [ -f "$case/case.json" ] || continue
  cp -r "$case" "$out/golden/$name"
  flags=$(case_flags "$case")
  for variant in $variants; do
    for q in 64 128 256; do
      for dtype in f32 bf16 f16; do
        # shellcheck disable=SC2086
        compile_one "$variant" "$out/golden-art/$variant/$name-q$q-$dtype" $flags \
          --chunk-size "$q" --dtype "$dtype"
      done
    done
  done
  # Chunks shorter than a warp and one warp long (16, 32: the smallest the
  # GPU lowering takes), for the default fused kernel: its chain items scan
  # their chunk's dA one token a thread, warp by warp.
  if [[ " $variants " == *" fused "* ]]; then
    mkdir -p "$out/golden-art/fused-small-chunks"
    for q in 16 32; do
      for dtype in f32 bf16; do
        # shellcheck disable=SC2086
        compile_one fused "$out/golden-art/fused-small-chunks/$name-q$q-$dtype" $flags \
          --chunk-size "$q" --dtype "$dtype"
      done
    done
  fi
done

# The benchmark layers (docs TARGETS.md), bf16 x/B/C, dt_softplus with dt_bias,
# D per head: the Mamba-2 2.7B layer (h=80 p=64 n=128 g=1) and the Granite 4.0
# H layers (bench/anchors/run_anchors.py --layer names them the same way).
# Beside the variants, always the compiler's defaults (`default`), the
# kernel the anchors' comparison and the suite's benchmark are about.
layer_variants=default
for variant in $variants; do [ "$variant" = default ] || layer_variants="$layer_variants $variant"; done
for layer in mamba2:80:64 granite-h-small:128:64 granite-h-tiny:48:64 granite-h-350m:48:32; do
  IFS=: read -r prefix heads headdim <<<"$layer"
  for variant in $layer_variants; do
    for q in 128 256; do
      compile_one "$variant" "$out/$prefix-$variant-q$q-bf16" --nheads "$heads" --headdim "$headdim" \
        --dstate 128 --ngroups 1 --features D,dt_bias,softplus --chunk-size "$q" --dtype bf16
    done
  done
done

# Sequences without tokens (L = 0): one layer per strategy, for
# scripts/device/run_empty_sequence.py (8 heads, so that the fused default
# holds the look-back kernel beside the turn-chain one).
mkdir -p "$out/empty-sequence"
for variant in $variants; do
  compile_one "$variant" "$out/empty-sequence/$variant" --nheads 8 --headdim 64 \
    --dstate 128 --ngroups 1 --features D,initial_states --chunk-size 128 --dtype bf16
done

# One tile product alone (ssd-test-tile-product), per tensor-core path, shape
# and operand layout: cubins for scripts/device/run_tile_products.py.
opt=$build/bin/ssd-opt
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
# test_kernel DIR NAME PASS: the kernel a test pass (PASS, an ssd-opt flag)
# appends to an empty module, as DIR/NAME.cubin; DIR/NAME.mlir keeps the
# lowered module (the caller removes it).
test_kernel() {
  local mlir="$1/$2.mlir" ptx="$1/$2.ptx" rc
  echo 'module {}' | "$opt" "$3" --ssd-gpu-kernels-to-binary="format=isa" -o "$mlir" &&
    python3 "$src/scripts/gpu-binary-ptx.py" "$mlir" "$ptx" &&
    "$ptxas" -arch=sm_90a "$ptx" -o "$1/$2.cubin"
  rc=$?
  rm -f "$ptx"
  return $rc
}
: >"$out/tile-products/cases.txt"
for mma in mma.sync wgmma; do
  for shape in "64 64 128 64" "64 128 128 64" "64 64 256 32"; do
    read -r m n k depth <<<"$shape"
    # How A reaches the tensor cores: register fragments (plain, scaled
    # along k, causal) are an mma.sync path.
    sources=staged
    [ "$mma" = mma.sync ] && sources="staged registers scaled causal"
    for ak in true false; do
      for bk in true false; do
        for a_source in $sources; do
        name="tile-${mma/./}-m$m-n$n-k$k-d$depth-a$ak-b$bk"
        [ "$a_source" = staged ] || name="$name-$a_source"
        if test_kernel "$out/tile-products" "$name" \
             --ssd-test-tile-product="m=$m n=$n k=$k depth=$depth a-k-contiguous=$ak b-k-contiguous=$bk mma=$mma a-source=$a_source"; then
          echo "$name $m $n $k $ak $bk $mma $a_source" >>"$out/tile-products/cases.txt"
          built=$((built + 1))
        else
          echo "FAIL: $name"
          status=1
        fi
        rm -f "$out/tile-products/$name.mlir"
        done
      done
    done
  done
done

# A test pass's kernel that runs with a given dynamic shared memory:
#   shared_test_kernel DIR NAME PASS_FLAG "FIELD..." builds DIR/NAME.cubin and
# records "NAME FIELD... SHARED_BYTES [FIELD...]" in DIR/cases.txt, the
# shared memory in the place each runner reads it (the fields after "|" go
# after it).
shared_test_kernel() {
  local dir=$1 name=$2 flag=$3 fields=$4 shared
  if test_kernel "$dir" "$name" "$flag"; then
    shared=$(grep -o 'ssd.shared_memory = [0-9]*' "$dir/$name.mlir" | grep -o '[0-9]*$')
    echo "$name ${fields%%|*}$shared${fields#*|}" | tr -s ' ' >>"$dir/cases.txt"
    built=$((built + 1))
  else
    echo "FAIL: $name"
    status=1
  fi
  rm -f "$dir/$name.mlir"
}

# The warp-specialised main loop alone (ssd-test-pipelined-product): one
# and two consumer warpgroups, rings of 2 to 4 stages, K from one slice to
# many times the ring, for scripts/device/run_pipelined_products.py.
mkdir -p "$out/pipelined-products"
: >"$out/pipelined-products/cases.txt"
for shape in "64 64 64 2" "64 64 512 2" "128 128 512 4" "128 64 1024 3" "128 256 256 2"; do
  read -r m n k stages <<<"$shape"
  shared_test_kernel "$out/pipelined-products" "pipelined-m$m-n$n-k$k-s$stages" \
    --ssd-test-pipelined-product="m=$m n=$n k=$k stages=$stages" "$m $n $k $stages |"
done

# The whole SSD in one warp-specialised kernel (ssd-test-warp-specialized-ssd):
# one chunk, several heads and batch rows, rings of 2 to 4 stages, one or two
# output warpgroups, head dimensions 64 to 256 and groups of heads, and the
# Mamba-2 2.7B layer at b8 16K (80 heads) for its time, for
# scripts/device/run_warp_specialized_ssd.py.
mkdir -p "$out/warp-specialized-ssd"
: >"$out/warp-specialized-ssd/cases.txt"
# Shapes marked "four" take one published buffer and y staged in the
# stages (the four-stage layout); "panels" copy C and B through panel maps.
for shape in "1 4 64 2 1 64 1" "1 4 512 2 1 64 1" "2 8 1024 3 1 64 1" "1 4 4096 3 1 64 1" \
             "8 80 16384 2 1 64 1" "1 4 64 2 2 64 1" "2 8 1024 3 2 64 1" "8 80 16384 3 2 64 1" \
             "2 8 512 2 1 128 2" "1 8 256 2 2 256 4" "1 4 1 2 1 64 1" "2 8 300 3 2 64 1" \
             "1 4 1000 2 1 64 1" "2 8 300 4 2 64 1 four" "1 4 1000 4 1 64 1 four" \
             "8 80 16384 4 2 64 1 four" "2 8 300 3 2 64 1 panels" "2 8 512 2 1 128 2 panels" \
             "8 80 16384 3 2 64 1 panels"; do
  read -r batch heads seqlen stages groups headdim ngroups layout <<<"$shape"
  extra="" suffix="" panels=0
  if [ "$layout" = four ]; then
    extra=" published-buffers=1 y-in-stage=true" suffix="-pb1-ys"
  elif [ "$layout" = panels ]; then
    extra=" panel-maps=true" suffix="-panels" panels=1
  fi
  shared_test_kernel "$out/warp-specialized-ssd" \
    "wsssd-b$batch-h$heads-l$seqlen-s$stages-o$groups-p$headdim-g$ngroups$suffix" \
    --ssd-test-warp-specialized-ssd="batch=$batch heads=$heads seqlen=$seqlen stages=$stages output-groups=$groups headdim=$headdim groups=$ngroups$extra" \
    "$batch $heads $seqlen $stages | $groups $headdim $ngroups $panels"
done

# The PyTorch op's GPU tests (python/tests/test_torch_gpu.py): their artifacts
# and reference outputs, where this build has libSSDCAPI and PyTorch is here.
if [ -f "$build/lib/libSSDCAPI.so" ] && python3 -c 'import torch' 2>/dev/null; then
  SSD_MLIR_LIB=$build/lib python3 "$src/scripts/device/build-torch-cases.py" "$out/torch" ||
    { echo "FAIL: torch cases"; status=1; }
else
  echo "note: no torch cases (needs $build/lib/libSSDCAPI.so and PyTorch)"
fi

{
  echo "commit $(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet HEAD -- lib tools include || echo '+dirty')"
  echo "compiler $("$compile" --help >/dev/null 2>&1 && echo ssd-compile)"
  echo "artifacts $built"
} >"$out/manifest.txt"
du -sh "$out"
echo "built $built artifacts into $out"
exit $status
