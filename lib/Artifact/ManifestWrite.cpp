//===- ManifestWrite.cpp - manifest.json from the typed manifest ----------===//
//
// The layout is the one the compiler has always written: the header and the
// sections in a fixed order, constants in their documented order, and the
// members of each tensor, workspace, kernel and parameter alphabetically.
// Members holding their default are left out, except those the reader
// requires; dimension lists keep the length the manifest was given with.
//
//===----------------------------------------------------------------------===//

#include "ssd/Artifact/Manifest.h"

#include "ManifestNames.h"

using namespace ssd::artifact;

namespace {

/// A plain number as an integer, anything else as its text.
JsonValue exprValue(const Expr &e) {
  if (std::optional<int64_t> v = e.asConstant())
    return JsonValue::makeInteger(*v);
  return JsonValue::makeString(e.text());
}

JsonValue exprList(const Expr *dims, size_t count) {
  JsonValue list = JsonValue::makeArray();
  for (size_t i = 0; i < count; ++i)
    list.array.push_back(exprValue(dims[i]));
  return list;
}

JsonValue intList(const int64_t *values, size_t count) {
  JsonValue list = JsonValue::makeArray();
  for (size_t i = 0; i < count; ++i)
    list.array.push_back(JsonValue::makeInteger(values[i]));
  return list;
}

JsonValue string(const char *s) { return JsonValue::makeString(s); }

JsonValue compilerJson(const CompilerInfo &c) {
  JsonValue out = JsonValue::makeObject();
  out.add("name", JsonValue::makeString(c.name));
  out.add("version", JsonValue::makeString(c.version));
  if (c.options.isObject() && !c.options.object.empty())
    out.add("options", c.options);
  return out;
}


JsonValue tensorJson(const TensorSpec &t) {
  JsonValue out = JsonValue::makeObject();
  if (t.alignment != TensorSpec().alignment)
    out.add("alignment", JsonValue::makeInteger(t.alignment));
  out.add("dtype", string(dtypeName(t.dtype)));
  if (t.layout != Layout::Contiguous)
    out.add("layout", string(nameIn(kLayoutNames, t.layout)));
  out.add("name", JsonValue::makeString(t.name));
  if (t.optional)
    out.add("optional", JsonValue::makeBool(true));
  if (t.output)
    out.add("output", JsonValue::makeBool(true));
  out.add("shape", exprList(t.shape.data(), t.shape.size()));
  return out;
}

JsonValue workspaceJson(const WorkspaceSpec &w) {
  JsonValue out = JsonValue::makeObject();
  if (w.alignment != WorkspaceSpec().alignment)
    out.add("alignment", JsonValue::makeInteger(w.alignment));
  if (!w.shape.empty())
    out.add("dtype", string(dtypeName(w.dtype)));
  out.add("name", JsonValue::makeString(w.name));
  if (!w.shape.empty())
    out.add("shape", exprList(w.shape.data(), w.shape.size()));
  if (w.sizeGiven || w.shape.empty())
    out.add("size", exprValue(w.size));
  if (w.zeroInit)
    out.add("zero_init", JsonValue::makeBool(true));
  return out;
}

JsonValue tensorMapJson(const ParamSpec &p) {
  const TensorMapSpec &tm = p.tensorMap;
  JsonValue out = JsonValue::makeObject();
  out.add("box", intList(tm.box.data(), tm.box.size()));
  bool unitStrides = true;
  for (int64_t s : tm.elementStrides)
    unitStrides &= s == 1;
  if (!unitStrides)
    out.add("element_strides",
            intList(tm.elementStrides.data(), tm.elementStrides.size()));
  if (tm.interleave != Interleave::None)
    out.add("interleave", string(nameIn(kInterleaveNames, tm.interleave)));
  out.add("kind", string(nameIn(kParamKindNames, p.kind)));
  if (tm.l2Promotion != L2Promotion::None)
    out.add("l2_promotion", string(nameIn(kL2PromotionNames, tm.l2Promotion)));
  if (tm.oobFill != OobFill::Zero)
    out.add("oob_fill", string(nameIn(kOobFillNames, tm.oobFill)));
  if (tm.panelDim >= 0)
    out.add("panel_dim", JsonValue::makeInteger(tm.panelDim));
  if (!tm.byValue)
    out.add("pass", string(nameIn(kPassNames, tm.byValue)));
  if (tm.swizzle != Swizzle::None)
    out.add("swizzle", string(nameIn(kSwizzleNames, tm.swizzle)));
  out.add("tensor", JsonValue::makeString(p.name));
  return out;
}

JsonValue paramJson(const ParamSpec &p) {
  if (p.kind == ParamKind::TensorMap)
    return tensorMapJson(p);
  JsonValue out = JsonValue::makeObject();
  if (p.kind != ParamKind::Scalar && p.abi != Abi::Pointer)
    out.add("abi", string(nameIn(kAbiNames, p.abi)));
  out.add("kind", string(nameIn(kParamKindNames, p.kind)));
  out.add("name", JsonValue::makeString(p.name));
  if (p.kind == ParamKind::Scalar) {
    out.add("type", string(nameIn(kScalarTypeNames, p.scalarType)));
    out.add("value", exprValue(p.value));
  }
  return out;
}

JsonValue kernelJson(const KernelSpec &k) {
  JsonValue out = JsonValue::makeObject();
  out.add("block", exprList(k.block.data(), k.blockRank));
  if (k.clusterRank > 0)
    out.add("cluster", intList(k.cluster.data(), k.clusterRank));
  out.add("grid", exprList(k.grid.data(), k.gridRank));
  out.add("name", JsonValue::makeString(k.name));
  JsonValue params = JsonValue::makeArray();
  for (const ParamSpec &p : k.params)
    params.array.push_back(paramJson(p));
  out.add("params", std::move(params));
  out.add("shared_memory", exprValue(k.sharedMemory));
  if (auto always = k.when.asConstant(); !always || *always != 1)
    out.add("when", exprValue(k.when));
  return out;
}

} // namespace

