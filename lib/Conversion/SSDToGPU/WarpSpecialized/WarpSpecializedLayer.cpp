//===- WarpSpecializedLayer.cpp - the layer's warp-specialised kernel -----===//
//
// The kernel takes the Mamba-2 layer's common form: bf16 x, B and C, f32
// dt, state size 128, head dims of whole 64-column blocks, heads in fours
// (dt's TMA box), f32 or f16 states (f16: the initial and final states'
// type; the walk keeps the state in f32), a per-head D, packed sequences
// by cu_seqlens (a block a sequence's chain); no z or seq_idx.
// Its chunks are its own 64 tokens whatever the layer's chunk size: the
// SSD does not depend on the chunking but through rounding.
//
//===----------------------------------------------------------------------===//
#include "WarpSpecializedLayer.h"
#include "WarpSpecializedSSD.h"

#include "../KernelCommon.h"
#include "../TmaCopy.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

namespace {

/// The pipeline the layer's kernel takes by default: 4 stages, one
/// published state buffer, y in the stages and two output warpgroups.
/// Against 3 stages, two buffers and y in tiles of its own it was 2-7%
/// faster at b1 2K and 16K, b8 16K and packed 8 x 2K and 8 x 16K, and even
/// (+1%, inside the rounds' spread) at b1 128K on the H100
/// (bench/NOTES-fused-gpu.md).
constexpr int64_t kLayerStages = 4, kLayerPublishedBuffers = 1,
                  kLayerOutputGroups = 2;
constexpr bool kLayerYInStage = true;

/// The piece-states kernels the layer's artifact holds, by the heads a
/// block walks over one copy of B: those the options give, else one and,
/// where four divide a group's heads, four, the launch picking one by the
/// pieces' model (ws_wide). Picking at launch took 5-8% off the layer at
/// b1 32K to 128K on the H100 (6 pieces of four heads a block: one wave of
/// their blocks) and left b2 and b4 16K even (bench/NOTES-fused-gpu.md).
SmallVector<int64_t, 2> layerPieceHeads(const LayerLayout &layout,
                                        const SSDProblem *p) {
  if (layout.pieceHeads)
    return {layout.pieceHeads};
  int64_t groupHeads = p && p->groups > 0 ? p->heads / p->groups : 0;
  if (groupHeads % kWidePieceHeads || !groupHeads)
    return {1};
  return {1, kWidePieceHeads};
}

/// The kernel's Shape for `layout` (defaults where it gives none); the
/// layer's sizes are left zero without `p`.
Shape layerShape(const LayerLayout &layout, const SSDProblem *p = nullptr) {
  Shape s;
  if (p) {
    s.heads = p->heads;
    s.headDim = p->headDim;
    s.groups = p->groups;
    s.dtRule = *p;
    s.packedSequences = p->isVarlen();
    s.pieceHeads = layerPieceHeads(layout, p).front();
  }
  s.stages = layout.stages ? layout.stages : kLayerStages;
  s.outputGroups = kLayerOutputGroups;
  s.publishedBuffers = layout.publishedBuffers ? layout.publishedBuffers
                                               : kLayerPublishedBuffers;
  s.yInStage = layout.yInStage.value_or(kLayerYInStage);
  s.panelMaps = layout.panelMaps;
  return s;
}

} // namespace

std::string unsupportedLayout(const LayerLayout &layout) {
  if (layout.stages &&
      (layout.stages < kMinStages || layout.stages > kMaxStages))
    return "warp-specialized-stages must be " + std::to_string(kMinStages) +
           " to " + std::to_string(kMaxStages) + ", got " +
           std::to_string(layout.stages);
  if (layout.pieceHeads && layout.pieceHeads != 1 && layout.pieceHeads != 2 &&
      layout.pieceHeads != 4)
    return "warp-specialized-piece-heads must be 1, 2 or 4, got " +
           std::to_string(layout.pieceHeads);
  if (layout.publishedBuffers &&
      (layout.publishedBuffers < 1 || layout.publishedBuffers > 2))
    return "warp-specialized-published-buffers must be 1 or 2, got " +
           std::to_string(layout.publishedBuffers);
  Shape s = layerShape(layout);
  if (sharedBytes(s) > kMaxSharedBytesPerBlock)
    return std::to_string(s.stages) + " stages, " +
           std::to_string(s.publishedBuffers) + " published state buffer" +
           (s.publishedBuffers == 1 ? "" : "s") + " and y " +
           (s.yInStage ? "in the stages" : "in tiles of its own") + " need " +
           std::to_string(sharedBytes(s)) +
           " bytes of shared memory, over the " +
           std::to_string(kMaxSharedBytesPerBlock) + " a block may hold";
  return "";
}

