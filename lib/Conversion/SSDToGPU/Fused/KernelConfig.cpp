//===- KernelConfig.cpp - every choice of the fused kernel ----------------===//
//
// On tensor cores the chain item's products take TileMatmul's vector path
// where their tiles allow it; with both vector paths the fold leaves the
// state in shared memory for the scan, and on 16-bit layers that fit the
// shared-memory budget x, B and C are copied whole into shared memory and
// read there in place (raw operands), by TMA where the chip and the layer
// allow it.
//
//===----------------------------------------------------------------------===//
#include "KernelConfig.h"
#include "../TmaCopy.h"
#include "FusedKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

/// Tile depth of a product: the unfused choice on the tensor cores, 16 for
/// the f32 path so that the three products' shared slices fit together.
int64_t depthFor(const SSDProblem &p, int64_t k) {
  return mmaElementType(p) ? tileDepth(k) : 16;
}

/// K slice depth of the chunk-state product: 64 on the tensor cores when
/// the chunk allows (two slices at chunk 128; measured 2-4% faster on the
/// H200 than 32, see bench/NOTES-fused-gpu.md).
int64_t stateDepth(const SSDProblem &p) {
  return p.chunk >= 64 ? 64 : tileDepth(p.chunk);
}

/// Output rows of one chunk-scan tile: 64 (measured no slower than
/// whole-chunk tiles when the weights are staged, and they skip the upper
/// triangle of CB); the whole chunk up to 128 rows with raw operands, where
/// the weights are register fragments that each warp computes for its own
/// rows only once.
int64_t scanRows(const SSDProblem &p, bool raw) {
  return raw && p.chunk <= 128 ? p.chunk : tileEdge(p.chunk);
}

} // namespace

