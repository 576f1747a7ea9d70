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
    The CPU code generation strategy for the output of
    `convert-ssd-to-linalg`, on tensors:

    1. Chunk fusion (`fuse-chunks`): each top-level contraction (the bmm,
       chunk_state and chunk_scan products) has its batch loops (batch row,
       chunk, group, shared head) tiled by 1 and its linalg producers
       (gathers, decay weights, scalings, the first chunk_scan product)
       fused into them, so intermediates are per-chunk temporaries.
    2. Threads (`parallel`): those loops are `scf.forall`; other top-level
       ops get their outermost non-unit parallel loop distributed likewise.
    3. Register tiles: each contraction is tiled to `tile-m` x `tile-n` with
       a `tile-k` reduction step, the tile collapsed to 2-D and vectorized
       into one `vector.contract` (operands in (k, m) and (k, n) layout, so
       it lowers to broadcast FMAs). A contraction marked
       `ssd.lower_triangular` stops its reduction at the row tile's end.
    4. Elementwise ops (gathers, masks, decays, the final scatter) are tiled
       to `vector-width` along their innermost loop and vectorized.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"8",
           "Rows of the output tile (the first parallel matmul dimension)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"32",
           "Columns of the output tile (the innermost parallel dimension)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"16",
           "Reduction step per vectorized tile">,
    Option<"fuseChunks", "fuse-chunks", "bool", /*default=*/"true",
           "Tile each contraction's batch loops by 1 and fuse its producers "
           "(gathers, decays) into them, so intermediates are per chunk">,
    Option<"parallel", "parallel", "bool", /*default=*/"false",
           "Make the fused chunk loops scf.forall, and distribute the "
           "outermost non-unit parallel loop of the other ops likewise">,
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
    erases the self-copies that the collapse/expand of a register tile
    leaves in the reduction loops, hoists loop-invariant accumulator
    transfers where the upstream hoisting applies (LLVM keeps the rest in
    registers once the copies are gone), lowers `vector.contract` to
    outer-product FMAs and vector `math.exp` / `math.log1p` to polynomials.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def SSDCPUStridedGathers : Pass<"ssd-cpu-strided-gathers", "::mlir::func::FuncOp"> {
  let summary = "Index the vector gathers from strided buffers by their strides";
  let description = [{
    Runs after bufferization. linalg's vectorizer writes a gather as a
    `vector.gather` from its source at `[0, ..., 0]` whose lane offsets are
    the element positions linearized over the source's shape, and the LLVM
    lowering adds them to the base element's address: right only for a
    dense row-major buffer. For every gather from a buffer whose layout is
    not known to be dense (a subview of a larger buffer, a dynamic strided
    layout), each lane's position (base indices and lane offset) is
    delinearized over the buffer's sizes and linearized again with its
    strides, and the gather reads from `[0, ..., 0]` at those offsets.
    Gathers from dense buffers are left as they are.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def SSDCPUHoistSegmentBuffers : Pass<"ssd-cpu-hoist-segment-buffers", "::mlir::func::FuncOp"> {
  let summary = "Allocate a segment loop's temporaries once, before the loop";
  let description = [{
    Runs after bufferization. In every `scf.for` that `ssd-split-sequence`
    made (marked `ssd.segment_loop`, and, around those, `ssd.sequence_loop`
    over the sequences or rows, inner loops first: what a segment loop
    hoisted moves out of the sequence loop too, unless its size is the
    sequence's), first moves the loop-invariant pure ops out (the sizes of
    a dynamic batch), then moves before the loop each
    `memref.alloc` that sits directly in the loop body (not in a nested loop
    or region, where a parallel loop's iterations each need their own),
    whose sizes are defined outside the loop, and whose buffer neither
    reaches the loop's `scf.yield` nor is freed in the loop. The
    iterations then reuse one buffer each instead of allocating, faulting in
    and freeing it per segment; the deallocation passes that follow free it
    after the loop.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SSDCPUSinkSegmentUpdates : Pass<"ssd-cpu-sink-segment-updates", "::mlir::func::FuncOp"> {
  let summary = "Move a segment's in-place updates after the readers of the "
                "old value";
  let description = [{
    Runs on tensors, before bufferization. In every `scf.for` that
    `ssd-split-sequence` made (marked `ssd.segment_loop`), an op of the
    body that may write into one of its tensor operands (the destination of
    a destination-style op, a loop's initial value, an inserted-into
    tensor) while a later op of the body still reads that operand's old
    value (directly or through reshapes, slices and casts) moves after the
    last such reader, where that is legal (the op has no memory effects and
    its results are first used after that reader) and makes no copy
    elsewhere (no op it moves past may write into any of its operands). The running state's update then
    bufferizes in place instead of into a copy of the whole state made
    before it (2.6 MB a segment at the Mamba-2 2.7B layer).
  }];
}

#endif // SSD_CONVERSION_PASSES_TD
