//===- WarpSpecializedSSD.h - the SSD by warpgroup roles --------*- C++ -*-===//
//
// The warp-specialised SSD kernel: one block per (batch row, head, 64
// columns of the head dimension), its chunks of 64 tokens walked in order
// with the state on chip, by warpgroups with different roles:
//   - warpgroup 0 (setmaxnreg 48): one thread copies each chunk's C, B, x
//     and dt by TMA into a StageRing of `stages` stages; two prep warps
//     (a thread a token) then leave the chunk's decays in the stage (per
//     token e_t = exp(g_t), f_t = exp(-g_t) dt_t, g_t, dt_t; g_last and
//     exp(g_last)) and x scaled for the state update, w_s x_s with
//     w_s = exp(g_last - g_s) dt_s, so that neither consumer scans dt or
//     takes an exponential on its chain;
//   - warpgroup 1, the state: holds S (64 x 128, f32) in wgmma
//     accumulators for the whole walk; per chunk it writes S in bf16 for
//     the output role (stmatrix into a ring of two buffers), then
//     S = exp(g_last) S + (w x)^T B with both operands in shared memory,
//     and publishes the written S while that runs;
//   - warpgroup 2, the outputs: C B^T and C S^T on wgmma from the stage,
//     the causal weights applied to C B^T in registers while C S^T runs
//     (e_t f_s, two multiplications, where the chunk's decay g_last is
//     above -64; exp(g_t - g_s) dt_s where it is not), the rows of C S^T
//     scaled by e_t, then y = that + P x (P as register A) + D x (x by
//     ldmatrix), staged by stmatrix (in tiles of its own, or in the
//     stage's first C panel: Shape::yInStage) and stored by whole 128-byte
//     rows.
//     With two output warpgroups (2 and 3) they take alternate chunks.
// The copies, the state's chain and the chunks' outputs overlap; nothing
// but y (bf16) and the last state goes back to global memory.
//
// Pieces: where batch x heads x head-dimension blocks leave SMs idle, each
// sequence is cut into `pieces` pieces of consecutive chunks, one block
// each. A first kernel, the piece states, walks every piece but the last
// with B, x and dt alone (no C, no outputs) into its state from zero,
// S_j = sum over its tokens of exp(decay to the piece's end) dt x^T B, and
// its decay; the SSD kernel's block of piece k then enters with the
// initial state carried over pieces 0 .. k - 1 (S = exp(decay_j) S + S_j)
// and walks its own chunks. The first kernel scales each chunk's x in
// place and runs (w x)^T B from shared memory alone, so that a chunk's
// products overlap the next chunk's scaling. A piece costs that walk
// (about a fifth of the MMA work, no C) and a few state loads; the chains
// get `pieces` times shorter. A piece-states block walks Shape::pieceHeads
// heads of one group, a state warpgroup each, over one copy of B a chunk:
// its walk is bound by each warpgroup's per-chunk chain, so that more
// warpgroups a SM go faster where the blocks still fill the SMs.
//
// Its inputs come through four TMA descriptors over the layer's tensors,
// dimensions innermost first: C and B (n, group, token, row) bf16, boxes
// (64, 1, 64, 1) in the 128-byte swizzle; x (p, head, token, row) bf16,
// the same boxes; dt (head, token, row) f32, boxes (4, 64, 1) unswizzled (a
// box row holds at least 16 bytes: the dt of 4 heads, the block's among
// them). A sequence's last chunk may be partial: the copies read zeros past
// its end, dt is taken as 0 there (no decay, no input) and y is not stored.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDSSD_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDSSD_H

#include "../Kernels.h"

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

/// Tokens of a chunk, head-dimension columns of a block, state size.
inline constexpr int64_t kChunk = 64, kPBlock = 64, kState = 128;
/// Heads in one box of dt (16 bytes of f32).
inline constexpr int64_t kDtHeads = 4;
/// Stages of 52224 bytes: four fit beside one published state, with y
/// staged in the stages (publishedBuffers 1, yInStage).
inline constexpr int64_t kMinStages = 2, kMaxStages = 4;

