//===- ChunkMath.h - pieces of the warp-specialised kernels ----*- C++ -*-===//
//
// What the roles of the warp-specialised kernels share over one 64-token
// chunk: the stage layouts and register budgets, a chunk's decays spread
// over a warp and the values of one token, the prepared decays' layout,
// the accumulator lanes, and the wgmma products the roles issue.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_CHUNKMATH_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_CHUNKMATH_H

#include "WarpSpecializedSSD.h"

#include "../TmaCopy.h"

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

/// A block's share of the head dimension (its p-block).
constexpr int64_t kHeadDim = kPBlock;
constexpr int64_t kGroupThreads = 128;
/// Registers a thread of each role of the SSD kernel, with one output
/// warpgroup (384 threads start with 168) and with two (512 threads start
/// with 128): the state and outputs take what the producer's warpgroup
/// (the copies and the prep warps) gives back.
struct RegisterBudget {
  int64_t producer, state, output;
};
constexpr RegisterBudget kRegisterBudgets[] = {{48, 232, 224}, {48, 176, 144}};
/// The prep warps: warps 1 and 2 of the producer's warpgroup, a thread a
/// token of the chunk.
constexpr int64_t kPrepFirstThread = 32, kPrepThreads = kChunk;
/// One 64-wide bf16 panel of a chunk's rows in the 128-byte swizzle.
constexpr int64_t kPanelBytes = kChunk * 128;
constexpr int64_t kDtBoxBytes = 4 * kDtHeads * kChunk;
constexpr int64_t alignedToSwizzle(int64_t bytes) {
  return (bytes + kSwizzleAlign - 1) / kSwizzleAlign * kSwizzleAlign;
}

/// Where a stage holds each operand (byte offsets; -1 where the kernel's
/// stage has none), the bytes its copies bring, and its size (the next
/// stage 1024-aligned). `xs` and `prepared` are written by the prep warps:
/// x scaled for the state update, and the chunk's decays.
struct StageLayout {
  int64_t c, b, x, dt, xs, prepared, copyBytes, bytes;
};

/// A chunk's decays as the prep warps leave them in its stage, f32 element
/// offsets: per token t, e_t = exp(g_t), f_t = exp(-g_t) dt_t (0 where the
/// chunk is not factored), g_t and dt_t; then g_last and exp(g_last).
namespace prepared {
constexpr int64_t kE = 0, kF = kChunk, kG = 2 * kChunk, kDt = 3 * kChunk,
                  kGLast = 4 * kChunk, kExpLast = kGLast + 1,
                  kBytes = 4 * (kExpLast + 1);
} // namespace prepared

/// The widest decay -g_last over a chunk for which the causal weights are
/// factored as exp(g_t - g_s) dt_s = e_t f_s: e^64 and e^-64 stay normal
/// f32, and every weight on or below the diagonal stays at most dt_s.
/// Wider chunks take exp(g_t - g_s) per weight.
constexpr double kFactoredSpan = 64.0;
/// Whether a chunk whose decays end at `gLast` is factored (i1).
Value factoredChunk(Emitter &e, Value gLast);

/// The SSD's stage: C and B (two panels each), x (one), dt (64 x 4 f32),
/// the scaled x (one panel) and the prepared decays.
constexpr int64_t kSSDCopyBytes = 5 * kPanelBytes + kDtBoxBytes;
constexpr StageLayout kSSDStage = {
    0,
    2 * kPanelBytes,
    4 * kPanelBytes,
    5 * kPanelBytes,
    alignedToSwizzle(kSSDCopyBytes),
    alignedToSwizzle(kSSDCopyBytes) + kPanelBytes,
    kSSDCopyBytes,
    alignedToSwizzle(alignedToSwizzle(kSSDCopyBytes) + kPanelBytes +
                     prepared::kBytes)};
