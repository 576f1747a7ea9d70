//===- RoleBuilder.h - the warpgroup roles of one kernel --------*- C++ -*-===//
//
// RoleBuilder builds the roles of one warp-specialised kernel over its
// block's piece of a sequence: the producer's copies (RoleBuilder.cpp),
// the SSD kernel's state and output walks (WarpSpecializedSSD.cpp) and the
// piece states' walk (PieceStates.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H

#include "ChunkMath.h"

#include "../StageRing.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

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
  Value stageBase(Value stage) { return e.mul(stage, layout.bytes); }
  Value sharedAddress(Value buffer) {
    return mlir::memref::ExtractAlignedPointerAsIndexOp::create(e.b, buffer);
  }

  /// Chunk `i` of this block's piece (the walk's index), walked from the
  /// piece's first chunk or, `reverse`, from its last.
  Value chunkOf(Value i, bool reverse = false) {
    if (!ops.pieceDecays && !reverse)
      return i;
    return reverse ? e.sub(e.add(firstChunk, e.sub(chunkCount, e.idx(1))), i)
                   : e.add(firstChunk, i);
  }

  /// One thread: every chunk's C (where the stage holds it), B (two boxes
  /// each), x and dt, in the walk's order.
  void produce(StageRing &inputs, bool reverse = false);

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

  /// Publishes `state` (the state entering chunk `c`) in bf16, where the
  /// output role reads it as C S^T's K-major B: [buffer][panel][p][n % 64].
  void publishState(StageRing &published, Value c, llvm::ArrayRef<Value> state);

  /// The state update's A = (w x)^T, four k16 register fragments: x^T's by
  /// ldmatrix.trans from the stage at `base`, scaled along k by
  /// w_s = exp(g_last - g_s) dt_s.
  llvm::SmallVector<Value> scaledXFragments(Value base, const ChunkDecays &d);

  /// Warpgroup 1: the state's walk; returns S after the last chunk.
  Value walkState(StageRing &inputs, StageRing &published,
                  const HeadParams &params);

  /// P = C B^T exp(g_t - g_s) dt_s on s <= t (0 above), from C B^T's
  /// accumulator fragments `cb` and g of the lane's rows `gRow`, as the
  /// register A fragments of P x: k16 step ks from fragments 2ks, 2ks + 1
  /// (the accumulator layout is the A layout).
  llvm::SmallVector<Value> causalWeightFragments(const ChunkDecays &d,
                                           llvm::ArrayRef<Value> cb, Value gRow[2]);

  /// y = `acc` + D x in bf16 pairs ([j][r], the accumulator layout), x read
  /// from the stage at `base`; `acc` alone where `d` is null (no D).
  llvm::SmallVector<Value> withSkip(Value acc, Value base, Value d);

  /// Output warpgroup `first` (0 .. outputGroups - 1): y of chunks first,
  /// first + outputGroups, ...
  void walkOutputs(StageRing &inputs, StageRing &published,
                   const HeadParams &params, int64_t first);

  /// The final state of this block's (row, head, p-block) from S's
  /// accumulators, stored by the sequence's last piece.
  void storeState(Value s);

  /// Scales the x rows of the stage at `base` in place by w_t = exp(gEnd
  /// - g_t) dt_t, in bf16 as the register path rounds (gEnd in
  /// `toEnd.gLast`): thread t of the warpgroup takes row t / 2, half t % 2
  /// (four 16-byte pieces of the swizzled row).
  void scaleXInPlace(Value base, const ChunkDecays &toEnd);

  /// The piece-states kernel's state warpgroup: this block's piece walked
  /// from its last chunk to its first into S_piece = sum over its tokens s
  /// of exp(g_end - g_s) dt_s x_s^T B_s, g_end - g_s being the decay from
  /// s to the piece's end: R (the chunks after s's) + g_last - g_s. No
  /// term rescales the accumulator, so consecutive chunks' products may
  /// run at once: each chunk's x is scaled in place in its stage, and
  /// (w x)^T B runs with both operands in shared memory (x M-major, B
  /// N-major) while the next chunk is scaled; the stage goes back once
  /// the next chunk's products are issued and its own are done. Stores
  /// the sum and the piece's decay R.
  void walkPieceState(StageRing &inputs, const HeadParams &params);

  /// The SSD kernel's roles (WarpSpecializedSSD.cpp) and the piece
  /// states' (PieceStates.cpp), into `kernel`.
  void emit(KernelFunc &kernel);
  void emitPieceStates(KernelFunc &kernel);

private:
  /// This block's head's A, dt bias, D and dt column.
  HeadParams headParams();

  /// This block's (piece, row, head, p-block), its head's group, the
  /// sequence's length and its piece's chunks.
  void locateBlock();

  Emitter &e;
  const Shape &shape;
  const Operands &ops;
  const StageLayout &layout;
  Value ring, publishedBuf;
  /// This block's batch row, head, first head-dimension column, its head's
  /// group, and the sequence's length.
  Value row, head, p0, group, seqLen;
  /// The sequence's pieces and this block's (null without pieces), and its
  /// chunks: chunkCount from firstChunk.
  Value pieces, piece, firstChunk, chunkCount;
};

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_ROLEBUILDER_H
