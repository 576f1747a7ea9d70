//===- Passes.td - ssd dialect transformation passes -------*- tablegen -*-===//
#ifndef SSD_DIALECT_SSD_TRANSFORMS_PASSES_TD
#define SSD_DIALECT_SSD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SSDDecompose : Pass<"ssd-decompose"> {
  let summary = "Rewrite ssd.combined into the six SSD step ops";
  let description = [{
    Replaces every `ssd.combined` with the data flow of the five-kernel
    reference implementation:

    ```
    chunk_cumsum -> chunk_state -> state_passing -> bmm -> segsum -> chunk_scan
    ```

    Every optional input is forwarded to the steps that use it: `dt_bias`,
    `dt_softplus` and `dt_limit` to `chunk_cumsum`; `initial_states` to
    `state_passing`; `D` and `z` to `chunk_scan`; `seq_idx` or `cu_seqlens`
    to every step that maps tokens to chunks. `chunk_state` accumulates in
    f32; `state_passing` produces the op's state precision. The decay matrix
    is explicit (`ssd.segsum`) where `chunk_scan` uses it.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"0",
           "Chunk size to decompose with (a positive power of two); 0 keeps "
           "each op's chunk_size attribute">,
  ];
  let dependentDialects = ["::ssd::SSDDialect"];
}

def SSDFuse : Pass<"ssd-fuse"> {
  let summary = "Fuse a chain of SSD step ops into one ssd.fused op";
  let description = [{
    Matches the decomposed chain rooted at each `ssd.chunk_scan`:

    ```
    chunk_cumsum -> chunk_state -> state_passing -> bmm -> segsum -> chunk_scan
    ```

    with any subset of the optional inputs, and replaces it with one
    `ssd.fused` op carrying every input and attribute the persistent kernel
    needs. A chain is fused only when it is exactly the computation of one
    layer: every step reads the same `x`, `B`, `C`, packing operand
    (`seq_idx` or `cu_seqlens`) and `dA_cumsum`, `chunk_state` starts from
    the cumsum's `dt`, and no intermediate (dt, dA_cumsum, segsum, CB, chunk
    states, passed states) has a user outside the chain. Anything else is
    left alone; with `emit-remarks` each chain that is not fused gets a
    remark saying why.
  }];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark on every chunk_scan whose chain is not fused">,
    Option<"pBlock", "p-block", "int64_t", /*default=*/"0",
           "Headdim tile of one work item recorded on ssd.fused (0: the "
           "lowering chooses)">,
  ];
  let dependentDialects = ["::ssd::SSDDialect"];
}

def SSDSplitSequence : Pass<"ssd-split-sequence"> {
  let summary = "Split a long ssd.combined into segments that carry the state";
  let description = [{
    Rewrites an `ssd.combined` over `L` tokens into an `scf.for` over
    segments of `segment-chunks` whole chunks and one op on the tokens after
    them (with a dynamic `L`, possibly none): each segment is an
    `ssd.combined` on that slice of `x`, `dt`, `B`, `C`, `z` and `seq_idx`
    whose `initial_states` is the previous segment's `final_states` (with
    `seq_idx`, zero in the batch rows where a new sequence starts at the
    segment's first token: the reset the segment's op cannot see), and its
    `y` is inserted at the segment's offset. The recurrence is the same, so is the
    result; what changes is the size of every intermediate the step ops then
    produce (chunk states, passed states, scaled x): a segment's, not the
    sequence's. The CPU backend runs it so that its temporaries stay
    cache-sized instead of hundreds of MB faulted in per call.

    An op with `cu_seqlens` becomes an `scf.for` over its sequences
    (`ssd.sequence_loop`): sequence `i` is the op without `cu_seqlens` on
    tokens `[cu[i], cu[i + 1])` (clamped into `[0, L]`), started from row `i`
    of `initial_states` (or zero), walked in segments as above, its final
    state inserted as row `i`. Chunks never straddle two sequences, so the
    outputs are the packed op's.

    An op whose batch is dynamic (the C API's layers) becomes an `scf.for`
    over its batch rows in the same way (`ssd.sequence_loop`), each row a
    layer of one static row: the rows are independent, and the CPU
    backend's chunk loops then run over a row's chunks and heads, where a
    dynamic batch loop of one row would keep them on one thread.

    Only ops the split leaves exact are rewritten: an f32 state (an f16
    state would be rounded at every segment boundary; with `cu_seqlens` or
    a dynamic batch each sequence or row is then one op), no empty
    dimension, and (with a static `L`, a static batch and no `cu_seqlens`)
    more than one segment. With `seq_idx` the outputs equal the whole
    sequence's (a zero may differ in sign where a reset meets a segment
    boundary: the whole sequence multiplies the state by zero there, the
    segment starts from zero). Batch and length may be dynamic. Others are
    left alone.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"0",
           "Chunk size the ops will be decomposed with (a positive power of "
           "two); 0 takes each op's chunk_size attribute. Segments are whole "
           "chunks of it, and the segment ops carry it">,
    Option<"segmentChunks", "segment-chunks", "int64_t", /*default=*/"4",
           "Chunks per segment (positive)">,
  ];
  let dependentDialects = ["::ssd::SSDDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SSDFitChunkSize : Pass<"ssd-fit-chunk-size"> {
  let summary = "Shrink the chunk size of layers that fit in one chunk";
  let description = [{
    A layer of `L` tokens with `L` below its chunk size `Q` is one chunk,
    which the step ops compute padded to `Q` tokens: the intra-chunk
    products grow with `Q` squared, so a 32-token layer costs nearly what a
    512-token one does at `Q = 128`. Each `ssd.combined` gets the smallest
    chunk size of the form `Q / 2^k`, at least `min-chunk-size`, that still
    holds its tokens in one chunk. The chunk boundaries do not move (every
    sequence of the layer stays one chunk), so the computation is the same
    one without the padding.

    With a static `L` the op's `chunk_size` is rewritten. With a dynamic
    `L` the op becomes an `scf.if` ladder on `L`: one op for each of up to
    `max-versions` smaller chunk sizes, tried smallest first, and the op at
    `Q` for the rest. Every op leaves with its chunk size as an attribute
    (the `chunk-size` option, when given, replaces the ops' own first), so
    that `ssd-decompose` runs after it without one.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"0",
           "Chunk size the ops are to be computed with (a positive power "
           "of two); 0 takes each op's chunk_size attribute">,
    Option<"minChunkSize", "min-chunk-size", "int64_t", /*default=*/"32",
           "Smallest chunk size to shrink to (a positive power of two; "
           "below 32 the CPU backend gains little)">,
    Option<"maxVersions", "max-versions", "int64_t", /*default=*/"3",
           "Smaller chunk sizes a dynamic-length op is versioned for (0: "
           "dynamic-length ops keep theirs)">,
  ];
  let dependentDialects = ["::ssd::SSDDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // SSD_DIALECT_SSD_TRANSFORMS_PASSES_TD