/// The piece states' stage for `heads` heads a block: B (two panels), x
/// (a panel a head, head w at x + w * kPanelBytes) and dt.
constexpr StageLayout pieceStage(int64_t heads) {
  return {-1,
          0,
          2 * kPanelBytes,
          (2 + heads) * kPanelBytes,
          -1,
          -1,
          (2 + heads) * kPanelBytes + kDtBoxBytes,
          alignedToSwizzle((2 + heads) * kPanelBytes + kDtBoxBytes)};
}
/// The piece-states kernel's blocks a SM: two of one or two heads, one of
/// four (four state warpgroups a SM either way but with one head); each
/// with as many stages as fit its share of the SM's shared memory, up to
/// kMaxPieceStages: 4 of 26 KB with one head, 3 of 34 KB with two, 4 of
/// 49 KB with four.
constexpr int64_t kMaxPieceStages = 8;
constexpr int64_t pieceBlocksPerSM(int64_t heads) { return heads <= 2 ? 2 : 1; }
constexpr int64_t pieceStages(int64_t heads) {
  // The mbarriers, the landing ring's and the arena's alignment slack fit
  // in the last 2 KB.
  int64_t fit = (sharedBytesPerBlock(pieceBlocksPerSM(heads)) - 2048) /
                pieceStage(heads).bytes;
  return fit < kMaxPieceStages ? fit : kMaxPieceStages;
}
/// A state warpgroup a head and one producer warp.
constexpr int64_t pieceThreads(int64_t heads) {
  return heads * kGroupThreads + 32;
}
/// The published state: 64 rows (p) of 128 bf16 (n), two panels; a ring
/// of Shape::publishedBuffers buffers.
constexpr int64_t kPublishedBytes = 2 * kPanelBytes;

/// A head's parameters: A, dt's bias and the skip weight D, and its
/// column in a stage's dt box.
struct HeadParams {
  Value a, dtBias, d, dtColumn;
};

/// The cumulative decays of one chunk, spread over a warp: lane l holds
/// tokens 2l and 2l + 1 (dt processed by the layer's rule: bias,
/// softplus, limits; g the cumsum of dt A inside the chunk).
struct ChunkDecays {
  Value g[2], dt[2];
  Value gLast;
};

/// Each warp that needs them scans the stage's dt for its own copy (five
/// shuffles): the SSD kernel's prep warps and the piece states'
/// warpgroup. Tokens from `valid` on (past the sequence's end) get dt = 0:
/// no decay, no input.
ChunkDecays chunkDecays(Emitter &e, const SSDProblem &dtRule, Value dtView,
                        const HeadParams &head, Value valid);

/// The value of token `row` (index, per lane) of a pair spread as
/// ChunkDecays spreads g and dt.
Value ofToken(Emitter &e, const Value pair[2], Value row);

/// g and dt of token `row`.
Value gOfToken(Emitter &e, const ChunkDecays &d, Value row);
Value dtOfToken(Emitter &e, const ChunkDecays &d, Value row);

/// This lane's first accumulator row in its warp's 16 (warp w % 4 of a
/// warpgroup holds rows 16 (w % 4) ..) and first column in an n8 fragment.
struct AccumulatorLane {
  Value row, col;
};
AccumulatorLane accumulatorLane(Emitter &e);

/// `d` += A B^T over K = `steps` x 16, both operands K-major in the
/// swizzle: A's k16 step s by descriptor at `aAt(s)`, B's at `bAt(s)`.
Value wgmmaKMajor(Emitter &e, Value d, int64_t n, int64_t steps,
                  llvm::function_ref<Value(int64_t)> aAt,
                  llvm::function_ref<Value(int64_t)> bAt);

/// wgmmaChunkRegisterA's commit group, not waited for: the fragments'
/// registers must stay untouched until it retires.
Value wgmmaChunkRegisterAAsync(Emitter &e, Value d,
                               llvm::ArrayRef<Value> aFrags, Value bRows,
                               int64_t n);

/// `d` += A B as one commit group, waited for: A the chunk's four k16
/// register fragments `aFrags` (K = 64 tokens), B the chunk's N-major
/// swizzled rows at `bRows` (N = `n`, 64-wide panels a chunk apart).
Value wgmmaChunkRegisterA(Emitter &e, Value d, llvm::ArrayRef<Value> aFrags,
                          Value bRows, int64_t n);

/// `d` += A^T B as one commit group, not waited for: A^T and B the
/// chunk's M-major and N-major swizzled rows (64 tokens of 64-wide panels
/// a chunk apart) at `aRows` and `bRows`; M = 64, N = `n`.
Value wgmmaChunkTransposedA(Emitter &e, Value d, Value aRows, Value bRows,
                            int64_t n);

/// The byte address of a K-major swizzled operand's k16 step `s` (k over
/// 64-wide panels of `kPanelBytes`).
Value kStepAddress(Emitter &e, Value base, int64_t s);

/// Scales each accumulator row r of `fragments` by `rowScale[r]`, r in
/// {0, 1}: the lane's rows row and row + 8.
llvm::SmallVector<Value> scaleRows(Emitter &e, llvm::ArrayRef<Value> fragments,
                             Value rowScale[2]);

Value bf16Pair(Emitter &e, Value lo, Value hi);

/// bar.sync `id` over one warpgroup's 128 threads (id 0 is the block's).
void warpgroupBarrier(Emitter &e, int64_t id);

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_CHUNKMATH_H
