//===- FusedKernel.h - the fused persistent SSD kernel ----------*- C++ -*-===//
//
// One gpu.func, `ssd_fused`, launched on `num_sms * kBlocksPerSM` blocks of
// 256 threads. Each block takes work items through a global atomic ticket
// until the tickets run out. The items, in ticket order:
//
//   1. init    (b, h, pb): state slot of every sequence start <- its initial
//                          state (or zero); turn[b,h,pb] <- 1
//   2. cumsum  (b, c, s):  dt_out, dA_cumsum of chunk c for the heads of
//                          slice s (every head where a chunk has one
//                          item); cumsum_ready[b,c] += its heads. None
//                          in the turn chain's kernel, whose chain items
//                          compute their own (KernelConfig::ownCumsum)
//   3. bmm     (b, c, g, t): CB of chunk c, group g: tile t of the lower
//                          triangle; cb_ready[b,c,g] += 1
//   4. chain, one of two ways (FusedPlan::segmented), in groups of
//      FusedBuild::chainRows batch rows whose chains interleave (step k of
//      each row of the group before step k + 1 of any):
//      segment (b, k, h, pb): chunks [kS, (k+1)S) with the state carried
//                          on chip; one chain step per segment (waits
//                          turn[b,h,pb] >= k + 1, slot(k+1) = decay *
//                          slot(k) + the segment's state, turn <- k + 2);
//                          SegmentItem.cpp
//      chunk   (b, c, h, pb): chunk_state of chunk c (x, B, dt, dA) ->
//                          state passing (waits turn[b,h,pb] >= c + 1,
//                          slot(c+1) = decay * slot(c) + chunk state,
//                          turn <- c + 2) -> chunk_scan of chunk c from
//                          slot(c); ChainItem.cpp
//   5. final   (b, h, pb): waits turn >= steps + 1, copies the last slot of
//                          every sequence to final_states
//
// An item only ever waits for items with smaller tickets, which are running
// (their block holds the ticket, so it is resident) or done: the kernel
// cannot deadlock, whatever the grid size and the order blocks start in.
//
// State slots (workspace `passed_states`, state precision): slot(c) holds
// the state at the start of chunk c (segments: slot(k), of segment k).
// Without cu_seqlens a batch row has
// slots 0..nc; with cu_seqlens (b = 1) sequence i owns chunks
// [base_i, base_i + count_i) and slots [base_i + i, base_i + i + count_i],
// so every chain step writes slot(c) + 1 and no step special-cases a
// sequence start: the initial and final states move outside the hot path.
// Where only the next step's fold reads a slot (KernelConfig::stateRing),
// slot s is stored at s mod 2: the workspace holds two slots per (row,
// head, p-block) whatever L, and the chain's slots stay in L2.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FUSEDKERNEL_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FUSEDKERNEL_H

#include "KernelConfig.h"

