//===- SSDDialect.td - the ssd dialect ---------------------*- tablegen -*-===//
//
// The dialect that states the Mamba-2 SSD (state space duality) prefill.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_DIALECT_TD
#define SSD_DIALECT_TD

include "mlir/IR/OpBase.td"

def SSD_Dialect : Dialect {
  let name = "ssd";
  let cppNamespace = "::ssd";
  let summary = "The Mamba-2 SSD (state space duality) prefill";
  let description = [{
    The `ssd` dialect states the chunked SSD forward computation of Mamba-2
    (`mamba_chunk_scan_combined`): the whole layer as one op (`ssd.combined`)
    and its six steps (`ssd.chunk_cumsum`, `ssd.segsum`, `ssd.bmm`,
    `ssd.chunk_state`, `ssd.state_passing`, `ssd.chunk_scan`).

    All ops have value (tensor) semantics. The head count `h`, head dimension
    `p`, group count `g`, state size `n` and chunk size `Q` are static; the
    batch `b` and sequence length `L` may be dynamic.

    Chunking: without `cu_seqlens` chunk `c` covers tokens `[c*Q, c*Q + Q)`
    of each batch row and there are `ceil(L/Q)` chunks. With `cu_seqlens`
    (varlen, batch 1) chunks never straddle two sequences: each sequence is
    cut into `ceil(len/Q)` chunks of its own, in sequence order, and the
    chunk dimension is sized for the worst case, `ceil(L/Q) + s - 1` for `s`
    sequences; the chunks past the last sequence's are empty.
  }];
}

#endif // SSD_DIALECT_TD
