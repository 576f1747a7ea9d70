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

#endif // SSD_DIALECT_SSD_TRANSFORMS_PASSES_TD