namespace ssd {
namespace gpu_lowering {
namespace fused {

/// What the fused lowering reads off `ssd.fused`: the problem in the
/// unfused lowering's terms (sizes, types, tensors, workspaces, symbols),
/// plus the work decomposition.
struct FusedPlan {
  SSDProblem p;
  FusedOp op;
  int64_t pBlock = 0;  // headdim rows of one chain item
  int64_t pBlocks = 0; // headdim / pBlock
  /// Workspaces the runtime must zero before every launch.
  llvm::SmallVector<std::string> zeroInit;
  /// How the state chain is walked, as asked (state-chain=); the kernel
  /// takes KernelConfig::chain.
  StateChain chain = StateChain::Chunk;
  /// The tensor-core instruction of the chain item's products.
  MmaInstr mma = MmaInstr::MmaSync;
  /// The chunk-state product's instruction where asked (state-mma=); none:
  /// KernelConfig's rule (wgmma with TMA rows and dstate 128, mma.sync
  /// with cp.async rows, else `mma`).
  std::optional<MmaInstr> stateMma;
  /// How raw x, B and C rows reach shared memory where the layer has them
  /// (KernelConfig::operands).
  CopyInstr copy = CopyInstr::CpAsync;
  /// The chain items record their phase clocks (Profile.h).
  bool profile = false;
  /// Blocks of a thread block cluster, as asked (cluster=); checked by
  /// clusterUnsupported.
  int64_t cluster = 1;
  /// The turn chain's fold's loads ahead of its stores (fold-loads-ahead=;
  /// 0: by the state dtype, KernelConfig).
  int64_t foldLoadsAhead = 0;
  /// How the chain's fold walks the slots (fold=): pieces, vectors or
  /// auto (KernelConfig::foldPieces).
  std::string fold = "auto";
};

/// Tokens a segment holds at most (its chunk-state weights are staged in
/// shared memory, 4 bytes a token).
constexpr int64_t kMaxSegmentTokens = 2048;

/// Reads the plan off the module's single function holding one ssd.fused,
/// or reports why the module is not supported.
mlir::FailureOr<FusedPlan> analyzeFused(mlir::ModuleOp module,
                                        int64_t defaultPBlock);

/// Sizes the `passed_states` workspace for the kernel the plan gets: a
/// ring of KernelConfig::stateRing slots where it takes one. Call once the
/// pass options are applied to the plan.
void sizeStateSlots(FusedPlan &plan);

/// Removes the cumsum items' workspaces (`dt_out`, `dA_cumsum`,
/// `cumsum_ready`) where no kernel of the plan reads them: one turn-chain
/// kernel whose chain items compute their own (KernelConfig::ownCumsum).
/// Call last, once every workspace shaped after them is declared.
void dropUnreadCumsums(FusedPlan &plan);

/// Declares the look-back's workspaces (KernelConfig::lookBack):
/// `chunk_states` [b, nc, h, p, n] in the state precision, each chunk's own
/// state, and `chain_status` [b * nc * h * pBlocks] i32, zero-initialised,
/// per (row, head, p-block, chunk): 1 once the chunk state is published, 2
/// once the state at the chunk's end is (slot c + 1).
void addLookBackWorkspaces(FusedPlan &plan);

/// Declares the `chain_profile` and `item_log` workspaces (Profile.h) and
/// marks the plan.
void addProfileWorkspace(FusedPlan &plan);

/// The bmm items of one chunk and group: one per tile of CB's lower
/// triangle (tileEdge(chunk) rows and columns), so that a chunk's CB is
/// computed by that many blocks at once; the chain items wait until
/// `cb_ready` counts every tile. (One item a chunk where the grid's first
/// wave is full, as for the cumsum, took a loop of run-time length over the
/// tiles, which doubled the kernel's stack frame.)
int64_t cbTileItems(int64_t chunk);

/// Where the first wave is split (FusedBuild::firstWaveSplit), a chunk's
/// cumsum is cumsumSliceItems(heads) items of ceil(heads / items) heads
/// each, at most kCumsumSliceHeads; the chain items wait until
/// `cumsum_ready` counts every head.
constexpr int64_t kCumsumSliceHeads = 16;
int64_t cumsumSliceItems(int64_t heads);

/// The kernel while it is being built: arguments, sizes read at run time
/// and the item counts that split the ticket range.
struct FusedBuild {
  const FusedPlan &plan;
  const SSDProblem &p;
  KernelFunc &k;
  Emitter &e;
  /// The kernel's choices, made once from the plan (chooseKernelConfig).
  KernelConfig config;
  Value batch;     // b
  Value seqLen;    // L
  Value numChunks; // nc
  Value numSeqs;   // sequences per batch row: 1, or s with cu_seqlens
  /// Steps of a (row, head, pb) state chain: nc, or the number of segments.
  Value chainSteps;
  /// Batch rows whose chains run interleaved (decodeChainIndex).
  Value chainRows;
  Value segmentChunks; // chunks per segment (segmented plans)
  /// i1: the cumsum items of a chunk are split into slices of heads, at run
  /// time, where the grid's first wave holds every init, cumsum and bmm item
  /// split so (chooseFirstWaveSplit, cumsumItems).
  Value firstWaveSplit;
  /// With TMA operands (KernelConfig::tmaOperands): mbarriers in shared
  /// memory (memref<Nxi64>), completing once per chain item, the first for
  /// the chunk's x and B rows and the second for its C rows, and the parity
  /// (i32) of the phase the current chain item waits for. In clusters a
  /// third (kRowsFreeBarrier) completes once both blocks of the pair have
  /// read their B rows, so that C's panels may overwrite them in both.
  Value tmaBarriers, tmaParity;
  /// In clusters (KernelConfig::clustered): this block's rank (index).
  Value clusterRank;
  /// The shared i64 the persistent loop broadcasts each ticket through
  /// (broadcastFromThread0); free between the ticket's broadcast and the
  /// item's end, so an item may broadcast its own values through it.
  Value broadcastSlot;
  /// With a profile: the current chain item's phase clocks (shared i64).
  Value profileClocks;
  /// With a profile: the current item's start on %globaltimer (shared i64).
  Value itemStart;