/// What the kernel is built for: static sizes, its pipeline, and how dt is
/// processed.
struct Shape {
  int64_t heads = 0, headDim = 0, groups = 1;
  int64_t stages = 2;
  /// Output warpgroups: 1, or 2 taking alternate chunks.
  int64_t outputGroups = 1;
  /// Buffers of the published state: 2 (the state role writes S_i + 1
  /// while C S_i^T runs), or 1 (it waits for C S_i^T), which leaves room
  /// for a fourth stage.
  int64_t publishedBuffers = 2;
  /// Where y is staged: in the chunk's stage, its first C panel (C is read
  /// by then; the stage goes back once y is stored), or in two tiles an
  /// output warpgroup of their own (32 KB more; the stage goes back before
  /// y is stored).
  bool yInStage = false;
  /// How C and B come: one copy each through maps that read their state
  /// dimension as two 64-column panels (the manifest's panel_dim 1, at the
  /// token dimension), or one copy a panel.
  bool panelMaps = false;
  /// Packed sequences (cu_seqlens): the producer's landing ring for a
  /// sequence's partial last chunk (RoleBuilder::produce).
  bool packedSequences = false;
  /// Heads a block of the piece states' kernel walks, a state warpgroup
  /// each, over one copy of B a chunk: 1, 2 or 4, dividing a group's heads
  /// (so that they share B; a block's heads then share one dt box).
  int64_t pieceHeads = 1;
  /// softplus, the dt limits and the element type, which picks softplus's
  /// form (SSDProblem's fields; the rest unread).
  SSDProblem dtRule;
};

/// The kernel's operands. The maps are !llvm.ptr values of the TMA
/// descriptors; A, dt_bias and D memref<heads x f32>; the states
/// memref<batch x heads x headDim x 128 x f32>; y memref<batch x L x heads
/// x headDim x bf16>. dtBias, d and initialStates may be null (none in the
/// layer: no bias, no skip term, a zero initial state).
///
/// Pieces: pieceDecays memref<batch x heads x pieces x f32> (its last
/// dimension is the number of pieces), pieceStates memref<batch x heads x
/// pieces - 1 x headDim x 128 x f32>; both null: one piece. The piece
/// states' kernel reads cMap, d, initialStates and finalStates not, and y
/// for its shape alone.
///
/// Varlen: cuSeqlens memref<sequences + 1 x i32>, the sequences' bounds in
/// y's one row (batch 1); the states and the pieces' workspaces are then
/// per sequence where the above says batch. A block walks its sequence's
/// chunks from the sequence's first token, so no chunk straddles two
/// sequences; the copies of a last partial chunk read the next sequence's
/// tokens, whose x and B rows the producer zeroes before publishing the
/// stage and whose dt the chunk takes as 0: they stay out of the state and
/// of every stored row of y, even where they are NaN or infinite. Null:
/// each batch row is one sequence.
struct Operands {
  Value cMap, bMap, xMap, dtMap;
  Value a, dtBias, d;
  Value initialStates, y, finalStates;
  Value pieceStates, pieceDecays;
  Value cuSeqlens;
};

/// Stages of the published state's barriers: the least multiple of its
/// buffers that the output warpgroups divide.
int64_t publishedStages(const Shape &shape);
/// Threads of a block and bytes of dynamic shared memory.
int64_t blockThreads(const Shape &shape);
int64_t sharedBytes(const Shape &shape);
/// Why `shape` cannot be built (naming the value and the limit); empty
/// when it can.
std::string unsupportedShape(const Shape &shape);

/// Emits the kernel's body into `kernel` (created with blockThreads(shape)
/// threads, setmaxnreg-ready) at the builder's insertion point; the grid is
/// batch x heads x headDim / 64 blocks and the launch's dynamic shared
/// memory sharedBytes(shape). Enables the kernel's shared arena.
void emitKernel(mlir::ImplicitLocOpBuilder &b, KernelFunc &kernel,
                const Shape &shape, const Operands &operands);

/// The piece states' kernel: threads of a block (a state warpgroup a head
/// of Shape::pieceHeads and a producer warp; its shared memory is the
/// kernel's arena size once emitted) and the blocks that fit a SM.
int64_t pieceStatesThreads(const Shape &shape);
int64_t pieceStatesBlocksPerSM(const Shape &shape);
/// Emits its body into `kernel` like emitKernel; the grid is batch x heads
/// / pieceHeads x headDim / 64 x (pieces - 1) blocks, each writing its
/// heads' piece states and decays (p-block 0) into the workspaces.
void emitPieceStatesKernel(mlir::ImplicitLocOpBuilder &b, KernelFunc &kernel,
                           const Shape &shape, const Operands &operands);

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDSSD_H
