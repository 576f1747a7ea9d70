//===- WarpSpecializedLayer.cpp - the layer's warp-specialised kernel -----===//
//
// The kernel takes the Mamba-2 layer's common form: bf16 x, B and C, f32
// dt, state size 128, head dims of whole 64-column blocks, heads in fours
// (dt's TMA box), f32 states, a per-head D; no z, cu_seqlens or seq_idx.
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

/// The pipeline the layer's kernel takes: 3 stages and two output
/// warpgroups, measured fastest of (2, 1), (2, 2), (3, 2) at b8 L=16K on
/// the H100 (bench/NOTES-fused-gpu.md).
constexpr int64_t kLayerStages = 3, kLayerOutputGroups = 2;

Shape layerShape(const SSDProblem &p) {
  Shape s;
  s.heads = p.heads;
  s.headDim = p.headDim;
  s.groups = p.groups;
  s.stages = kLayerStages;
  s.outputGroups = kLayerOutputGroups;
  s.dtRule = p;
  return s;
}

} // namespace

std::string unsupportedLayer(const SSDProblem &p, StringRef chip) {
  if (chip != "sm_90a")
    return "it needs chip sm_90a (TMA, wgmma, setmaxnreg), got '" + chip.str() +
           "'";
  if (!p.elementType.isBF16())
    return "x, B and C must be bf16, got " + dtypeName(p.elementType).str();
  if (const BufferSpec *dt = p.find("dt");
      !dt || !dt->type.getElementType().isF32())
    return "dt must be f32";
  if (!p.stateType.isF32())
    return "the states must be f32, got " + dtypeName(p.stateType).str();
  if (p.state != kState)
    return "dstate must be " + std::to_string(kState) + ", got " +
           std::to_string(p.state);
  for (StringRef name : {"z", "cu_seqlens", "seq_idx"})
    if (p.has(name))
      return "the layer has " + name.str();
  if (p.perChannelD)
    return "D must be per head, not per channel";
  return unsupportedShape(layerShape(p));
}

std::string autoLaunchCondition(const SSDProblem &p) {
  int64_t perRow = p.heads * (p.headDim / kPBlock);
  return "min(1, (" + p.batchExpr + " * " + std::to_string(perRow) +
         ") / (num_sms * " + std::to_string(kAutoBlocksPerSM) + "))";
}

KernelInfo buildLayerKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                            const SSDProblem &p, StringRef when) {
  assert(unsupportedLayer(p, "sm_90a").empty() && "a layer the kernel takes");
  Shape shape = layerShape(p);
  KernelInfo info;
  info.name = kKernelName.str();
  info.when = when.str();
  info.grid = {p.batchExpr + " * " +
               std::to_string(p.heads * (p.headDim / kPBlock))};
  info.block = blockThreads(shape);
  addParams(info, p, {"A", "dt_bias", "D", "initial_states", "y",
                      "final_states"},
            /*workspace=*/false);
  // (row, token, head or group, column) boxes of a chunk's rows of one
  // 64-wide panel; dt's of 4 heads.
  for (StringRef name : {"C", "B", "x"})
    info.params.push_back(
        {name.str(), /*isWorkspace=*/false, {1, kChunk, 1, kSwizzlePanel}});
  info.params.push_back({"dt", /*isWorkspace=*/false, {1, kChunk, kDtHeads},
                         /*tmaSwizzled=*/false});

  KernelFunc k = createKernel(b, module, p, info);
  // setmaxnreg moves registers between the roles of one resident block.
  k.func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  auto optional = [&](StringRef name) {
    return k.has(name) ? k.arg(name) : Value();
  };
  Operands ops{k.arg(tmaArgName("C")),    k.arg(tmaArgName("B")),
               k.arg(tmaArgName("x")),    k.arg(tmaArgName("dt")),
               k.arg("A"),                optional("dt_bias"),
               optional("D"),             optional("initial_states"),
               k.arg("y"),                k.arg("final_states")};
  emitKernel(b, k, shape, ops);
  info.sharedMemory = k.sharedBytes();
  return info;
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
