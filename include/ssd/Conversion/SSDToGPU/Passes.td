//===- Passes.td - ssd to gpu conversion passes ------------*- tablegen -*-===//
#ifndef SSD_CONVERSION_SSDTOGPU_PASSES_TD
#define SSD_CONVERSION_SSDTOGPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSSDToGPU : Pass<"convert-ssd-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower the ssd step ops of one function to GPU kernels (unfused)";
  let description = [{
    Takes a builtin.module holding one func.func whose body is the five-kernel
    data flow of `ssd-decompose` (chunk_cumsum, bmm, chunk_state,
    state_passing, segsum, chunk_scan) over the function's tensor arguments,
    and replaces it by `gpu.module @ssd_kernels` with one `gpu.func` per step:
    `ssd_chunk_cumsum`, `ssd_bmm`, `ssd_chunk_state`, `ssd_state_passing`
    and `ssd_chunk_scan` (segsum is folded into chunk_scan, which derives the
    decays from dA_cumsum). The host side is described by the dictionary
    attribute `ssd.launch` on the module, in the schema of the runtime's
    manifest (docs/runtime.md): tensors, workspaces, derived symbols and the
    kernels with grid, block, shared memory and parameters. Kernel parameters
    use MLIR's expanded memref descriptor (`abi = "memref"`).

    The matrix products of bmm, chunk_state and chunk_scan use tensor cores
    (`nvgpu.ldmatrix` + m16n8k16 `nvgpu.mma.sync` for f16, `nvvm.mma.sync`
    for bf16 whose nvgpu lowering is missing; f32 accumulation) for
    bf16 and f16 inputs when `tensor-cores` is set, and exact f32 FMAs
    otherwise. The function is erased.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip of the #nvvm.target attached to the gpu.module">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features of the #nvvm.target">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "Use mma.sync for the bf16/f16 matrix products">,
    Option<"keepFunc", "keep-func", "bool", /*default=*/"false",
           "Keep the source function (for inspection) instead of erasing it">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def ConvertSSDFusedToGPU
    : Pass<"convert-ssd-fused-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower one ssd.fused to one persistent GPU kernel";
  let description = [{
    Takes a builtin.module holding one func.func whose body is one
    `ssd.fused` (the result of `ssd-decompose` and `ssd-fuse`) over the
    function's tensor arguments, and replaces it by `gpu.module
    @ssd_kernels` with ONE persistent `gpu.func @ssd_fused` per launch
    (with `state-chain=auto`, an alternative beside it), launched on
    `num_sms * 2` blocks of 256 threads. Blocks take work items through a
    global atomic ticket in a fixed order (initial states into their slots,
    chunk cumsums, CB per group, then the state chain, then the final
    states), so that every item waits only for earlier tickets and the
    kernel cannot deadlock. With `state-chain=chunk` the
    state chain is walked per (batch, chunk, head, p-block): chunk_state ->
    state_passing -> chunk_scan, one chain step per chunk; each item
    computes its chunk's dt and dA_cumsum itself (such a kernel holds no
    cumsum items, and without a look-back kernel beside it the module has
    no `dt_out`, `dA_cumsum` or `cumsum_ready` workspace) and waits for
    the chunk's CB only before its chunk_scan. With
    `state-chain=lookback` the items are the same, but an item whose
    predecessor has not yet published its end state publishes its own chunk
    state (`chunk_states`, status in `chain_status`) and looks back for the
    latest published state, folding the chunk states after it: the chain's
    latency is paid once per look-back instead of once per chunk. With
    `state-chain=segment` (not for varlen layers) it is walked per (batch,
    segment, head, p-block): each item takes a segment of consecutive
    chunks (its size chosen at run time from the grid and the chunk count),
    computes the segment's own end state, takes ONE step of the chain
    (slot k+1 = decay * slot k + that state), then scans its chunks in
    order with the state carried in shared memory; the chain is nc / S
    steps long, and the chunk states are computed twice. With
    `state-chain=auto` (the default), where the layer can look back and
    one batch row's chains leave an sm_90 grid room for it, the module
    holds two kernels, `ssd_fused` (chunk) and `ssd_fused_lookback`, each
    with a launch condition (`when`) over the derived symbol `look_back`,
    so that every launch runs one of them; elsewhere `ssd_fused` alone
    (chunk). Each gpu.func carries `ssd.state_chain`. Hand-offs are
    releases (a fence, then a relaxed store, or a relaxed add where several
    items count into one counter) and acquire spins at device scope on
    counters in `zero_init` workspaces (`ticket`, `cumsum_ready` where the
    cumsum items run, `cb_ready`, `state_turn`); the passed states live in the
    `passed_states` workspace in the state precision, decays in f32.

    For the layers they take, the module holds the warp-specialised
    kernels instead (`warp-specialized=`): `ssd_warp_specialized`, one
    block per (piece of a sequence, batch row, head, 64 head-dimension
    columns), the state carried on chip through the piece by warpgroup
    roles, and `ssd_warp_specialized_piece_states` before it (launched
    where there are two pieces or more), each piece's state and decay from
    B, x and dt alone into the `piece_states` and `piece_decays`
    workspaces; the derived symbol `ws_pieces` is the pieces a sequence
    (`warp-specialized-pieces=`, or chosen at launch from the batch, L and
    the SM count).

    The launch is described by `ssd.launch` in the schema of
    `convert-ssd-to-gpu` (docs/runtime.md). Matrix products use mma.sync
    tensor cores for bf16/f16 when `tensor-cores` is set.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip of the #nvvm.target attached to the gpu.module">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features of the #nvvm.target">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "Use mma.sync for the bf16/f16 matrix products">,
    Option<"pBlock", "p-block", "int64_t", /*default=*/"64",
           "Headdim rows per chain item when ssd.fused has no p_block "
           "(the largest power of two up to this that divides headdim)">,
    Option<"mma", "mma", "std::string", /*default=*/"\"mma.sync\"",
           "Tensor-core instruction of the chain item's products: `mma.sync` "
           "(ldmatrix fragments, any sm_80+ target) or `wgmma` (sm_90a: "
           "operands read in place from shared memory by warpgroups)">,
    Option<"stateMma", "state-mma", "std::string", /*default=*/"\"auto\"",
           "Tensor-core instruction of the chunk-state product: `auto` "
           "(wgmma with TMA rows and dstate 128, reading B's rows in place "
           "beside the staged x w; mma.sync with cp.async rows; else as "
           "`mma`), `mma.sync` (with raw rows too), or `wgmma` (sm_90a; as "
           "auto with raw rows, and staged without them); state_mma in "
           "ssd.kernel_config says what it took">,
    Option<"copy", "copy", "std::string", /*default=*/"\"auto\"",
           "How the chain item's x, B and C rows reach shared memory where "
           "the layer allows raw operands: `auto` (tma on sm_90a, cp.async "
           "elsewhere), `cp.async` (16-byte copies by "
           "every thread, padded rows) or `tma` (sm_90a: one "
           "cp.async.bulk.tensor box per operand panel issued by one "
           "thread, completed on an mbarrier, rows in the 128-byte swizzle; "
           "layers with cu_seqlens, or whose rows are not whole 64-element "
           "panels, keep cp.async)">,
    Option<"stateChain", "state-chain", "std::string",
           /*default=*/"\"auto\"",
           "How the state chain is walked: `chunk` (one item and one chain "
           "step per chunk, the state through `passed_states`), `lookback` "
           "(one item per chunk; an item whose predecessor's state is not "
           "yet published publishes its chunk state in `chunk_states` and "
           "folds the latest published state with the chunk states after "
           "it, a decoupled look-back; layers without cu_seqlens whose "
           "products take the vector path, others take `chunk`), `auto` "
           "(the default: two kernels, `ssd_fused` walking the chain as "
           "`chunk` with its ring and `ssd_fused_lookback` as `lookback`; "
           "the manifest launches the look-back where the grid holds at "
           "least 8 blocks per chain, b x heads x p-blocks chains, through "
           "the derived symbol `look_back`, which also sizes the "
           "workspaces, and the turns elsewhere; `chunk` alone where one "
           "batch row has more chains than an sm_90 grid allows for, or "
           "the layer cannot look back) or "
           "`segment` (segments of chunks with the state carried on chip, "
           "one chain step per segment; varlen layers take `chunk`)">,
    Option<"cluster", "cluster", "int64_t", /*default=*/"1",
           "Blocks of a thread block cluster: 1 (none) or 2 (sm_90a, TMA "
           "rows: the two blocks take work items in pairs, and a pair of "
           "chain items of one chunk and group copies each B and C panel "
           "from L2 once, multicast into both blocks' shared memory; the "
           "kernel carries .reqnctapercluster)">,
    Option<"foldLoadsAhead", "fold-loads-ahead", "int64_t",
           /*default=*/"0",
           "How far the turn chain's fold runs its loads of slot(c) ahead of "
           "its stores into slot(c + 1), in the fold's units a thread (see "
           "`fold`), 1 to 8, or 0 (the default) by the fold: 4 pieces with "
           "f32 states, 2 vectors with f16 ones, 1 vector with f32 ones. "
           "More overlap the round trips, and leave more stores to drain at "
           "the release (vector path, state-chain chunk or auto's turn "
           "kernel)">,
    Option<"fold", "fold", "std::string", /*default=*/"\"auto\"",
           "How the chain's fold (the turn chain's and the look-back's, "
           "its chunk states too) walks the state slots: `pieces` "
           "(16-byte pieces in slot order, so that each warp access covers "
           "whole 32-byte sectors), `vectors` (the chunk-state product's "
           "8-column vectors: with f32 slots each vector is two 16-byte "
           "accesses over half sectors) or `auto` (the default: pieces with "
           "f32 states, vectors with f16 ones, whose vectors are already "
           "16-byte pieces). Pieces need the vector path and a chunk-state "
           "tile of whole pieces per thread; elsewhere the fold takes "
           "vectors (ssd.kernel_config prints fold_pieces where it took "
           "pieces)">,
    Option<"warpSpecializedPieces", "warp-specialized-pieces", "int64_t",
           /*default=*/"0",
           "Pieces the warp-specialised kernel cuts each sequence into "
           "(1 to 64; 0, the default: chosen at launch from the batch, the "
           "SM count and L, up to 8): a first kernel walks every piece but "
           "the last for its state alone, and the SSD kernel's blocks of a "
           "piece enter with the state carried over the ones before">,
    Option<"warpSpecializedStages", "warp-specialized-stages", "int64_t",
           /*default=*/"0",
           "Stages of the warp-specialised kernel's input ring, 2 to 4 (0, "
           "the default: 4). Four fit in a block's shared memory with one "
           "published state buffer and y in the stages">,
    Option<"warpSpecializedPublishedBuffers",
           "warp-specialized-published-buffers", "int64_t",
           /*default=*/"0",
           "Buffers of the state the warp-specialised kernel's state role "
           "publishes for the outputs, 1 or 2 (0, the default: 1): with one "
           "it writes the next state once the outputs have read the last">,
    Option<"warpSpecializedPieceHeads", "warp-specialized-piece-heads",
           "int64_t", /*default=*/"0",
           "Heads a block of the piece states' kernel walks over one copy "
           "of B, a warpgroup each: 1, 2 or 4, dividing a group's heads (0, "
           "the default: kernels of 1 and of 4 where 4 divide, the launch "
           "picking one with the pieces (ws_wide); else 1)">,
    Option<"warpSpecializedY", "warp-specialized-y", "std::string",
           /*default=*/"\"auto\"",
           "Where the warp-specialised kernel stages y before its store: "
           "`stage`, in the chunk's first C panel (the stage goes back once "
           "y is stored); `tiles`, in tiles of its own (32 KB more shared "
           "memory); `auto` (the default): `stage`">,
    Option<"warpSpecializedPanelMaps", "warp-specialized-panel-maps", "bool",
           /*default=*/"false",
           "Copy C and B in one TMA box each, through maps that read their "
           "state dimension as 64-column panels (the manifest's panel_dim), "
           "instead of a copy a panel">,
    Option<"warpSpecialized", "warp-specialized", "std::string",
           /*default=*/"\"auto\"",
           "Whether the module holds the warp-specialised kernels instead of "
           "the persistent one: `ssd_warp_specialized`, one (piece of a "
           "sequence, batch row, head, 64 head-dimension columns) a block "
           "by warpgroup roles (TMA producer, the state in wgmma "
           "accumulators, output warpgroups; chunks of 64 tokens), and "
           "`ssd_warp_specialized_piece_states` before it, for the layers "
           "they take: sm_90a, bf16 x/B/C, f32 dt, f32 or f16 states, "
           "dstate 128, head dims of whole 64-column blocks, heads in fours, "
           "a per-head D, no z or seq_idx; packed sequences (cu_seqlens) a "
           "block a sequence's chain. `auto` (the default) "
           "and `always`: those for a layer they take; `never`: the persistent "
           "kernel. With `auto` a layer they do not take gets the persistent "
           "kernel; with `always` it is an error that says why. The "
           "persistent kernel's options (state-chain, mma, state-mma, copy, "
           "cluster, fold, fold-loads-ahead, p-block) apply where it is "
           "built">,
    Option<"profile", "profile", "bool", /*default=*/"false",
           "Record thread 0's clock64 at the phase boundaries of every chain "
           "item (every state-chain but segment) in the `chain_profile` workspace (i64 "
           "[b, nc, heads, p-blocks, 13]: block, SM, start clock, then each "
           "phase's end and the last warp's end relative to the start; "
           "bench/ssd-bench --profile writes it out)">,
    Option<"keepFunc", "keep-func", "bool", /*default=*/"false",
           "Keep the source function (for inspection) instead of erasing it">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def SSDTmaDescriptorsByValue
    : Pass<"ssd-tma-descriptors-by-value", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the kernels' TMA descriptors as grid-constant parameters";
  let description = [{
    Runs on the kernels after `convert-gpu-to-nvvm`. The GPU lowerings give a
    kernel that copies by TMA the attributes `ssd.tma_descriptors` (the
    positions of its descriptor pointers among the lowered `llvm.func`
    arguments, after every memref argument became its expanded descriptor)
    and `ssd.lowered_arg_count` (how many lowered arguments that gives). This
    pass marks each of those pointers `llvm.byval = !llvm.array<128 x i8>`,
    `llvm.align = 64` and `nvvm.grid_constant`, so that the 128-byte
    descriptor travels in the kernel's parameters and the TMA copies read it
    where it is (the runtime's `pass: value`): no copy into global memory
    before each launch, and a CUDA graph captures it with the launch. The
    attributes go away. (`convert-gpu-to-nvvm` drops argument attributes,
    and `nvvm.grid_constant` is not allowed on a `gpu.func`, hence a pass
    after it.)

    Errors: a kernel whose lowered argument count differs from
    `ssd.lowered_arg_count` (the memref calling convention is not the one
    the positions were counted for), or a position that is out of range or
    not an `!llvm.ptr`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

def TestTileProduct : Pass<"ssd-test-tile-product", "::mlir::ModuleOp"> {
  let summary = "Test pass: one tile matrix product of the GPU kernels, alone";
  let description = [{
    Appends `gpu.module @ssd_kernels` with one kernel, `tile_product`, that
    runs the GPU lowerings' tile product (TileMatmul) once on 256 threads
    and one block: `C[m][n] = sum_k A(k, m) B(k, n)` over all `k` with f32
    accumulation, A and B in bf16 and read through the product's vector
    fills, C in f32. Its arguments are `A` (`m x k` when `a-k-contiguous`,
    else `k x m`), `B` (`n x k` when `b-k-contiguous`, else `k x n`) and `C`
    (`m x n`), static memrefs passed as expanded descriptors. It exists so
    that each tensor-core path (`mma`), operand layout and tile shape can be
    checked on its own against a host product, without the SSD around it.

    `a-source` picks how A reaches the tensor cores (mma.sync only for all
    but `staged`): `staged` (the vector fills), `registers` (A's fragments
    computed in registers from global memory beside B copied into shared
    memory and read in place), `scaled` (A and B both copied into shared
    memory, A's fragments multiplied along k by s(k) = 2^(k % 3 - 1), exact
    in bf16) or `causal` (as `registers`, with A(k, m) zero for k > m and
    the warps skipping the k16 steps past their diagonal).
  }];
  let options = [
    Option<"m", "m", "int64_t", /*default=*/"64", "Output rows (tile M)">,
    Option<"n", "n", "int64_t", /*default=*/"64", "Output columns (tile N)">,
    Option<"k", "k", "int64_t", /*default=*/"128", "Reduction length">,
    Option<"depth", "depth", "int64_t", /*default=*/"64",
           "K slice depth of the product">,
    Option<"aKContiguous", "a-k-contiguous", "bool", /*default=*/"true",
           "A is m x k (k contiguous) rather than k x m">,
    Option<"bKContiguous", "b-k-contiguous", "bool", /*default=*/"true",
           "B is n x k (k contiguous) rather than k x n">,
    Option<"mma", "mma", "std::string", /*default=*/"\"mma.sync\"",
           "Tensor-core instruction: mma.sync or wgmma (sm_90a)">,
    Option<"aSource", "a-source", "std::string", /*default=*/"\"staged\"",
           "How A reaches the tensor cores: staged, registers, scaled or "
           "causal">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def TestPipelinedProduct
    : Pass<"ssd-test-pipelined-product", "::mlir::ModuleOp"> {
  let summary = "Test pass: a warp-specialised, pipelined wgmma product, alone";
  let description = [{
    Appends `gpu.module @ssd_kernels` with one kernel, `pipelined_product`,
    one block of 128 x (1 + m / 64) threads computing `C[m][n] = sum_k
    A[m][k] B[n][k]` (bf16 in, f32 accumulation and out) the way a
    warp-specialised kernel's main loop does: warpgroup 0 produces
    (setmaxnreg 40; one thread copies each 64-deep K slice of A and B by
    TMA, in the 128-byte swizzle, into a ring of `stages` shared-memory
    stages with a full and an empty mbarrier each), warpgroups 1 .. m / 64
    consume (setmaxnreg 232; wgmma m64nNk16 on their 64 rows straight from
    the stages, one group a slice, one group in flight, a slice's stage
    released once its group is done) and store C from the accumulators.
    Arguments: two pointers to the tensor maps of A (m x k) and B (n x k)
    in global memory (box: 64 columns x all rows, 128-byte swizzle), and C
    as a static memref. The kernel's dynamic shared memory is the module's
    `ssd.shared_memory` attribute.
  }];
  let options = [
    Option<"m", "m", "int64_t", /*default=*/"128",
           "Output rows: 64 or 128 (one consumer warpgroup per 64)">,
    Option<"n", "n", "int64_t", /*default=*/"128",
           "Output columns: a multiple of 16 up to 256">,
    Option<"k", "k", "int64_t", /*default=*/"512",
           "Reduction length: a multiple of 64">,
    Option<"stages", "stages", "int64_t", /*default=*/"4",
           "Shared-memory stages of the ring: 2 to 8">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TestWarpSpecializedSSD
    : Pass<"ssd-test-warp-specialized-ssd", "::mlir::ModuleOp"> {
  let summary = "Test pass: the SSD of one (batch row, head) a block, by "
                "warpgroup roles";
  let description = [{
    Appends `gpu.module @ssd_kernels` with one kernel,
    `warp_specialized_ssd`: the Mamba-2 SSD layer's scan (state 128, chunks
    of 64 tokens; dt = softplus(dt + bias), the skip term D x, initial and
    final states; no z or varlen) of one (batch row, head, 64 columns of
    the head dimension) per block of 384 or 512 threads, the chunks walked in
    with the state on chip. Warpgroup 0 (setmaxnreg 40) copies each chunk's
    C, B, x and dt by TMA into a ring of `stages` stages; warpgroup 1
    (setmaxnreg 232) holds the f32 state in wgmma accumulators, publishes it
    in bf16 each chunk and updates it with a register-A wgmma; warpgroup 2
    (and 3, with `output-groups=2`: alternate chunks) computes C B^T and
    C S^T on wgmma, the causal decay weights in registers, and
    y = exp(g) C S^T + P x + D x (staged in tiles of its own or, with
    `y-in-stage`, in the stage's C; stored by whole rows); a ragged last
    chunk takes dt = 0 past the
    sequence's end and stores no y there. It is the kernel
    `convert-ssd-fused-to-gpu` adds as `ssd_warp_specialized`
    (`warp-specialized=`), built from these options alone. Arguments:
    pointers to the tensor maps of C and B ([batch][seqlen][groups][128]
    bf16), x ([batch][seqlen][heads][headdim] bf16; boxes of 64 tokens x 64
    columns, 128-byte swizzle) and dt ([batch][seqlen][heads] f32, the
    layer's layout; boxes of 64 tokens x 4 heads, so heads is a multiple of
    4), then A, dt's bias and D [heads], the initial states
    [batch][heads][headdim][128] (f32), y [batch][seqlen][heads][headdim]
    (bf16) and the final states (f32). The grid is batch x heads x
    headdim / 64 blocks; the dynamic
    shared memory is the module's
    `ssd.shared_memory` attribute.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"1", "Batch rows">,
    Option<"heads", "heads", "int64_t", /*default=*/"4",
           "Heads: a multiple of 4">,
    Option<"headdim", "headdim", "int64_t", /*default=*/"64",
           "Head dimension: 64 to 256 in p-blocks of 64, one a block">,
    Option<"groups", "groups", "int64_t", /*default=*/"1",
           "Groups of heads sharing B and C: a divisor of heads">,
    Option<"seqlen", "seqlen", "int64_t", /*default=*/"256",
           "Tokens per row (chunks of 64, the last may be partial)">,
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "Shared-memory stages of the input ring: 2 to 4 (4 with one "
           "published-state buffer)">,
    Option<"outputGroups", "output-groups", "int64_t", /*default=*/"1",
           "Output warpgroups: 1, or 2 taking alternate chunks (512 "
           "threads, 144 registers each)">,
    Option<"publishedBuffers", "published-buffers", "int64_t",
           /*default=*/"2",
           "Buffers of the published state: 2, or 1 (the state waits for "
           "the outputs' C S^T before writing the next)">,
    Option<"yInStage", "y-in-stage", "bool", /*default=*/"false",
           "Stage y in the chunk's stage (its first C panel, read by then) "
           "instead of tiles of its own (32 KB)">,
    Option<"panelMaps", "panel-maps", "bool", /*default=*/"false",
           "Copy C and B in one box each through maps that read the state "
           "dimension as two 64-column panels (5 coordinates: column, "
           "group, token, panel, row) instead of one box a panel">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // SSD_CONVERSION_SSDTOGPU_PASSES_TD
