//===- ChainParts.h - the steps the state-chain items are built from -*- C++ -*-===//
//
// Both ways of walking a head's state chain, one chunk per item
// (ChainItem.cpp) and a segment of chunks per item with the state carried on
// chip (SegmentItem.cpp), run the same steps on a chunk: wait for its cumsum
// and CB, stage dA_cumsum / dt / the chunk-state weights in shared memory,
// the chunk-state product S = sum_l (x_l w_l) B_l^T, and the chunk scan.
// They differ in where the state at the chunk start lives and in how the
// chunk states are folded into it.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_CHAINPARTS_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_CHAINPARTS_H

#include "../TileMatmul.h"
#include "FusedKernel.h"

#include <functional>

namespace ssd {
namespace gpu_lowering {
namespace fused {

/// What a chain step works on: rows [p0, p0 + pBlock) of head `head`'s
/// state and output, on chunk `c` of batch row `row`.
struct ChainItem {
  Value row, c, head, group, pb, p0;
  /// The tokens the chunk-state product runs over (a chunk, or with
  /// segments the whole segment) and the chunk's state slot.
  ChunkPlace place;
  Value sDA, sDt, sW; // shared, chunk-length: dA_cumsum, dt, state weights
  /// Shared, optional: the state at the chunk start in the tensor-core type,
  /// [1][pBlock][dstate + kResidentPad], the chunk scan's resident B operand.
  Value sState;
  /// Shared, optional: the state at the chunk start in f32, [pBlock][dstate]
  /// (segments); the chunk scan reads it where it does not use sState.
  /// Without it the scan reads slot(c) of `passed_states`.
  Value sRun;
  /// Shared, optional (KernelConfig::rawOperands): the chunk's x rows
  /// [Q][pBlock + 8] and B, later C, rows [Q][dstate + 8] in the tensor-core
  /// type, copied from global memory by cp.async and read in place by the
  /// products; with TMA (OperandPath::Tma) [pBlock / 64][Q][64] and
  /// [dstate / 64][Q][64] in the 128-byte swizzle (`swizzled`).
  Value sX, sBC;
  bool swizzled = false;
  /// With KernelConfig::ownCumsum: i1, the chunk's CB counter was found
  /// published as the item started (peekChunkCB), uniform over the block.
  Value cbSeen;
};

/// Decodes a chain item index, (row group, step, row in the group, head, pb)
/// with pb fastest, the step a chunk or a segment, the groups of
/// FusedBuild::chainRows rows: sets it.row, head, group, pb and p0, and
/// returns the step. An item waits on the previous step of its own row,
/// which has the smaller ticket.
Value decodeChainIndex(FusedBuild &f, Value index, ChainItem &it);

/// The x, B and C parameters of the fused kernel's TMA descriptors: boxes
/// of a chunk's rows by one 64-element panel.
void addTmaParams(FusedBuild &f, KernelInfo &info);
/// The mbarrier (of f.tmaBarriers, in clusters) on which every block of
/// the cluster arrives once it has read its B rows.
constexpr int64_t kRowsFreeBarrier = 2;
/// Allocates the mbarriers (f.tmaBarriers) and initialises them; call once
/// before the persistent loop (in clusters, with f.clusterRank set).
void initTmaBarriers(FusedBuild &f);
/// Allocates it.sX and it.sBC and issues the copies of the chunk's x rows
/// and B rows (it.place set).
void copyChunkXB(FusedBuild &f, ChainItem &it);
/// Issues the copies of the chunk's C rows into it.sBC, once every thread
/// is past the chunk-state product (which reads B there).
void copyChunkC(FusedBuild &f, ChainItem &it);
/// Waits until the chunk's x and B rows (`xb`) or its C rows have landed;
/// they are visible to every thread then, or (`barrierFollows`: the caller
/// reaches a block barrier before reading them) after that barrier.
void waitChunkRows(FusedBuild &f, const ChainItem &it, bool xb,
                   bool barrierFollows = false);

/// The chunk-state product: one pBlock x dstate tile.
TileMatmul stateProduct(FusedBuild &f);
/// The chunk-scan product: KernelConfig::scanRows output rows by the item's
/// columns.
TileMatmul scanProduct(FusedBuild &f);
/// The resident state operand (ChainItem::sState) in the layout the scan's
/// product reads, and the indices of its element (rr, nn).
Value allocateResidentState(FusedBuild &f);
llvm::SmallVector<Value> residentStateAt(FusedBuild &f, Value rr, Value nn);

/// The block waits for chunks [cBegin, cEnd) of `row`: thread 0 for their
/// cumsum (`cumsum`) and, at the same time, thread 32 for their CB of group
/// `cbGroup` (when given); then the block reads what those items published.
void waitForChunks(FusedBuild &f, Value row, Value cBegin, Value cEnd,
                   bool cumsum, Value cbGroup);

/// KernelConfig::ownCumsum: thread 32 reads chunk it.c's CB counter once
/// (acquire) into a shared flag, which the block reads after the barrier
/// of stageChunk (it.cbSeen); awaitChunkCB, before the scan, waits only
/// where that read found CB unpublished.
Value peekChunkCB(FusedBuild &f, const ChainItem &it);
void readChunkCBFlag(FusedBuild &f, ChainItem &it, Value flag);
void awaitChunkCB(FusedBuild &f, const ChainItem &it);

/// Shared dA_cumsum, dt and the chunk-state weights of chunk `it.c`
/// (buffers allocated on first use, kept in `it`).
void stageChunk(FusedBuild &f, ChainItem &it);

/// The decay carried across chunk `c` of `row`: exp(lastDA) with
/// lastDA its dA_cumsum at Q - 1, or zero where seq_idx changes inside the
/// chunk.
Value carryAcross(FusedBuild &f, Value row, Value c, Value lastDA);
/// carryAcross for chunk `it.c` from the staged dA.
Value stateCarry(FusedBuild &f, const ChainItem &it);

/// S = sum over tokens [0, it.place.range.len) of (x_l it.sW[l]) B_l^T, the
/// whole tile in registers; then `before()` once (on the vector path it
/// must end in a block barrier: the tile waits in shared memory across
/// it), then `fold(rr, nn, v)`
/// for every element of the tile: v is a vector<8xf32> of columns
/// nn..nn+7 on the vector path (`shared`, KernelConfig::productBufferBytes
/// bytes), an f32 elsewhere (rr < pBlock, nn < dstate).
void chunkStateProduct(FusedBuild &f, const ChainItem &it, Value shared,
                       llvm::function_ref<void()> before,
                       llvm::function_ref<void(Value rr, Value nn, Value v)> fold);

/// chunkStateProduct's vector path (KernelConfig::stateVectors) up to the
/// tile staged in shared memory (TileMatmul::stageOutput): the caller reads
/// it, after a block barrier of its own.
TileMatmul stagedChunkState(FusedBuild &f, const ChainItem &it, Value shared);

/// The places of this thread's share of the staged chunk-state tile that a
/// fold walks, `count` of `width` elements each: at(j) is the j-th's row and
/// first column. With KernelConfig::foldPieces, 16-byte pieces of the
/// row-major tile in order (thread t takes pieces t, t + kThreads, ...), so
/// that a warp's slot accesses cover whole sectors; else the product's own
/// 8-column output vectors (TileMatmul::threadOutputVectors).
struct FoldPlaces {
  int64_t width = 0, count = 0;
  std::function<std::pair<Value, Value>(int64_t)> at;
};
FoldPlaces threadFoldPlaces(FusedBuild &f, TileMatmul &mm);
/// Places of `width` elements of a row-major rows x cols tile in order:
/// thread t takes places t, t + kThreads, ... (rows x cols a multiple of
/// width x kThreads).
FoldPlaces slotOrderPlaces(Emitter &e, int64_t width, int64_t rows,
                           int64_t cols);

/// The look-back chain step (KernelConfig::lookBack) of chunk it.c, in
/// place of the turn's: the chunk state, the state at the chunk start
/// (it.sState, for the scan) and the one at its end (slot c + 1, published).
/// LookBack.cpp.
void foldByLookBack(FusedBuild &f, ChainItem &it, Value shared);

/// The chunk scan of chunk `it.c` from the state at its start (it.sState,
/// it.sRun or slot(c)); `shared` as for chunkStateProduct.
void chunkScan(FusedBuild &f, const ChainItem &it, Value shared);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_CHAINPARTS_H
