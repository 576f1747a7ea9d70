//===- SSDOps.td - ssd dialect operations ------------------*- tablegen -*-===//
//
// The combined SSD op and its six step ops. Shapes use these symbols:
//   b batch, L seqlen, h nheads, p headdim, g ngroups, n dstate,
//   Q chunk size, nc number of chunks, s number of sequences (varlen).
// Every shape and type relation is checked by the C++ verifiers in
// lib/Dialect/SSD/IR/SSDOps.cpp, whose diagnostics name the operand.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_OPS_TD
#define SSD_OPS_TD

include "SSDDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

class SSD_Op<string mnemonic, list<Trait> traits = []>
    : Op<SSD_Dialect, mnemonic,
         !listconcat(traits, [NoMemoryEffect])> {
  // Element types and every dimension are checked in C++ so that each error
  // names the operand and both sizes.
  let hasVerifier = 1;
}

// Optional operands print as `keyword(%value : type)`.
class SSD_OptionalOperand<string name> {
  string format = "(`" # name # "` `(` $" # name # "^ `:` type($" # name # ") `)`)?";
}
class SSD_Operand<string name> {
  string format = "`" # name # "` `(` $" # name # " `:` type($" # name # ") `)`";
}

// The whole layer: the operands, results, format and helpers shared by
// ssd.combined and ssd.fused.
class SSD_LayerOp<string mnemonic, dag extraArguments = (ins)>
    : SSD_Op<mnemonic, [AttrSizedOperandSegments]> {
  dag commonArguments = (ins
    AnyRankedTensor:$x, AnyRankedTensor:$dt, AnyRankedTensor:$A,
    AnyRankedTensor:$B, AnyRankedTensor:$C,
    Optional<AnyRankedTensor>:$D, Optional<AnyRankedTensor>:$z,
    Optional<AnyRankedTensor>:$dt_bias,
    Optional<AnyRankedTensor>:$initial_states,
    Optional<AnyRankedTensor>:$seq_idx, Optional<AnyRankedTensor>:$cu_seqlens,
    I64Attr:$chunk_size, UnitAttr:$dt_softplus,
    OptionalAttr<DenseF64ArrayAttr>:$dt_limit,
    OptionalAttr<TypeAttr>:$state_type);
  let arguments = !con(commonArguments, extraArguments);
  let results = (outs AnyRankedTensor:$y, AnyRankedTensor:$final_states);

  let assemblyFormat =
      SSD_Operand<"x">.format # SSD_Operand<"dt">.format #
      SSD_Operand<"A">.format # SSD_Operand<"B">.format #
      SSD_Operand<"C">.format # SSD_OptionalOperand<"D">.format #
      SSD_OptionalOperand<"z">.format # SSD_OptionalOperand<"dt_bias">.format #
      SSD_OptionalOperand<"initial_states">.format #
      SSD_OptionalOperand<"seq_idx">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($y) `,` type($final_states)";

  let extraClassDeclaration = [{
    /// The state precision: `state_type` when set, f32 otherwise.
    ::mlir::Type getStateElementType();
    /// The dt_limit bounds, (0, +inf) when absent.
    std::pair<double, double> getDtLimitOrDefault();
  }];
}

def SSD_CombinedOp : SSD_LayerOp<"combined"> {
  let summary = "the whole SSD forward (mamba_chunk_scan_combined)";
  let description = [{
    Computes the Mamba-2 SSD layer scan. With `dt'` the processed step size
    (`dt + dt_bias`, then `softplus` when `dt_softplus` is set, identity
    above 20, then clamped to `dt_limit`) and `gr = head / (h / g)`:

    ```
    S_t = exp(A[h] * dt'_t) * S_{t-1} + dt'_t * outer(x_t, B_t[gr])   // (p, n)
    y_t = S_t @ C_t[gr] + D * x_t ;   y_t *= z_t * sigmoid(z_t) if z is given
    ```

    `S_{-1}` is `initial_states` (zero when absent); the state is reset to
    zero where `seq_idx` changes. With `cu_seqlens` (batch 1) every sequence
    starts from its own initial state and gets its own final state; an empty
    sequence keeps its initial state. `final_states` is the state after the
    last token of each batch row (or sequence).

    Shapes: `x (b,L,h,p)`, `dt (b,L,h)`, `A (h)`, `B, C (b,L,g,n)`,
    `D (h)` or `(h,p)`, `z (b,L,h,p)`, `dt_bias (h)`, `initial_states
    (b,h,p,n)` or `(s,h,p,n)` with `cu_seqlens (s+1)`, `seq_idx (b,L)`.
    `x`, `B`, `C`, `z` and `y` share one element type (f32, bf16 or f16);
    `dt`, `A`, `D`, `dt_bias` are f32; `seq_idx` and `cu_seqlens` are i32.
    The state precision (`state_type`, f32 by default, or f16) is the
    element type of `initial_states` and `final_states`. `chunk_size` is an
    algorithm parameter (a positive power of two) and never changes the
    result beyond rounding.

    Example:

    ```mlir
    %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>)
        dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>)
        B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>)
        D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>)
        {chunk_size = 128 : i64, dt_softplus}
        -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
    ```
  }];

}