KernelConfig chooseKernelConfig(const FusedPlan &plan) {
  const SSDProblem &p = plan.p;
  int64_t pBlock = plan.pBlock;
  KernelConfig c;
  c.pBlock = pBlock;
  c.mmaType = mmaElementType(p);
  c.stateDepth = stateDepth(p);
  c.stateScalarDepth = depthFor(p, p.chunk);
  c.scanDepth = depthFor(p, std::min(p.state, p.chunk));
  c.maxSegmentChunks = std::max<int64_t>(1, kMaxSegmentTokens / p.chunk);

  // The products as the chain item builds them (ChainParts.cpp:
  // stateProduct, scanProduct), only sized here: TileMatmul decides whether
  // a tile fits the tensor cores and the bytes its vector path holds. It
  // emits nothing until it runs, so a detached builder serves.
  ImplicitLocOpBuilder b(p.func->getLoc(), p.func->getContext());
  Emitter e(b);
  KernelFunc k;
  auto state = [&](MmaInstr instr) {
    return TileMatmul(e, k, pBlock, p.state, c.stateDepth, c.mmaType, instr);
  };
  auto scan = [&](bool raw, MmaInstr instr) {
    return TileMatmul(e, k, scanRows(p, raw), roundUp(pBlock, 16), c.scanDepth,
                      c.mmaType, instr);
  };
  c.stateVectors = pBlock % 16 == 0 && p.state % 16 == 0 && p.state <= 128 &&
                   p.chunk % kVectorWidth == 0 && state(plan.mma).usesMma();
  c.scanVectors = pBlock % 16 == 0 && p.state % kVectorWidth == 0 &&
                  p.chunk % kVectorWidth == 0 &&
                  scan(false, plan.mma).usesMma();
  // Both vector paths, dstate a multiple of the scan's depth.
  c.residentState =
      c.stateVectors && c.scanVectors && p.state % c.scanDepth == 0;
  // The look-back folds a thread's own vectors of the chunk state's output
  // tile across several chunk states (TileMatmul::threadOutputVectors), and
  // the scan must take the state it folded from shared memory; the slots
  // are per chunk, so varlen layers (per-sequence slots) keep the turns.
  bool lookBackFits = c.residentState && !p.isVarlen() &&
                      state(plan.mma).outputVectorsEven();
  bool wantsLookBack =
      plan.chain == StateChain::LookBack || plan.chain == StateChain::Auto;
  bool mayLookBack =
      plan.chain != StateChain::Auto ||
      p.heads * plan.pBlocks * kLookBackBlocksPerChain <=
          kMaxGridBlocks;
  c.chain = wantsLookBack && !(lookBackFits && mayLookBack) ? StateChain::Chunk
                                                            : plan.chain;

  // TMA rows (copy=tma): layers without cu_seqlens (a box starts at a
  // chunk's first token and reads zeros past the sequence end), pBlock and
  // dstate whole 64-element panels.
  bool tmaRows = plan.copy == CopyInstr::Tma && !p.isVarlen() &&
                 pBlock % kSwizzlePanel == 0 && p.state % kSwizzlePanel == 0;
  // wgmma reads raw rows only in place, from TMA's swizzle, with 128-row
  // scan tiles (one m64 per warpgroup).
  bool wgmmaScan =
      plan.mma == MmaInstr::Wgmma && tmaRows &&
      TileMatmul::wgmmaInPlaceFits(scanRows(p, true), roundUp(pBlock, 16),
                                   c.scanDepth);
  MmaInstr rawScanMma = wgmmaScan ? MmaInstr::Wgmma : MmaInstr::MmaSync;
  // The chunk-state product: with TMA rows and dstate 128 on wgmma unless
  // state-mma=mma.sync asks otherwise, reading B's rows in place as one
  // swizzled 64-column panel per warpgroup beside the staged x w: 3-5%
  // faster than mma.sync with fp32 states and 4-7% with fp16 ones at the
  // Mamba-2 2.7B layer on an H100 (b1 2K-128K, b8 16K;
  // bench/NOTES-fused-gpu.md).
  // Other raw rows (cp.async: padded, not swizzled) keep mma.sync; without
  // raw rows the plan's instruction unless state-mma names one.
  bool wgmmaState = plan.stateMma != MmaInstr::MmaSync && tmaRows &&
                    p.state == 2 * kSwizzlePanel &&
                    TileMatmul::wgmmaFits(pBlock, p.state, c.stateDepth);
  auto stateMmaFor = [&](bool raw) {
    if (raw)
      return wgmmaState ? MmaInstr::Wgmma : MmaInstr::MmaSync;
    return plan.stateMma.value_or(plan.mma);
  };

  // Raw operands whose scan tile is the whole chunk: the scan's epilogue
  // runs from the fragments (KernelConfig::scanFromFragments).
  auto scanFromFragments = [&](bool raw) {
    return raw && scanRows(p, raw) >= p.chunk;
  };
  // The products' shared buffer: with raw operands the chunk-state product
  // reads B in place, and the scan C and x (its weights are register
  // fragments); only x w is staged, and an epilogue from the fragments
  // holds no output tile. The fold always takes the chunk state's output
  // tile (16-byte slot accesses; from the fragments, 8-byte pairs into the
  // ring's slots were 20% slower on the H200).
  auto bufferBytes = [&](bool raw) {
    MmaInstr stateInstr = stateMmaFor(raw);
    MmaInstr scanInstr = raw ? rawScanMma : plan.mma;
    int64_t bytes = 0;
    if (c.stateVectors)
      bytes = state(stateInstr).vectorBytes(false, raw, /*outputTile=*/true);
    if (c.scanVectors)
      bytes = std::max(bytes, scan(raw, scanInstr)
                                  .vectorBytes(raw, raw,
                                               !scanFromFragments(raw)));
    return bytes;
  };

  // Whether the layer and the products allow raw operands at all (before
  // the shared-memory budget): the mma.sync products, or the wgmma scan.
  bool rawApply = !c.segmented() && c.residentState &&
                  (plan.mma == MmaInstr::MmaSync || wgmmaScan) && c.mmaType &&
                  c.mmaType.getIntOrFloatBitWidth() == 16 &&
                  p.elementType == c.mmaType && pBlock % kVectorWidth == 0 &&
                  p.state % kVectorWidth == 0;
  // The chain item's shared bytes with raw operands: x rows, B/C rows, the
  // products' buffer, the resident state and the chunk vectors (dA, dt,
  // weights, row scales), with room for the arena's 16-byte alignment.
  auto rawChainItemBytes = [&] {
    int64_t element = c.mmaType.getIntOrFloatBitWidth() / 8;
    int64_t rows = p.chunk * element;
    int64_t resident = pBlock * (p.state + kResidentPad) * element;
    return rows * (pBlock + kResidentPad) + rows * (p.state + kResidentPad) +
           bufferBytes(true) + resident +
           4 * (3 * p.chunk + scanRows(p, true)) + 256;
  };
  // Past the budget the raw rows would cost the second block on each SM,
  // which costs more than the copies save (measured at chunk 256).
  bool raw =
      rawApply && rawChainItemBytes() <= sharedBytesPerBlock(c.blocksPerSM);
  bool tma = raw && tmaRows;
  c.operands = tma   ? OperandPath::Tma
               : raw ? OperandPath::CpAsync
                     : OperandPath::Registers;
  c.stateMma = stateMmaFor(raw);
  c.scanMma = raw ? rawScanMma : plan.mma;
  c.scanRows = scanRows(p, raw);
  c.scanFromFragments = scanFromFragments(raw);
  c.productBufferBytes = bufferBytes(raw);
  c.profile = plan.profile;
  c.cluster = plan.cluster;
  // The fold in 16-byte pieces: with f32 slots 6.3-6.4% faster at the
  // Mamba-2 2.7B layer (b1 2K, b1 128K, b8 16K) and 8.6% at Granite 4.0
  // H-Tiny's b1 128K on the H200, four pieces ahead (eight: 4-10%); the
  // look-back's fold 13-15% faster at a 24-head layer at b1 2K-128K (H100).
  // An f16 slot's 8-column vector is a 16-byte piece already: pieces there
  // were 1-10% slower (H100, 2.7B layer).
  bool piecesFit =
      c.stateVectors &&
      (c.pBlock * p.state / foldPieceWidth(p.stateType)) % c.blockThreads == 0;
  c.foldPieces = piecesFit && (plan.fold == "pieces" ||
                               (plan.fold == "auto" && p.stateType.isF32()));
  // By default: four pieces ahead; with vectors, two ahead with fp16
  // states, one with fp32 (two was 2-3% faster with fp16 slots at b1 128K
  // and b8 16K on the H200, and 1-2% slower with fp32 ones;
  // bench/NOTES-fused-gpu.md).
  c.foldLoadsAhead = plan.foldLoadsAhead > 0 ? plan.foldLoadsAhead
                     : c.foldPieces          ? 4
                     : p.stateType.isF16()   ? 2
                                             : 1;
  if (c.lookBack())
    c.lookBackPatience = kLookBackPatience;
  // One token a thread (stageChunk). Measured on the H200 (2.7B layer):
  // 2.2-5.0% faster at b1 2K-128K and b8 16K, in both state precisions
  // (bench/NOTES-fused-gpu.md).
  c.ownCumsum = c.chain == StateChain::Chunk && p.chunk <= c.blockThreads;
  // Step c writes slot c + 1 after its turn, when step c - 1, the last
  // reader of slot c - 1 (the same ring slot), has folded and released. A
  // look-back reads whichever slot holds the latest published state: one
  // slot per chunk.
  bool stateOnChip = c.segmented() || c.residentState;
  bool turns = !c.lookBack() || c.adaptive();
  c.stateRing =
      stateOnChip && !p.isVarlen() && turns ? kStateRingSlots : 0;
  return c;
}