JsonValue ssd::artifact::constantsToJson(const Constants &c) {
  JsonValue out = JsonValue::makeObject();
  out.add("nheads", JsonValue::makeInteger(c.nheads));
  out.add("headdim", JsonValue::makeInteger(c.headdim));
  out.add("dstate", JsonValue::makeInteger(c.dstate));
  out.add("ngroups", JsonValue::makeInteger(c.ngroups));
  out.add("chunk_size", JsonValue::makeInteger(c.chunkSize));
  out.add("dtype", string(dtypeName(c.dtype)));
  out.add("state_dtype", string(dtypeName(c.stateDtype)));
  JsonValue features = JsonValue::makeArray();
  for (const std::string &f : c.features)
    features.array.push_back(JsonValue::makeString(f));
  out.add("features", std::move(features));
  for (const auto &[name, value] : c.extra)
    out.add(name, JsonValue::makeInteger(value));
  return out;
}

JsonValue ssd::artifact::manifestToJson(const Manifest &m) {
  JsonValue doc = JsonValue::makeObject();
  doc.add("format", string("ssd-artifact"));
  doc.add("format_version", JsonValue::makeInteger(m.formatVersion));
  doc.add("target", JsonValue::makeString(m.target));
  doc.add("compiler", compilerJson(m.compiler));
  doc.add("constants", constantsToJson(m.constants));
  JsonValue derived = JsonValue::makeObject();
  for (size_t i = m.ncImplied ? 1 : 0; i < m.derived.size(); ++i)
    derived.add(m.derived[i].first, exprValue(m.derived[i].second));
  if (!derived.object.empty())
    doc.add("derived", std::move(derived));
  JsonValue tensors = JsonValue::makeArray(),
            workspaces = JsonValue::makeArray(),
            kernels = JsonValue::makeArray();
  for (const TensorSpec &t : m.tensors)
    tensors.array.push_back(tensorJson(t));
  for (const WorkspaceSpec &w : m.workspaces)
    workspaces.array.push_back(workspaceJson(w));
  for (const KernelSpec &k : m.kernels)
    kernels.array.push_back(kernelJson(k));
  doc.add("tensors", std::move(tensors));
  doc.add("workspaces", std::move(workspaces));
  doc.add("kernels", std::move(kernels));
  return doc;
}

std::string ssd::artifact::printManifest(const Manifest &m) {
  return printJson(manifestToJson(m)) + "\n";
}
