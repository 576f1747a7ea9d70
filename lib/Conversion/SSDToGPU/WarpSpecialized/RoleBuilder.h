//===- RoleBuilder.h - the warpgroup roles of one kernel --------*- C++ -*-===//
//
// RoleBuilder builds the roles of one warp-specialised kernel over its
// block's piece of a sequence: the producer's copies (RoleBuilder.cpp),
// the SSD kernel's prep warps (PrepWarps.cpp), its state and output walks
// (WarpSpecializedSSD.cpp) and the piece states' walk (PieceStates.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H

#include "ChunkMath.h"

#include "../StageRing.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

/// Builds the roles of one kernel; the block's (row, head, p-block) and
/// buffers are members once emitKernel has made them.
class RoleBuilder {
public:
  RoleBuilder(Emitter &e, const Shape &shape, const Operands &ops,
              const StageLayout &layout)
      : e(e), shape(shape), ops(ops), layout(layout) {}

  /// The stage's operand views: [panels][64 rows][64] bf16, and dt.
  Value panels(Value stageBase, int64_t offset, int64_t count) {
    auto type =
        mlir::MemRefType::get({count, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
                        mlir::MemRefLayoutAttrInterface(),
                        mlir::cast<mlir::MemRefType>(ring.getType()).getMemorySpace());
    return mlir::memref::ViewOp::create(e.b, type, ring, e.add(stageBase, offset),
                                  mlir::ValueRange{});
  }
  Value dtView(Value stageBase) {
    auto type = mlir::MemRefType::get(
        {kChunk, kDtHeads}, e.b.getF32Type(), mlir::MemRefLayoutAttrInterface(),
        mlir::cast<mlir::MemRefType>(ring.getType()).getMemorySpace());
    return mlir::memref::ViewOp::create(e.b, type, ring, e.add(stageBase, layout.dt),
                                  mlir::ValueRange{});
  }
  /// The prepared decays of the stage at `stageBase` (prepared::k*), f32.
  Value preparedView(Value stageBase) {
    auto type = mlir::MemRefType::get(
        {prepared::kBytes / 4}, e.b.getF32Type(),
        mlir::MemRefLayoutAttrInterface(),
        mlir::cast<mlir::MemRefType>(ring.getType()).getMemorySpace());
    return mlir::memref::ViewOp::create(
        e.b, type, ring, e.add(stageBase, layout.prepared), mlir::ValueRange{});
  }
  /// `buffer` (a shared buffer of whole tiles) from byte `offset` (none
  /// where null) as [tiles][panels][64 rows][64] bf16 in the 128-byte
  /// swizzle.
  Value swizzledTiles(Value buffer, int64_t tiles, int64_t panelsEach,
                      Value offset = Value()) {
    auto type = mlir::MemRefType::get(
        {tiles, panelsEach, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
        mlir::MemRefLayoutAttrInterface(),
        mlir::cast<mlir::MemRefType>(buffer.getType()).getMemorySpace());
    return mlir::memref::ViewOp::create(
        e.b, type, buffer, offset ? offset : e.idx(0), mlir::ValueRange{});
  }
  Value stageBase(Value stage) { return e.mul(stage, layout.bytes); }
  Value sharedAddress(Value buffer) {
    return mlir::memref::ExtractAlignedPointerAsIndexOp::create(e.b, buffer);
  }

  /// The block's head `w` (0 .. blockHeads - 1).
  Value headOf(int64_t w) { return w ? e.add(head, e.idx(w)) : head; }

  /// Token `t` of this block's sequence as y's and the boxes' token index
  /// in its row.
  Value inRow(Value t) { return ops.cuSeqlens ? e.add(tokenBase, t) : t; }

  /// Chunk `i` of this block's piece (the walk's index), walked from the
  /// piece's first chunk or, `reverse`, from its last.
  Value chunkOf(Value i, bool reverse = false) {
    if (!ops.pieceDecays && !reverse)
      return i;
    return reverse ? e.sub(e.add(firstChunk, e.sub(chunkCount, e.idx(1))), i)
                   : e.add(firstChunk, i);
  }

  /// With packed sequences, the producer's landing ring (one stage) for a
  /// sequence's partial last chunk, from `kernel`'s shared memory; nothing
  /// without. The kernel initialises it with its other rings.
  void addPartialLanding(KernelFunc &kernel);

  /// One thread: every chunk's C (where the stage holds it), B (two boxes
  /// each), x (of each of the block's heads) and dt, in the walk's order. With
  /// packed sequences the sequence's partial last chunk lands on the landing
  /// ring first, and its rows past the end are zeroed in x and B before the
  /// stage is published.
  void produce(StageRing &inputs, bool reverse = false);

  /// Zeroes x's (each head's) and B's rows `rows` .. 63 in the stage at
  /// `base`.
  void zeroRowsFrom(Value base, Value rows);

  /// The state fragments (the accumulator layout, 64 x 128 f32) of this
  /// block's p-block in `states` [..][p][n], its outer indices `outer`.
  llvm::SmallVector<Value> loadStateFragments(Value states, mlir::ValueRange outer);

  /// Stores state fragments `frags` into `states` [..][p][n] at `outer`.
  void storeStateFragments(llvm::ArrayRef<Value> frags, Value states,
                           mlir::ValueRange outer);

  /// Chunk `c`'s decays from the stage at `base`.
  ChunkDecays decays(Value c, Value base, const HeadParams &params);

  /// The state role's accumulators holding the state entering this block's
  /// piece: the initial state (zero where the layer has none) carried over
  /// the pieces before it, S = exp(decay_j) S + S_j, from the piece
  /// states' workspaces.
  Value loadEnteringState();

  /// The prep warps: for each chunk, once its copies have landed, its
  /// decays into the stage's prepared area and x scaled for the state
  /// update, w_s x_s with w_s = exp(g_last - g_s) dt_s, into its xs panel
  /// (a thread a token); then the `prepared` ring's publish.
  void walkPrep(StageRing &inputs, StageRing &prepared,
                const HeadParams &params);

  /// Writes `state` (the state entering chunk `c`) in bf16 where the
  /// output role reads it as C S^T's K-major B: [buffer][panel][p][n % 64]
  /// (waits for the buffer first); the caller publishes it once the
  /// writes are fenced for the async proxy.
  void writePublished(StageRing &published, Value c,
                      llvm::ArrayRef<Value> state);

  /// Warpgroup 1: the state's walk; returns S after the last chunk. Per
  /// chunk: publish S, then S = exp(g_last) S + (w x)^T B from the stage
  /// (the prep warps' xs, M-major, and B, N-major).
  Value walkState(StageRing &inputs, StageRing &prepared, StageRing &published);

  /// P = C B^T exp(g_t - g_s) dt_s on s <= t (0 above), from C B^T's
  /// accumulator fragments `cb` and the chunk's prepared decays `view`, as
  /// the register A fragments of P x: k16 step ks from fragments 2ks,
  /// 2ks + 1 (the accumulator layout is the A layout). Where `factored`
  /// (i1, the same in the whole warpgroup) the weight is e_t f_s (two
  /// multiplications), else exp(g_t - g_s) dt_s.
  llvm::SmallVector<Value>
  causalWeightFragments(Value view, llvm::ArrayRef<Value> cb, Value factored);

  /// The lane's row and column offset in the 8 x 8 matrices of a warp's
  /// ldmatrix/stmatrix .x4 over its 16 accumulator rows.
  struct MatrixLanes {
    Value row, col;
  };
  MatrixLanes matrixLanes();

  /// stmatrix of bf16 `pairs` ([j][r], the accumulator layout of n8
  /// fragments j, rows r) into `view` [buffer][panel][64 rows][64] (the
  /// 128-byte swizzle) at `buffer`.
  void storeMatrices(Value view, Value buffer, llvm::ArrayRef<Value> pairs);

  /// x of the stage at `base` in the accumulator layout, bf16 pairs
  /// ([j][r]), by ldmatrix.
  llvm::SmallVector<Value> xFragments(Value base);

  /// y = `acc` + D x in bf16 pairs ([j][r], the accumulator layout), x as
  /// xFragments gives it; `acc` alone where `d` is null (no D).
  llvm::SmallVector<Value> withSkip(Value acc, llvm::ArrayRef<Value> xPairs,
                                    Value d);

  /// Output warpgroup `group` stores chunk `c`'s y: its `yPairs` into
  /// `tile` ([1][1][64][64] bf16 in the 128-byte swizzle) at `slot`, a
  /// warpgroup barrier, then whole 128-byte rows to global memory, those
  /// before the sequence's end.
  void storeY(Value c, Value tile, Value slot, llvm::ArrayRef<Value> yPairs,
              int64_t group);

  /// Output warpgroup `first` (0 .. outputGroups - 1): y of chunks first,
  /// first + outputGroups, ...
  void walkOutputs(StageRing &inputs, StageRing &prepared, StageRing &published,
                   const HeadParams &params, int64_t first);

  /// The final state of this block's (row, head, p-block) from S's
  /// accumulators, stored by the sequence's last piece.
  void storeState(Value s);

  /// Scales `pieces` 16-byte pieces of row `row` from column `col` of the
  /// x panel at offset `from` in the stage at `base` by `w`, in bf16, into
  /// the panel at offset `to` (`from`: in place).
  void scaleXRow(Value base, Value row, Value col, int64_t pieces, Value w,
                 int64_t from, int64_t to);

  /// Scales the rows of the x panel at offset `x` of the stage at `base`
  /// in place by w_t = exp(gEnd - g_t) dt_t, in bf16 as the register path
  /// rounds (gEnd in `toEnd.gLast`): thread t of the warpgroup takes row
  /// t / 2, half t % 2 (four 16-byte pieces of the swizzled row).
  void scaleXInPlace(Value base, const ChunkDecays &toEnd, int64_t x);

  /// x^T of the x panel at offset `x` of the stage at `base`, each token t
  /// scaled by w_t = exp(gEnd - g_t) dt_t in f32 and rounded to bf16 once
  /// (gEnd in `toEnd.gLast`), as wgmma's register A fragments of the k16
  /// steps (M = 64: warp v of the warpgroup holds rows p = 16 v ..).
  llvm::SmallVector<Value> scaledXTransposed(Value base, int64_t x,
                                             const ChunkDecays &toEnd);

  /// `s` + (w x)^T B of the stage at `base` (bytes from the ring's address
  /// `ringAt`) for warpgroup `w`'s head, one wgmma group not waited for.
  /// One head a block: (w x)^T as register A (scaledXTransposed), nothing
  /// stored; more: x scaled in place (scaleXInPlace), fenced for the async
  /// proxy and met at the warpgroup's barrier, then both operands from
  /// shared memory (x M-major, B N-major).
  Value addChunkState(Value s, Value ringAt, Value base,
                      const ChunkDecays &toEnd, int64_t w);

  /// The piece-states kernel's state warpgroup: this block's piece walked
  /// from its last chunk to its first into S_piece = sum over its tokens s
  /// of exp(g_end - g_s) dt_s x_s^T B_s, g_end - g_s being the decay from
  /// s to the piece's end: R (the chunks after s's) + g_last - g_s. No
  /// term rescales the accumulator, so consecutive chunks' products may
  /// run at once: a chunk's (w x)^T B (addChunkState) runs while the next
  /// chunk is scaled; the stage goes back once the next chunk's products
  /// are issued and its own are done. Stores the sum and the piece's decay
  /// R. Warpgroup `w` walks the block's head w, from its x panel.
  void walkPieceState(StageRing &inputs, int64_t w);

  /// The SSD kernel's roles (WarpSpecializedSSD.cpp) and the piece
  /// states' (PieceStates.cpp), into `kernel`.
  void emit(KernelFunc &kernel);
  void emitPieceStates(KernelFunc &kernel);

private:
  /// Head `ofHead`'s A, dt bias, D and dt column.
  HeadParams headParams(Value ofHead);

  /// This block's (piece, sequence, first head, p-block) for `blockHeads`
  /// heads a block, its heads' group, the sequence's tokens and its
  /// piece's chunks.
  void locateBlock();

  Emitter &e;
  const Shape &shape;
  const Operands &ops;
  const StageLayout &layout;
  Value ring, publishedBuf, yBuf;
  /// Heads a block walks: the piece states' Shape::pieceHeads, else 1.
  int64_t blockHeads = 1;
  /// addPartialLanding's ring (packed sequences alone).
  std::optional<StageRing> partialLanding;
  /// This block's batch row (y's and the TMA boxes'), sequence (the states'
  /// and the workspaces' first index: the row without varlen), (first) head,
  /// first head-dimension column, its head's group, and the sequence's first
  /// token in the row (varlen alone) and its length.
  Value row, sequence, head, p0, group, tokenBase, seqLen;
  /// The sequence's pieces and this block's (null without pieces), and its
  /// chunks: chunkCount from firstChunk.
  Value pieces, piece, firstChunk, chunkCount;
};

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H