std::string clusterUnsupported(const FusedPlan &plan) {
  assert((plan.cluster == 1 || plan.cluster == 2) &&
         "the pass checks the option's value");
  if (plan.cluster == 1)
    return "";
  KernelConfig c = chooseKernelConfig(plan);
  if (c.segmented())
    return "cluster=2 pairs per-chunk chain items: it needs state-chain "
           "chunk, lookback or auto, got segment";
  if (!c.tmaOperands())
    return "cluster=2 shares B and C rows by TMA multicast: it needs TMA "
           "rows (chip sm_90a, copy tma or auto, bf16/f16 operands, no "
           "cu_seqlens, headdim rows and dstate in whole 64-element panels, "
           "rows that fit the shared memory of two blocks per SM), and this "
           "layer's chain item takes " +
           std::string(c.operands == OperandPath::CpAsync ? "cp.async rows"
                                                          : "registers");
  int64_t perGroup = plan.p.heads / plan.p.groups * plan.pBlocks;
  if (perGroup % 2 != 0)
    return "cluster=2 pairs chain items of one group: heads per group x "
           "p-blocks must be even, got " +
           std::to_string(plan.p.heads / plan.p.groups) + " x " +
           std::to_string(plan.pBlocks);
  return "";
}

StringRef stateChainName(StateChain chain) {
  switch (chain) {
  case StateChain::Chunk:
    return "chunk";
  case StateChain::Segment:
    return "segment";
  case StateChain::LookBack:
    return "lookback";
  case StateChain::Auto:
    return "auto";
  }
  llvm_unreachable("every state chain has a name");
}