def SSD_FusedOp : SSD_LayerOp<"fused",
    (ins OptionalAttr<I64Attr>:$p_block)> {
  let summary = "the whole SSD forward as one persistent kernel";
  let description = [{
    The same computation, operands, attributes and results as
    `ssd.combined`, produced by `ssd-fuse` from a chain of step ops
    (chunk_cumsum, segsum, bmm, chunk_state, state_passing, chunk_scan) whose
    intermediates nothing else reads. It is the unit the fused GPU lowering
    turns into ONE persistent kernel: work items (cumsum, bmm, then
    chunk_state -> state_passing -> chunk_scan per batch, chunk, head and
    headdim block) are taken in a fixed order through an atomic ticket, so
    no intermediate leaves the kernel except through L2.

    `p_block` (optional) is the headdim tile of one work item: a power of
    two dividing `headdim`; the lowering chooses one when absent.

    Example:

    ```mlir
    %y, %fs = ssd.fused x(%x : tensor<1x?x80x64xbf16>)
        dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>)
        B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>)
        {chunk_size = 128 : i64, dt_softplus, p_block = 32 : i64}
        -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
    ```
  }];
}

def SSD_ChunkCumsumOp : SSD_Op<"chunk_cumsum", [AttrSizedOperandSegments]> {
  let summary = "processed dt and the within-chunk cumulative sum of A*dt";
  let description = [{
    Per batch, head and chunk: `dt_out[l] = clamp(softplus?(dt[l] +
    dt_bias[h]), dt_limit)` for tokens inside the sequence and 0 for the
    padding past its end, and `dA_cumsum[l] = sum_{k<=l} A[h] * dt_out[k]`
    within the chunk. Shapes: `dt (b,L,h)`, `A (h)`, `dt_bias (h)`,
    `cu_seqlens (s+1)`; both results `(b,h,nc,Q)` f32, where `Q` (a
    positive power of two) is the chunk size and `nc` follows the chunking
    described on the dialect.
  }];
  let arguments = (ins AnyRankedTensor:$dt, AnyRankedTensor:$A,
                   Optional<AnyRankedTensor>:$dt_bias,
                   Optional<AnyRankedTensor>:$cu_seqlens,
                   UnitAttr:$dt_softplus,
                   OptionalAttr<DenseF64ArrayAttr>:$dt_limit);
  let results = (outs AnyRankedTensor:$dt_out, AnyRankedTensor:$dA_cumsum);
  let assemblyFormat =
      SSD_Operand<"dt">.format # SSD_Operand<"A">.format #
      SSD_OptionalOperand<"dt_bias">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($dt_out) `,` type($dA_cumsum)";
  let extraClassDeclaration = [{
    /// The dt_limit bounds, (0, +inf) when absent.
    std::pair<double, double> getDtLimitOrDefault();
  }];
}

def SSD_SegsumOp : SSD_Op<"segsum"> {
  let summary = "the segment sums whose exponential is the decay matrix";
  let description = [{
    `segsum[b,h,c,i,j] = dA_cumsum[b,h,c,i] - dA_cumsum[b,h,c,j]` for
    `i >= j` and `-inf` above the diagonal, so that `exp(segsum)` is the
    causal decay matrix of the chunk. `dA_cumsum (b,h,nc,Q)` f32, result
    `(b,h,nc,Q,Q)` f32.
  }];
  let arguments = (ins AnyRankedTensor:$dA_cumsum);
  let results = (outs AnyRankedTensor:$segsum);
  let assemblyFormat = SSD_Operand<"dA_cumsum">.format #
                       " attr-dict `->` type($segsum)";
}

def SSD_BmmOp : SSD_Op<"bmm", [AttrSizedOperandSegments]> {
  let summary = "the chunk-local products C_i . B_j per group";
  let description = [{
    `CB[b,c,g,i,j] = C_i . B_j` for tokens `i`, `j` of chunk `c` and group
    `g`, zero where `j` or `i` is past the end of the sequence and, with
    `seq_idx`, where the two tokens belong to different sequences. `C, B
    (b,L,g,n)` of one element type (f32, bf16, f16), `seq_idx (b,L)`,
    `cu_seqlens (s+1)`; result `(b,nc,g,Q,Q)` f32.
  }];
  let arguments = (ins AnyRankedTensor:$C, AnyRankedTensor:$B,
                   Optional<AnyRankedTensor>:$seq_idx,
                   Optional<AnyRankedTensor>:$cu_seqlens);
  let results = (outs AnyRankedTensor:$CB);
  let assemblyFormat =
      SSD_Operand<"C">.format # SSD_Operand<"B">.format #
      SSD_OptionalOperand<"seq_idx">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($CB)";
}

