//===- Launch.cpp - the ssd.launch attribute (the runtime's manifest) -----===//
//
// Builds the host-side description of the kernels in the schema of
// docs/runtime.md: constants, tensors, workspaces, derived symbols and
// kernels with their geometry and parameters. Numbers are integers, symbolic
// sizes strings, so that the attribute maps mechanically to JSON.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

StringRef dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  return "unknown";
}

namespace {

/// An expression: an integer attribute when it is a plain number.
Attribute expr(Builder &b, StringRef text) {
  int64_t v;
  if (!text.getAsInteger(10, v))
    return b.getI64IntegerAttr(v);
  return b.getStringAttr(text);
}

DictionaryAttr bufferEntry(Builder &b, const BufferSpec &s) {
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("name", b.getStringAttr(s.name)),
      b.getNamedAttr("dtype",
                     b.getStringAttr(dtypeName(s.type.getElementType())))};
  SmallVector<Attribute> shape;
  for (const std::string &d : s.shape)
    shape.push_back(expr(b, d));
  fields.push_back(b.getNamedAttr("shape", b.getArrayAttr(shape)));
  if (s.output)
    fields.push_back(b.getNamedAttr("output", b.getBoolAttr(true)));
  if (s.acceptsViews())
    fields.push_back(
        b.getNamedAttr("layout", b.getStringAttr("inner_contiguous")));
  return b.getDictionaryAttr(fields);
}

DictionaryAttr kernelEntry(Builder &b, const KernelInfo &k) {
  SmallVector<Attribute> grid, params;
  for (const std::string &g : k.grid)
    grid.push_back(expr(b, g));
  for (const KernelParam &param : k.params) {
    if (!param.tmaBox.empty()) {
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("kind", b.getStringAttr("tma")),
          b.getNamedAttr("tensor", b.getStringAttr(param.name)),
          b.getNamedAttr("box", b.getI64ArrayAttr(param.tmaBox)),
          b.getNamedAttr("swizzle",
                         b.getStringAttr(param.tmaSwizzled ? "128B" : "none"))};
      if (param.tmaPanelDim >= 0)
        fields.push_back(b.getNamedAttr(
            "panel_dim", b.getI64IntegerAttr(param.tmaPanelDim)));
      params.push_back(b.getDictionaryAttr(fields));
      continue;
    }
    params.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr(param.isWorkspace
                                                    ? "workspace"
                                                    : "tensor")),
         b.getNamedAttr("name", b.getStringAttr(param.name)),
         b.getNamedAttr("abi", b.getStringAttr("memref"))}));
  }
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("name", b.getStringAttr(k.name)),
      b.getNamedAttr("grid", b.getArrayAttr(grid)),
      b.getNamedAttr("block", b.getArrayAttr({b.getI64IntegerAttr(k.block)})),
      b.getNamedAttr("shared_memory", b.getI64IntegerAttr(k.sharedMemory)),
      b.getNamedAttr("params", b.getArrayAttr(params))};
  if (!k.when.empty())
    fields.push_back(b.getNamedAttr("when", expr(b, k.when)));
  if (k.cluster > 1)
    fields.push_back(b.getNamedAttr(
        "cluster", b.getArrayAttr({b.getI64IntegerAttr(k.cluster)})));
  return b.getDictionaryAttr(fields);
}

SmallVector<Attribute> features(Builder &b, const SSDProblem &p) {
  SmallVector<Attribute> list;
  auto add = [&](bool present, StringRef name) {
    if (present)
      list.push_back(b.getStringAttr(name));
  };
  add(p.has("D") && !p.perChannelD, "D");
  add(p.has("D") && p.perChannelD, "Dhp");
  add(p.has("z"), "z");
  add(p.has("dt_bias"), "dt_bias");
  add(p.softplus, "softplus");
  add(p.dtLow != 0.0 || std::isfinite(p.dtHigh), "dt_limit");
  add(p.has("initial_states"), "initial_states");
  add(p.hasSeqIdx(), "seq_idx");
  add(p.isVarlen(), "varlen");
  return list;
}

} // namespace

DictionaryAttr buildLaunchAttr(MLIRContext *ctx, const SSDProblem &p,
                               ArrayRef<KernelInfo> kernels) {
  Builder b(ctx);
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  DictionaryAttr constants = b.getDictionaryAttr(
      {b.getNamedAttr("nheads", i64(p.heads)),
       b.getNamedAttr("headdim", i64(p.headDim)),
       b.getNamedAttr("dstate", i64(p.state)),
       b.getNamedAttr("ngroups", i64(p.groups)),
       b.getNamedAttr("chunk_size", i64(p.chunk)),
       b.getNamedAttr("dtype", b.getStringAttr(dtypeName(p.elementType))),
       b.getNamedAttr("state_dtype", b.getStringAttr(dtypeName(p.stateType))),
       b.getNamedAttr("features", b.getArrayAttr(features(b, p)))});
  SmallVector<Attribute> tensors, workspaces, kernelList;
  for (const BufferSpec &s : p.buffers)
    (s.isWorkspace ? workspaces : tensors).push_back(bufferEntry(b, s));
  for (const KernelInfo &k : kernels)
    kernelList.push_back(kernelEntry(b, k));
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("constants", constants),
      b.getNamedAttr("tensors", b.getArrayAttr(tensors)),
      b.getNamedAttr("workspaces", b.getArrayAttr(workspaces)),
      b.getNamedAttr("kernels", b.getArrayAttr(kernelList))};
  if (!p.derived.empty()) {
    SmallVector<NamedAttribute> derived;
    for (const auto &[name, text] : p.derived)
      derived.push_back(b.getNamedAttr(name, b.getStringAttr(text)));
    fields.push_back(b.getNamedAttr("derived", b.getDictionaryAttr(derived)));
  }
  return b.getDictionaryAttr(fields);
}

} // namespace gpu_lowering
} // namespace ssd