std::optional<StateChain> parseStateChain(StringRef name) {
  for (StateChain chain : {StateChain::Chunk, StateChain::Segment,
                           StateChain::LookBack, StateChain::Auto})
    if (name == stateChainName(chain))
      return chain;
  return std::nullopt;
}

StringRef KernelConfig::mmaName(bool scan) const {
  MmaInstr instr = scan ? scanMma : stateMma;
  return !mmaType ? "none" : instr == MmaInstr::Wgmma ? "wgmma" : "mma.sync";
}

/// Every choice the lowering made for this kernel, in one attribute on the
/// gpu.func (FileChecked, and readable off any lowered module): the block
/// and grid shape, the work item's rows, the state chain, the tensor-core
/// instruction, how the chain item's x/B/C reach shared memory, where a
/// chunk's cumsum is computed (`cumsum`: its chain items, or cumsum items),
/// and the shared memory a block holds.
DictionaryAttr KernelConfig::toAttr(MLIRContext *ctx,
                                    int64_t sharedMemory) const {
  Builder b(ctx);
  NamedAttrList config;
  config.set("block", b.getI64IntegerAttr(blockThreads));
  config.set("blocks_per_sm", b.getI64IntegerAttr(blocksPerSM));
  config.set("cluster", b.getI64IntegerAttr(cluster));
  config.set("p_block", b.getI64IntegerAttr(pBlock));
  config.set("state_chain", b.getStringAttr(stateChainName(chain)));
  config.set("mma", b.getStringAttr(mmaName()));
  config.set("state_mma", b.getStringAttr(mmaName(/*scan=*/false)));
  config.set("operands",
             b.getStringAttr(operands == OperandPath::Tma       ? "tma"
                             : operands == OperandPath::CpAsync ? "cp.async"
                                                                : "registers"));
  config.set("state_ring", b.getI64IntegerAttr(stateRing));
  if (lookBack())
    config.set("look_back_patience", b.getI64IntegerAttr(lookBackPatience));
  if (foldPieces)
    config.set("fold_pieces", b.getUnitAttr());
  if (foldLoadsAhead > 1)
    config.set("fold_loads_ahead", b.getI64IntegerAttr(foldLoadsAhead));
  config.set("cumsum", b.getStringAttr(ownCumsum ? "chain_item" : "items"));
  if (profile)
    config.set("profile", b.getBoolAttr(true));
  config.set("shared_memory", b.getI64IntegerAttr(sharedMemory));
  return config.getDictionary(ctx);
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
