//===- CaseModule.cpp - the MLIR function that computes one case ----------===//
#include "CaseModule.h"

#include "ssd/Compile/LayerModule.h"
#include "ssd/Support/LayerSpec.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace ssd;

std::vector<KernelArg> ssd::caseKernelArgs(const SSDCase &c,
                                           const RunConfig &config) {
  std::vector<KernelArg> args;
  for (const std::string &name : c.inputNames()) {
    KernelArg arg;
    arg.name = name;
    if (name == "seq_idx" || name == "cu_seqlens") {
      arg.dtype = DType::I32;
      arg.shape = name == "seq_idx" ? c.seqIdx.shape : c.cuSeqlens.shape;
      args.push_back(std::move(arg));
      continue;
    }
    if (name == "x" || name == "B" || name == "C" || name == "z")
      arg.dtype = config.dtype;
    else if (name == "initial_states")
      arg.dtype = config.stateDtype;
    const FloatTensor *t = name == "x"         ? &c.x
                           : name == "dt"      ? &c.dt
                           : name == "A"       ? &c.A
                           : name == "B"       ? &c.B
                           : name == "C"       ? &c.C
                           : name == "D"       ? &c.D
                           : name == "z"       ? &c.z
                           : name == "dt_bias" ? &c.dtBias
                                               : &c.initialStates;
    arg.shape = t->shape;
    args.push_back(std::move(arg));
  }
  args.push_back({"y", c.tokenShape(), config.dtype, true});
  args.push_back(
      {"final_states", c.stateShape(), config.stateDtype, true});
  return args;
}

OwningOpRef<ModuleOp> ssd::buildCaseModule(MLIRContext &context,
                                           const SSDCase &c,
                                           const RunConfig &config) {
  LayerSpec spec =
      layerSpecOfCase(c, config.chunkSize, config.dtype, config.stateDtype);
  LayerShape shape;
  shape.batch = c.batch;
  shape.seqlen = c.seqlen;
  shape.numSeqs = c.varlen() ? c.numSeqs() : 0;
  Location loc = NameLoc::get(StringAttr::get(&context, c.name));
  return buildLayerModule(context, spec, shape, LayerABI::Memref,
                          kCaseFunctionName, loc);
}