  Value arg(llvm::StringRef name) const { return k.arg(name); }
  bool has(llvm::StringRef name) const { return k.has(name); }
};

/// Where a chunk lies: its tokens and its state slot.
struct ChunkPlace {
  ChunkRange range;
  Value slot; // slot(c): the state at the chunk start
  Value used; // i1: the chunk belongs to a sequence (false: varlen padding)
};
ChunkPlace placeChunk(FusedBuild &f, Value c);

/// Where slot `slot` lies in `passed_states`: `slot` itself, or its place
/// in the ring (KernelConfig::stateRing).
Value stateSlotIndex(FusedBuild &f, Value slot);

/// Calls `body(seq, slotFirst, slotLast)` for every sequence of batch row
/// `row`: its index into initial/final_states and the slots holding its
/// initial and its final state.
void forEachSequence(
    FusedBuild &f, Value row,
    llvm::function_ref<void(Value seq, Value slotFirst, Value slotLast)> body);

/// Calls `body(pp, nn)` for the elements of rows [p0, p0 + pBlock) of a
/// (headdim, dstate) state that this thread owns (block-strided).
void forEachStateElement(FusedBuild &f, Value p0,
                         llvm::function_ref<void(Value pp, Value nn)> body);

/// The counter index of (row, head, pb) in `state_turn`, which is also the
/// index of its init and final items.
Value turnIndex(FusedBuild &f, Value row, Value head, Value pb);

/// The look-back's status words (KernelConfig::lookBack): the index of
/// chunk `c`'s status in `chain_status` for the chain `turn` (turnIndex),
/// and its values.
Value chainStatusIndex(FusedBuild &f, Value turn, Value c);
constexpr int64_t kChunkStatePublished = 1, kEndStatePublished = 2;

/// Emits `byLookBack` or `byTurns`, whichever way this kernel walks the
/// state chain (KernelConfig::lookBack).
void walkStateChain(FusedBuild &f, llvm::function_ref<void()> byLookBack,
                    llvm::function_ref<void()> byTurns);

/// Cumsum items per (row, chunk): cumsumSliceItems where the first wave is
/// split (FusedBuild::firstWaveSplit), else 1.
Value cumsumItems(FusedBuild &f);

// The item bodies; `index` counts items of the kind from 0.
void emitInitItem(FusedBuild &f, Value index);
void emitCumsumItem(FusedBuild &f, Value index);
void emitBmmItem(FusedBuild &f, Value index);
void emitChainItem(FusedBuild &f, Value index);
void emitSegmentItem(FusedBuild &f, Value index);
void emitFinalItem(FusedBuild &f, Value index);

/// Builds the persistent kernel `name` into `module` and returns its
/// manifest entry, which the runtime launches where `when` (an expression
/// of the manifest; empty: always) evaluates to non-zero.
KernelInfo buildFusedKernel(mlir::ImplicitLocOpBuilder &b,
                            mlir::gpu::GPUModuleOp module,
                            const FusedPlan &plan, llvm::StringRef name,
                            llvm::StringRef when = "");

/// Builds the plan's kernels into `module`: `ssd_fused`, and with
/// state-chain=auto where the layer can look back (KernelConfig::adaptive)
/// also `ssd_fused_lookback`, each launched under the manifest's
/// `look_back` (addLookBackWorkspaces), so that exactly one runs.
llvm::SmallVector<KernelInfo> buildFusedKernels(mlir::ImplicitLocOpBuilder &b,
                                                mlir::gpu::GPUModuleOp module,
                                                const FusedPlan &plan);

/// The `ssd.launch` attribute: the unfused schema, with `zero_init` on the
/// counters and the fused op's p_block among the constants.
mlir::DictionaryAttr buildFusedLaunchAttr(mlir::MLIRContext *ctx,
                                          const FusedPlan &plan,
                                          llvm::ArrayRef<KernelInfo> kernels);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FUSEDKERNEL_H
