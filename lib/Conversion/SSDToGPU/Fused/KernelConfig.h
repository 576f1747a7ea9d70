//===- KernelConfig.h - every choice of the fused kernel -------*- C++ -*-===//
//
// The fused kernel's configuration: the block and grid shape, the work
// item's rows, the state chain, the tensor-core instruction, the paths the
// chain item's products take and the shared memory they share. It is
// chosen once from the plan (chooseKernelConfig), before any code is
// emitted; the item builders read it (FusedBuild::config) instead of
// re-deciding, and `ssd.kernel_config` prints it.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_KERNELCONFIG_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_KERNELCONFIG_H

#include "../KernelCommon.h"
#include "../TileMatmul.h"

#include <optional>
#include <string>

namespace ssd {
namespace gpu_lowering {
namespace fused {

/// Blocks per SM the persistent grid is sized for (the kernel is compiled
/// with nvvm.minctasm of the same value so that they fit).
constexpr int64_t kBlocksPerSM = 2;
constexpr int64_t kThreads = 256;
/// Slots of a state ring (KernelConfig::stateRing).
constexpr int64_t kStateRingSlots = 2;
/// Cycles a look-back item waits for its predecessor's end state first
/// (KernelConfig::lookBackPatience): where the chain keeps up, as with
/// many heads, the wait is short and the item folds as the turn chain does,
/// without the chunk state's 32 KB store and the look-back's loads.
constexpr int64_t kLookBackPatience = 2000;
/// state-chain=auto looks back where the grid holds at least this many
/// blocks per chain (b x heads x p-blocks chains): measured on the H200
/// (264 blocks), the look-back was 1.1-2.2x faster with 8 and 24 chains
/// and 6-15% slower with 48, 80 and 192 (bench/NOTES-fused-gpu.md).
constexpr int64_t kLookBackBlocksPerChain = 8;
/// The most blocks the persistent grid has on an sm_90 part (132 SMs on
/// H100/H200 SXM, kBlocksPerSM each): a layer whose single batch row has
/// more chains than this allows for would never look back, so auto keeps
/// the turn chain alone there (both ways in one kernel cost 1.6-7.7% on
/// the Mamba-2 2.7B layer's launches that took the turns).
constexpr int64_t kMaxGridBlocks = 132 * kBlocksPerSM;
/// The largest fold-loads-ahead (KernelConfig::foldLoadsAhead). A thread
/// folds pBlock x dstate / (8 x kThreads) vectors of the chunk state (4 at
/// the Mamba-2 2.7B layer); a distance beyond them loads them all first.
constexpr int64_t kMaxFoldLoadsAhead = 8;

struct FusedPlan;

/// Elements of one 16-byte piece of state slots of `stateType`
/// (KernelConfig::foldPieces).
inline int64_t foldPieceWidth(mlir::Type stateType) {
  return 128 / stateType.getIntOrFloatBitWidth();
}

/// How a (row, head, p-block) state chain is walked:
///  - Chunk: one item per chunk; step c waits its turn (turn = c + 1), folds
///    slot(c) into slot(c + 1) and passes the turn on (ChainItem.cpp);
///  - Segment: one item per segment of chunks, the state carried on chip
///    (SegmentItem.cpp);
///  - LookBack: one item per chunk; an item whose predecessor has not yet
///    published its state publishes its own chunk state, and folds the
///    latest published state with the chunk states after it (a decoupled
///    look-back, LookBack.cpp), so that the chain's latency is paid once
///    per look-back instead of once per chunk;
///  - Auto: two kernels, one per way (LookBack, and Chunk with its ring),
///    the runtime launching LookBack where few chains run at once
///    (kLookBackBlocksPerChain; buildFusedKernels).
enum class StateChain { Chunk, Segment, LookBack, Auto };
llvm::StringRef stateChainName(StateChain chain);
/// The chain stateChainName(chain) names, or none.
std::optional<StateChain> parseStateChain(llvm::StringRef name);

/// How the chain item's products get x, B and C: raw rows copied whole
/// into shared memory by TMA or by cp.async and read there in place, or
/// loaded by each product into registers (and staged, on the vector path).
enum class OperandPath { Tma, CpAsync, Registers };

struct KernelConfig {
  int64_t blockThreads = kThreads;
  int64_t blocksPerSM = kBlocksPerSM;
  int64_t pBlock = 0; // headdim rows of one chain item
  /// How the state chain is walked (FusedPlan::chain, where the layer and
  /// the products allow it).
  StateChain chain = StateChain::Chunk;
  bool segmented() const { return chain == StateChain::Segment; }
  /// The kernel walks the chain by look-back (LookBack), or the artifact
  /// holds a look-back kernel beside the turn-chain one (Auto).
  bool lookBack() const {
    return chain == StateChain::LookBack || chain == StateChain::Auto;
  }
  /// The artifact holds a kernel per way, chosen per launch (the plan's
  /// configuration only: each kernel's own is Chunk or LookBack).
  bool adaptive() const { return chain == StateChain::Auto; }
  /// The tensor-core element type of the products, null on the FMA path.
  Type mmaType;
  /// The tensor-core instruction of each product (TileMatmul takes
  /// mma.sync where a tile does not fit wgmma). With raw operands the
  /// chunk scan takes wgmma in place where the plan asks for wgmma (TMA
  /// rows, 128-row scan tiles), and the chunk-state product wgmma with TMA
  /// rows and dstate 128 (x w staged, B's swizzled rows in place) unless
  /// state-mma=mma.sync, mma.sync with cp.async rows; without raw operands
  /// both take the plan's instruction (state-mma may name the state
  /// product's).
  MmaInstr stateMma = MmaInstr::MmaSync, scanMma = MmaInstr::MmaSync;
  OperandPath operands = OperandPath::Registers;
  /// The chunk-state / chunk-scan products take the vector path.
  bool stateVectors = false, scanVectors = false;
  /// The fold leaves the state in shared memory as the scan's resident
  /// operand (ChainItem::sState).
  bool residentState = false;
  /// K slice depths: the chunk-state product (vector path, and the scalar
  /// fill's) and the chunk-scan products.
  int64_t stateDepth = 0, stateScalarDepth = 0, scanDepth = 0;
  /// Output rows of one chunk-scan tile.
  int64_t scanRows = 0;
  /// The chain item's chunk scan stores y straight from the product's
  /// fragments (TileMatmul::epiloguePairs), with no output tile in shared
  /// memory and no barrier: with raw operands, whose scan tile is the whole
  /// chunk.
  bool scanFromFragments = false;
  /// Bytes of the shared buffer both products' vector paths run in (0 when
  /// neither takes it).
  int64_t productBufferBytes = 0;
  /// Chunks a segment holds at most (segmented plans).
  int64_t maxSegmentChunks = 1;
  /// Slots of `passed_states` per (row, head, p-block) as a ring: 0 keeps
  /// one slot per chunk boundary. A slot is read only by the fold of the
  /// next chain step, under the turn, when the scan takes the state from
  /// shared memory (resident or segment-running) and the layer has no
  /// cu_seqlens (whose initial states sit in per-sequence slots); then two
  /// slots suffice, and the workspace no longer grows with L. With
  /// state-chain=auto, only the turn-chain kernel uses the ring.
  int64_t stateRing = 0;
  /// With the look-back: SM clock cycles an item waits for its
  /// predecessor's end state before it publishes its own chunk state and
  /// looks back (kLookBackPatience).
  int64_t lookBackPatience = 0;
  /// The chain items record their phase clocks (FusedPlan::profile).
  bool profile = false;
  /// Blocks of a thread block cluster (1: no clusters). With 2, the blocks
  /// of a cluster take work items in pairs (one ticket, items 2t and
  /// 2t + 1), and a pair of chain items reads the same B and C rows (the
  /// same batch row, chunk and group): each block copies half of their
  /// panels into both blocks' shared memory (TMA multicast).
  int64_t cluster = 1;
  bool clustered() const { return cluster > 1; }
  /// The turn chain's fold (ChainItem.cpp) on the vector path loads this
  /// many of a thread's slot(c) vectors ahead of its stores into
  /// slot(c + 1); 1 folds one vector at a time.
  int64_t foldLoadsAhead = 1;
  /// The chain's fold (the turn chain's, and the look-back's over the slots
  /// and the chunk states) walks them in 16-byte pieces in slot order (whole
  /// sectors per warp access) instead of the product's 8-column vectors
  /// (threadFoldPlaces); foldLoadsAhead then counts pieces.
  bool foldPieces = false;
  /// The turn chain's items compute their chunk's dt and dA_cumsum
  /// themselves (stageChunk), so the kernel holds no cumsum items (only the
  /// look-back and the segments read other chunks' cumsums), and an item
  /// waits for its chunk's CB only before its chunk scan, where a read as
  /// it started found CB unpublished (peekChunkCB): the chain step, the
  /// state product and the fold, waits for nothing but its turn.
  bool ownCumsum = false;

  /// x, B and C rows are copied whole into shared memory (TMA or cp.async).
  bool rawOperands() const { return operands != OperandPath::Registers; }
  bool tmaOperands() const { return operands == OperandPath::Tma; }
  /// The chunk scan's (`scan`) or the chunk-state product's tensor-core
  /// instruction, "none" on the FMA path.
  llvm::StringRef mmaName(bool scan = true) const;

  /// The `ssd.kernel_config` attribute, with the shared memory a block
  /// holds (known once the kernel is built).
  mlir::DictionaryAttr toAttr(mlir::MLIRContext *ctx,
                              int64_t sharedMemory) const;
};

/// Chooses the configuration of the plan's kernel (the pass options
/// already applied to the plan).
KernelConfig chooseKernelConfig(const FusedPlan &plan);

/// Why the plan's kernel cannot run in clusters of FusedPlan::cluster
/// blocks (1 or 2; a sentence naming what is missing), or empty where it
/// can.
std::string clusterUnsupported(const FusedPlan &plan);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_KERNELCONFIG_H