std::string unsupportedLayer(const SSDProblem &p, StringRef chip,
                             const LayerLayout &layout) {
  if (chip != "sm_90a")
    return "it needs chip sm_90a (TMA, wgmma, setmaxnreg), got '" + chip.str() +
           "'";
  if (!p.elementType.isBF16())
    return "x, B and C must be bf16, got " + dtypeName(p.elementType).str();
  if (const BufferSpec *dt = p.find("dt");
      !dt || !dt->type.getElementType().isF32())
    return "dt must be f32";
  // The state stays f32 on chip: f16 states are the initial and final
  // states' type alone.
  if (!p.stateType.isF32() && !p.stateType.isF16())
    return "the states must be f32 or f16, got " + dtypeName(p.stateType).str();
  if (p.state != kState)
    return "dstate must be " + std::to_string(kState) + ", got " +
           std::to_string(p.state);
  for (StringRef name : {"z", "seq_idx"})
    if (p.has(name))
      return "the layer has " + name.str();
  if (p.perChannelD)
    return "D must be per head, not per channel";
  // The layer's own piece heads always fit it; given ones are checked by
  // unsupportedPieceHeads once the kernels are chosen.
  LayerLayout own = layout;
  own.pieceHeads = 0;
  return unsupportedShape(layerShape(own, &p));
}

std::string unsupportedPieceHeads(const SSDProblem &p,
                                  const LayerLayout &layout) {
  int64_t groupHeads = p.groups > 0 ? p.heads / p.groups : 0;
  if (!layout.pieceHeads || (groupHeads && groupHeads % layout.pieceHeads == 0))
    return "";
  return "warp-specialized-piece-heads=" + std::to_string(layout.pieceHeads) +
         " must divide a group's heads, " + std::to_string(groupHeads) + " (" +
         std::to_string(p.heads) + " heads in " + std::to_string(p.groups) +
         " groups)";
}

namespace {

/// The sequences a launch walks, as an operand of a product: the batch
/// rows, or cu_seqlens' sequences (final_states' rows either way).
std::string sequencesExpr(const SSDProblem &p) {
  const BufferSpec *finalStates = p.find("final_states");
  assert(finalStates && "the layer has final_states");
  const std::string &rows = finalStates->shape[0];
  return rows.find(' ') == std::string::npos ? rows : "(" + rows + ")";
}

/// The blocks of one piece: sequences x heads / `heads` (a block's) x
/// p-blocks.
std::string chainsExpr(const SSDProblem &p, int64_t heads = 1) {
  return sequencesExpr(p) + " * " +
         std::to_string(p.heads / heads * (p.headDim / kPBlock));
}

/// The cost of the piece-states waves over `slots` pieces (the pieces but
/// the last) in the model's 840ths of one of the SSD kernel's waves over
/// the same tokens, for the kernel of `heads` heads a block: its blocks
/// (ws_chains / heads a piece), as many a SM as fit, at
/// kPieceWaveCostPercent a wave with one head (two blocks a SM), else
/// kWidePieceWaveCostPercent.
std::string pieceWavesCost(const SSDProblem &p, int64_t heads, int64_t slots) {
  Shape pieceShape;
  pieceShape.pieceHeads = heads;
  int64_t perSM = pieceStatesBlocksPerSM(pieceShape);
  int64_t percent =
      heads == 1 ? kPieceWaveCostPercent : kWidePieceWaveCostPercent;
  std::string blocks = heads == 1 ? "ws_chains" : chainsExpr(p, heads);
  return std::to_string(840 * percent / 100) + " * ceildiv(" + blocks + " * " +
         std::to_string(slots) + ", " +
         (perSM == 1 ? "" : std::to_string(perSM) + " * ") + "num_sms)";
}

/// The model's time of `s` pieces with the piece-states kernel of `heads`
/// heads a block, in 1/840ths of one SSD wave over the sequence (840 =
/// lcm(1 .. 8)). Waves of blocks: the SSD kernel's, one a SM, walk L / s
/// tokens each; the piece states' (s - 1 pieces) the same tokens at a
/// share of the cost (pieceWavesCost); each piece costs as much as
/// kPieceCostTokens tokens more of a wave. Packed sequences are taken as of
/// their mean length.
std::string piecesTime(const SSDProblem &p, int64_t heads, int64_t s) {
  std::string n = std::to_string(s);
  std::string tokens =
      p.isVarlen() ? "max(ceildiv(L, max(" + sequencesExpr(p) + ", 1)), 1)"
                   : "max(L, 1)";
  return "(840 * ceildiv(ws_chains * " + n + ", num_sms) + " +
         pieceWavesCost(p, heads, s - 1) + ") / " + n + " + " +
         std::to_string(840 * kPieceCostTokens * s) + " / " + tokens;
}

/// The derived symbols of the pieces and, where the artifact holds two
/// piece-states kernels, of the one a launch runs.
void addPieceSymbols(SSDProblem &p, int64_t pieces, const LayerLayout &layout) {
  SmallVector<int64_t, 2> kernels = layerPieceHeads(layout, &p);
  if (kernels.size() == 1 && pieces) {
    p.derived.push_back({kPiecesSymbol.str(), std::to_string(pieces)});
    return;
  }
  p.derived.push_back({"ws_chains", chainsExpr(p)});
  // The least score names the best pieces (and kernel), the fewest pieces
  // on a tie, then the narrower kernel: the time times 16 plus the pieces
  // with one kernel; with two, (time x 2 + kernel) x 128 plus the pieces
  // (up to 64 given), in ws_choice.
  bool two = kernels.size() == 2;
  std::string best;
  for (int64_t s = pieces ? pieces : 1; s <= (pieces ? pieces : kMaxPieces);
       ++s) {
    for (size_t k = 0; k < kernels.size(); ++k) {
      std::string time = piecesTime(p, kernels[k], s), n = std::to_string(s);
      std::string score =
          two ? "((" + time + ") * 2 + " + std::to_string(k) + ") * 128 + " + n
              : "(" + time + ") * 16 + " + n;
      best = best.empty() ? score : "min(" + best + ", " + score + ")";
    }
  }
  if (!two) {
    p.derived.push_back({kPiecesSymbol.str(), best + " % 16"});
    return;
  }
  // The manifest evaluates derived symbols by name: ws_choice before
  // ws_pieces and ws_wide.
  p.derived.push_back({kChoiceSymbol.str(), best});
  p.derived.push_back(
      {kPiecesSymbol.str(),
       pieces ? std::to_string(pieces) : kChoiceSymbol.str() + " % 128"});
  p.derived.push_back({kWideSymbol.str(), kChoiceSymbol.str() + " / 128 % 2"});
}

} // namespace

