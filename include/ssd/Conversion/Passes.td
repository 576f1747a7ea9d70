//===- Passes.td - ssd conversion passes -------------------*- tablegen -*-===//
#ifndef SSD_CONVERSION_PASSES_TD
#define SSD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSSDToLinalg : Pass<"convert-ssd-to-linalg"> {
  let summary = "Lower the six ssd step ops to linalg, tensor, arith, math and scf";
  let description = [{
    Rewrites `ssd.chunk_cumsum`, `ssd.segsum`, `ssd.bmm`, `ssd.chunk_state`,
    `ssd.state_passing` and `ssd.chunk_scan` into tensor-level `linalg` ops
    (the matrix products as `linalg.generic` contractions over chunk-major
    tensors), `tensor` gathers and `scf` loops for the sequential parts
    (state passing, varlen chunk tables). Activations are widened to f32 on
    load and narrowed on store; states accumulate in f32.

    `ssd.combined` is not lowered here: run `ssd-decompose` first. Ops whose
    `h`, `p`, `g`, `n` or chunk size are dynamic are reported as errors.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def SSDCPUTileAndVectorize : Pass<"ssd-cpu-tile-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Tile the linalg contractions for registers and vectorize them";
  let description = [{
    Tiles every `linalg` contraction (the bmm, chunk_state and chunk_scan
    products produced by `convert-ssd-to-linalg`) to register-sized tiles
    with `scf.for`, vectorizes the tiles into `vector.contract` and lowers
    those to FMAs over vector registers. All-parallel generics (gathers,
    decays, masks, the final scatter) are tiled to one vector along their
    innermost loop and vectorized. Reductions other than contractions are
    left for the loop lowering.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"8",
           "Rows of the output tile (the first parallel matmul dimension)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"32",
           "Columns of the output tile (the innermost parallel dimension)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"16",
           "Reduction step per vectorized tile">,
    Option<"fuseChunks", "fuse-chunks", "bool", /*default=*/"true",
           "Tile each contraction's chunk loop by 1 and fuse its producers "
           "(gathers, decays) into it, so intermediates are per chunk">,
    Option<"parallel", "parallel", "bool", /*default=*/"false",
           "Distribute the outermost non-unit parallel loop of every op that "
           "is not inside a sequential loop over an scf.forall">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "Innermost tile of the elementwise ops (gathers, decays, scatter); "
           "0 leaves them scalar">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SSDCPULowerVectors : Pass<"ssd-cpu-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "Keep vectorized accumulators in registers and lower vector ops";
  let description = [{
    Runs after bufferization of the output of `ssd-cpu-tile-vectorize`:
    hoists the accumulator tile reads and writes out of the reduction loops
    (so a tile stays in vector registers across the whole reduction), then
    lowers `vector.contract` to outer products (FMAs) and simplifies the
    transfer ops, leaving ops that `convert-vector-to-llvm` maps directly.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // SSD_CONVERSION_PASSES_TD