def SSD_ChunkStateOp : SSD_Op<"chunk_state", [AttrSizedOperandSegments]> {
  let summary = "each chunk's end state, starting from zero";
  let description = [{
    `states[b,c,h] = sum_l x_l B_l^T exp(dA_cumsum[Q-1] - dA_cumsum[l])
    dt_l` over the tokens `l` of chunk `c` (with `seq_idx`, only those of
    the chunk's last sequence). `x (b,L,h,p)`, `B (b,L,g,n)`, `dt` and
    `dA_cumsum (b,h,nc,Q)` f32; result `(b,nc,h,p,n)` in f32 or f16.
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$B,
                   AnyRankedTensor:$dt, AnyRankedTensor:$dA_cumsum,
                   Optional<AnyRankedTensor>:$seq_idx,
                   Optional<AnyRankedTensor>:$cu_seqlens);
  let results = (outs AnyRankedTensor:$states);
  let assemblyFormat =
      SSD_Operand<"x">.format # SSD_Operand<"B">.format #
      SSD_Operand<"dt">.format # SSD_Operand<"dA_cumsum">.format #
      SSD_OptionalOperand<"seq_idx">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($states)";
}

def SSD_StatePassingOp : SSD_Op<"state_passing", [AttrSizedOperandSegments]> {
  let summary = "the state at the start of every chunk, and the final state";
  let description = [{
    Sequential over chunks: `out[0] = initial` and `out[c+1] =
    exp(dA_cumsum[c, Q-1]) * out[c] + states[c]`, where the carried state
    is reset to zero when `seq_idx` changes inside chunk `c`. With
    `cu_seqlens` the first chunk of each sequence starts from that
    sequence's initial state. `final_states` is the state after the last
    chunk of each batch row (or sequence; an empty sequence keeps its
    initial state). `states (b,nc,h,p,n)`, `dA_cumsum (b,h,nc,Q)` f32,
    `initial_states (b,h,p,n)` or `(s,h,p,n)`; results `out (b,nc,h,p,n)`
    and `final_states` shaped like `initial_states`, both in the state
    precision (f32 or f16).
  }];
  let arguments = (ins AnyRankedTensor:$states, AnyRankedTensor:$dA_cumsum,
                   Optional<AnyRankedTensor>:$initial_states,
                   Optional<AnyRankedTensor>:$seq_idx,
                   Optional<AnyRankedTensor>:$cu_seqlens);
  let results = (outs AnyRankedTensor:$out, AnyRankedTensor:$final_states);
  let assemblyFormat =
      SSD_Operand<"states">.format # SSD_Operand<"dA_cumsum">.format #
      SSD_OptionalOperand<"initial_states">.format #
      SSD_OptionalOperand<"seq_idx">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($out) `,` type($final_states)";
}

def SSD_ChunkScanOp : SSD_Op<"chunk_scan", [AttrSizedOperandSegments]> {
  let summary = "the output: inter-chunk state term plus the intra-chunk scan";
  let description = [{
    For token `i` of chunk `c`:
    `y_i = exp(dA_cumsum[i]) C_i s_c + sum_{j<=i} CB[i,j] exp(segsum[i,j])
    dt_j x_j + D x_i`, then `y_i *= z_i * sigmoid(z_i)` when `z` is given.
    `s_c` is `states[c]` (with `seq_idx`, only for tokens of the sequence
    that was running at the chunk start). `x (b,L,h,p)`, `dt`, `dA_cumsum
    (b,h,nc,Q)` f32, `segsum (b,h,nc,Q,Q)` f32, `C (b,L,g,n)`, `CB
    (b,nc,g,Q,Q)` f32, `states (b,nc,h,p,n)`, `D (h)` or `(h,p)` f32, `z
    (b,L,h,p)`; result `y (b,L,h,p)` with the element type of `x`.
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$dt,
                   AnyRankedTensor:$dA_cumsum, AnyRankedTensor:$segsum,
                   AnyRankedTensor:$C, AnyRankedTensor:$CB,
                   AnyRankedTensor:$states,
                   Optional<AnyRankedTensor>:$D, Optional<AnyRankedTensor>:$z,
                   Optional<AnyRankedTensor>:$seq_idx,
                   Optional<AnyRankedTensor>:$cu_seqlens);
  let results = (outs AnyRankedTensor:$y);
  let assemblyFormat =
      SSD_Operand<"x">.format # SSD_Operand<"dt">.format #
      SSD_Operand<"dA_cumsum">.format # SSD_Operand<"segsum">.format #
      SSD_Operand<"C">.format # SSD_Operand<"CB">.format #
      SSD_Operand<"states">.format # SSD_OptionalOperand<"D">.format #
      SSD_OptionalOperand<"z">.format # SSD_OptionalOperand<"seq_idx">.format #
      SSD_OptionalOperand<"cu_seqlens">.format #
      " attr-dict `->` type($y)";
}

#endif // SSD_OPS_TD