void addPieceWorkspaces(SSDProblem &p, int64_t pieces,
                        const LayerLayout &layout) {
  addPieceSymbols(p, pieces, layout);
  // Per sequence, as the final states are (a batch row, or one of
  // cu_seqlens' sequences).
  const BufferSpec *finalStates = p.find("final_states");
  assert(finalStates && "the layer has final_states");
  int64_t sequences = finalStates->type.getDimSize(0),
          dyn = ShapedType::kDynamic;
  std::string pieceSlots = kPiecesSymbol.str() + " - 1";
  Type f32 = Float32Type::get(finalStates->type.getContext());
  // One state per piece but the last (none where there is one piece).
  p.buffers.push_back(BufferSpec{
      "piece_states",
      RankedTensorType::get({sequences, p.heads, dyn, p.headDim, kState}, f32),
      {finalStates->shape[0], std::to_string(p.heads), pieceSlots,
       std::to_string(p.headDim), std::to_string(kState)},
      false,
      true});
  p.buffers.push_back(BufferSpec{
      "piece_decays",
      RankedTensorType::get({sequences, p.heads, dyn}, f32),
      {finalStates->shape[0], std::to_string(p.heads), kPiecesSymbol.str()},
      false,
      true});
}

namespace {

/// The TMA maps of `names` (C, B, x) and of dt: (row, token, head or group,
/// column) boxes of a chunk's rows of one 64-wide panel (C's and B's two
/// panels through panel maps), dt's of 4 heads.
void addBoxes(KernelInfo &info, const Shape &shape, ArrayRef<StringRef> names) {
  for (StringRef name : names) {
    bool panels = shape.panelMaps && (name == "B" || name == "C");
    info.params.push_back({name.str(),
                           /*isWorkspace=*/false,
                           {1, kChunk, 1, kSwizzlePanel},
                           /*tmaSwizzled=*/true,
                           /*tmaPanelDim=*/panels ? 1 : -1});
  }
  info.params.push_back({"dt",
                         /*isWorkspace=*/false,
                         {1, kChunk, kDtHeads},
                         /*tmaSwizzled=*/false});
}

Value optionalArg(const KernelFunc &k, StringRef name) {
  return k.has(name) ? k.arg(name) : Value();
}

/// The piece-states kernel of `shape.pieceHeads` heads a block, launched
/// where `when` holds.
KernelInfo buildPieceStatesKernel(ImplicitLocOpBuilder &b,
                                  gpu::GPUModuleOp module, const SSDProblem &p,
                                  const Shape &shape, const std::string &when) {
  KernelInfo states;
  states.name = kPieceStatesKernelName.str();
  if (shape.pieceHeads > 1)
    states.name += "_heads" + std::to_string(shape.pieceHeads);
  states.when = when;
  states.grid = {chainsExpr(p, shape.pieceHeads) + " * (" +
                 kPiecesSymbol.str() + " - 1)"};
  states.block = pieceStatesThreads(shape);
  addParams(states, p, {"A", "dt_bias", "y", "cu_seqlens"},
            /*workspace=*/false);
  addParams(states, p, {"piece_states", "piece_decays"}, /*workspace=*/true);
  addBoxes(states, shape, {"B", "x"});
  KernelFunc ks = createKernel(b, module, p, states);
  ks.func->setAttr("nvvm.minctasm",
                   b.getI32IntegerAttr(pieceStatesBlocksPerSM(shape)));
  Operands ops;
  ops.bMap = ks.arg(tmaArgName("B"));
  ops.xMap = ks.arg(tmaArgName("x"));
  ops.dtMap = ks.arg(tmaArgName("dt"));
  ops.a = ks.arg("A");
  ops.dtBias = optionalArg(ks, "dt_bias");
  ops.y = ks.arg("y");
  ops.pieceStates = ks.arg("piece_states");
  ops.pieceDecays = ks.arg("piece_decays");
  ops.cuSeqlens = optionalArg(ks, "cu_seqlens");
  emitPieceStatesKernel(b, ks, shape, ops);
  states.sharedMemory = ks.sharedBytes();
  return states;
}

/// `ssd_warp_specialized`, every launch.
KernelInfo buildSSDKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                          const SSDProblem &p, const Shape &shape) {
  KernelInfo info;
  info.name = kKernelName.str();
  info.grid = {chainsExpr(p) + " * " + kPiecesSymbol.str()};
  info.block = blockThreads(shape);
  addParams(info, p,
            {"A", "dt_bias", "D", "initial_states", "y", "final_states",
             "cu_seqlens"},
            /*workspace=*/false);
  addParams(info, p, {"piece_states", "piece_decays"}, /*workspace=*/true);
  addBoxes(info, shape, {"C", "B", "x"});
  KernelFunc k = createKernel(b, module, p, info);
  // setmaxnreg moves registers between the roles of one resident block.
  k.func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  Operands ops{k.arg(tmaArgName("C")),
               k.arg(tmaArgName("B")),
               k.arg(tmaArgName("x")),
               k.arg(tmaArgName("dt")),
               k.arg("A"),
               optionalArg(k, "dt_bias"),
               optionalArg(k, "D"),
               optionalArg(k, "initial_states"),
               k.arg("y"),
               k.arg("final_states"),
               k.arg("piece_states"),
               k.arg("piece_decays"),
               optionalArg(k, "cu_seqlens")};
  emitKernel(b, k, shape, ops);
  info.sharedMemory = k.sharedBytes();
  return info;
}

} // namespace

SmallVector<KernelInfo> buildLayerKernels(ImplicitLocOpBuilder &b,
                                          gpu::GPUModuleOp module,
                                          const SSDProblem &p,
                                          const LayerLayout &layout) {
  assert(unsupportedLayer(p, "sm_90a", layout).empty() &&
         "a layer the kernel takes");
  assert(p.has("piece_states") && p.has("piece_decays") &&
         "addPieceWorkspaces ran");
  Shape shape = layerShape(layout, &p);
  // The piece states, where there is more than one piece: one kernel, or
  // the one-head and the wide one, as ws_wide picks.
  SmallVector<KernelInfo> kernels;
  SmallVector<int64_t, 2> pieceKernels = layerPieceHeads(layout, &p);
  for (int64_t heads : pieceKernels) {
    Shape pieceShape = shape;
    pieceShape.pieceHeads = heads;
    std::string when = "min(1, " + kPiecesSymbol.str() + " - 1)";
    if (pieceKernels.size() == 2)
      when += heads == 1 ? " * (1 - " + kWideSymbol.str() + ")"
                         : " * " + kWideSymbol.str();
    kernels.push_back(buildPieceStatesKernel(b, module, p, pieceShape, when));
  }
  kernels.push_back(buildSSDKernel(b, module, p, shape));
  return kernels;
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
