//===- Plan.cpp - Checking arguments and planning a launch ----------------===//
//
// Pure functions of the manifest, the arguments and a description of the
// device: no driver calls, so every check is unit-tested without a GPU.
//
//===----------------------------------------------------------------------===//

#include "ssd/Runtime/Plan.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <numeric>

using namespace ssd::rt;

std::string ssd::rt::formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string ssd::rt::formatShape(const std::vector<Expr> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].text();
  return out + "]";
}

const WorkspaceSlot *LaunchPlan::findWorkspace(const std::string &name) const {
  for (const WorkspaceSlot &w : workspace)
    if (w.name == name)
      return &w;
  return nullptr;
}

namespace {

std::string formatPointer(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIxPTR,
                reinterpret_cast<uintptr_t>(p));
  return buf;
}

Status argError(const std::string &name, const std::string &what) {
  return Status::error("tensor argument '" + name + "': " + what);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  return strides;
}

std::vector<int64_t> stridesOf(const TensorArg &a) {
  return a.strides.empty() ? contiguousStrides(a.shape) : a.strides;
}

/// Byte range [begin, end) a non-empty tensor can touch.
std::pair<uintptr_t, uintptr_t> extent(const TensorArg &a) {
  std::vector<int64_t> strides = stridesOf(a);
  uint64_t last = 0;
  for (size_t i = 0; i < a.shape.size(); ++i)
    last += uint64_t(a.shape[i] - 1) * uint64_t(strides[i]);
  uintptr_t begin = reinterpret_cast<uintptr_t>(a.devicePtr);
  return {begin, begin + (last + 1) * dtypeBytes(a.dtype)};
}

/// Which tensor and dimension bound a symbol: for mismatch messages.
struct Binding {
  int64_t value;
  std::string origin;
};

Status checkShapeAndBind(const TensorSpec &spec, const TensorArg &arg,
                         SymbolTable &symbols,
                         std::map<std::string, Binding> &bindings) {
  if (arg.dtype != spec.dtype)
    return argError(spec.name, std::string("dtype is ") + dtypeName(arg.dtype) +
                                   ", expected " + dtypeName(spec.dtype));
  if (arg.shape.size() != spec.shape.size())
    return argError(spec.name, "rank is " + std::to_string(arg.shape.size()) +
                                   " " + formatShape(arg.shape) +
                                   ", expected " +
                                   std::to_string(spec.shape.size()) + " " +
                                   formatShape(spec.shape));
  if (!arg.strides.empty() && arg.strides.size() != arg.shape.size())
    return argError(spec.name, "has " + std::to_string(arg.strides.size()) +
                                   " strides for rank " +
                                   std::to_string(arg.shape.size()));
  for (size_t d = 0; d < arg.shape.size(); ++d) {
    if (arg.shape[d] < 0)
      return argError(spec.name, "dimension " + std::to_string(d) + " is " +
                                     std::to_string(arg.shape[d]));
    std::optional<std::string> sym = spec.shape[d].asSymbol();
    if (!sym || symbols.count(*sym))
      continue; // Checked once every symbol is bound.
    auto [it, inserted] = bindings.try_emplace(
        *sym,
        Binding{arg.shape[d], spec.name + " dimension " + std::to_string(d)});
    if (!inserted && it->second.value != arg.shape[d])
      return argError(spec.name,
                      "dimension " + std::to_string(d) + " (" + *sym + ") is " +
                          std::to_string(arg.shape[d]) + ", but " + *sym +
                          " = " + std::to_string(it->second.value) + " from " +
                          it->second.origin);
  }
  return Status::success();
}

Status checkDimensions(const TensorSpec &spec, const TensorArg &arg,
                       const SymbolTable &symbols) {
  for (size_t d = 0; d < arg.shape.size(); ++d) {
    const Expr &e = spec.shape[d];
    Expected<int64_t> want = e.evaluate(symbols);
    if (!want.ok())
      return argError(spec.name,
                      "dimension " + std::to_string(d) + ": " + want.message());
    if (*want == arg.shape[d])
      continue;
    std::string expected = std::to_string(*want);
    if (!e.asConstant())
      expected += " (" + e.text() + ")";
    return argError(spec.name, "dimension " + std::to_string(d) + " is " +
                                   std::to_string(arg.shape[d]) +
                                   ", expected " + expected + "; shape is " +
                                   formatShape(arg.shape) + ", expected " +
                                   formatShape(spec.shape));
  }
  return Status::success();
}

Status checkStrides(const TensorSpec &spec, const TensorArg &arg) {
  if (arg.strides.empty())
    return Status::success();
  for (size_t d = 0; d < arg.strides.size(); ++d)
    if (arg.strides[d] < 0)
      return argError(spec.name, "negative stride " +
                                     std::to_string(arg.strides[d]) +
                                     " in dimension " + std::to_string(d));
  std::vector<int64_t> dense = contiguousStrides(arg.shape);
  size_t rank = arg.shape.size();
  switch (spec.layout) {
  case Layout::Contiguous:
    // Like PyTorch, a stride of a size-1 dimension does not matter.
    for (size_t d = 0; d < rank; ++d)
      if (arg.shape[d] > 1 && arg.strides[d] != dense[d])
        return argError(spec.name, "strides " + formatShape(arg.strides) +
                                       " are not contiguous, expected " +
                                       formatShape(dense));
    break;
  case Layout::InnerContiguous: {
    int64_t bytes = dtypeBytes(arg.dtype), rowAlign = spec.alignment;
    if (rank && arg.shape[rank - 1] > 1 && arg.strides[rank - 1] != 1)
      return argError(spec.name, "innermost stride is " +
                                     std::to_string(arg.strides[rank - 1]) +
                                     ", expected 1");
    // A view keeps the alignment the dense layout gives every row (the
    // base's, at most): the kernels size their vector loads, and TMA its
    // strides, by it.
    for (size_t d = 0; d + 1 < rank; ++d)
      if (arg.shape[d] > 1)
        rowAlign = std::gcd(rowAlign, dense[d] * bytes);
    for (size_t d = 0; d + 1 < rank; ++d)
      if (arg.shape[d] > 1 && arg.strides[d] * bytes % rowAlign)
        return argError(spec.name,
                        "stride " + std::to_string(arg.strides[d]) +
                            " of dimension " + std::to_string(d) + " is " +
                            std::to_string(arg.strides[d] * bytes) +
                            " bytes; rows must start at multiples of " +
                            std::to_string(rowAlign) +
                            " bytes, as in the dense layout");
    break;
  }
  case Layout::Strided:
    break;
  }
  return Status::success();
}

Status checkPointer(const TensorSpec &spec, const TensorArg &arg,
                    const DeviceInfo &device, const PointerQuery &query) {
  if (numElements(arg.shape) == 0)
    return Status::success(); // Nothing is read or written through it.
  if (!arg.devicePtr)
    return argError(spec.name, "null device pointer");
  if (reinterpret_cast<uintptr_t>(arg.devicePtr) % uint64_t(spec.alignment))
    return argError(spec.name, "device pointer " +
                                   formatPointer(arg.devicePtr) +
                                   " is not aligned to " +
                                   std::to_string(spec.alignment) + " bytes");
  if (arg.device != device.ordinal)
    return argError(spec.name, "is on device " + std::to_string(arg.device) +
                                   ", but the current device is " +
                                   std::to_string(device.ordinal));
  if (!query)
    return Status::success();
  Expected<PointerInfo> info = query(arg.devicePtr);
  if (!info.ok())
    return argError(spec.name, info.message());
  if (!info->isDeviceMemory)
    return argError(spec.name, "pointer " + formatPointer(arg.devicePtr) +
                                   " is not CUDA device memory (host memory, "
                                   "or not allocated through CUDA)");
  if (info->device != device.ordinal)
    return argError(spec.name, "pointer " + formatPointer(arg.devicePtr) +
                                   " belongs to device " +
                                   std::to_string(info->device) +
                                   ", but the current device is " +
                                   std::to_string(device.ordinal));
  return Status::success();
}

Status checkNoAliasing(const Manifest &manifest, const ArgumentMap &args) {
  for (const TensorSpec &out : manifest.tensors) {
    auto o = args.find(out.name);
    if (!out.output || o == args.end() || numElements(o->second.shape) == 0)
      continue;
    auto [ob, oe] = extent(o->second);
    for (const TensorSpec &other : manifest.tensors) {
      auto a = args.find(other.name);
      if (other.name == out.name || a == args.end() ||
          numElements(a->second.shape) == 0)
        continue;
      auto [ab, ae] = extent(a->second);
      if (ob < ae && ab < oe)
        return argError(out.name, "overlaps '" + other.name +
                                      "' in memory; outputs must not alias "
                                      "other tensors");
    }
  }
  return Status::success();
}

std::string knownNames(const Manifest &manifest) {
  std::string out;
  for (const TensorSpec &t : manifest.tensors)
    out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

Status checkTarget(const std::string &target, const DeviceInfo &device) {
  // sm_XY[a]: the cubin holds SASS for compute capability X.Y; it runs on
  // X.Z with Z >= Y, and the "a" variants only on X.Y itself.
  std::string digits;
  size_t i = 3;
  while (i < target.size() &&
         std::isdigit(static_cast<unsigned char>(target[i])))
    digits += target[i++];
  bool archSpecific = i < target.size() && target[i] == 'a';
  int major = std::stoi(digits.substr(0, digits.size() - 1));
  int minor = digits.back() - '0';
  bool ok = device.computeMajor == major &&
            (archSpecific ? device.computeMinor == minor
                          : device.computeMinor >= minor);
  if (!ok)
    return Status::error("the artifact is compiled for " + target +
                         ", but device " + std::to_string(device.ordinal) +
                         " has compute capability " +
                         std::to_string(device.computeMajor) + "." +
                         std::to_string(device.computeMinor));
  return Status::success();
}

Expected<uint32_t> evalDim(const Expr &e, const SymbolTable &symbols,
                           const std::string &where, int64_t min, int64_t max) {
  Expected<int64_t> v = e.evaluate(symbols);
  if (!v.ok())
    return Status::error(where + ": " + v.message());
  if (*v < min || *v > max)
    return Status::error(
        where + ": '" + e.text() + "' evaluates to " + std::to_string(*v) +
        ", outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return uint32_t(*v);
}

uint64_t alignTo(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

Expected<SymbolTable> ssd::rt::checkArguments(const Manifest &manifest,
                                              const ArgumentMap &args,
                                              const DeviceInfo &device,
                                              const PointerQuery &query) {
  for (const auto &[name, arg] : args)
    if (!manifest.findTensor(name))
      return Status::error("unknown tensor argument '" + name +
                           "'; this artifact takes " + knownNames(manifest));
  for (const TensorSpec &spec : manifest.tensors)
    if (!spec.optional && !args.count(spec.name))
      return Status::error("missing tensor argument '" + spec.name + "' (" +
                           dtypeName(spec.dtype) + " " +
                           formatShape(spec.shape) + ")");

  SymbolTable symbols = manifest.constantSymbols();
  std::map<std::string, Binding> bindings;
  for (const TensorSpec &spec : manifest.tensors) {
    auto it = args.find(spec.name);
    if (it != args.end())
      SSD_RT_RETURN_IF_ERROR(
          checkShapeAndBind(spec, it->second, symbols, bindings));
  }
  for (const auto &[name, b] : bindings)
    symbols[name] = b.value;
  symbols["num_sms"] = device.smCount;
  for (const auto &[name, e] : manifest.derived) {
    // A derived symbol over an absent optional tensor stays undefined; a use
    // of it then fails naming the symbol.
    bool bound = true;
    for (const std::string &s : e.symbols())
      bound &= symbols.count(s) > 0;
    if (!bound)
      continue;
    Expected<int64_t> v = e.evaluate(symbols);
    if (!v.ok())
      return Status::error("derived." + name + ": " + v.message());
    symbols[name] = *v;
  }

  for (const TensorSpec &spec : manifest.tensors) {
    auto it = args.find(spec.name);
    if (it == args.end())
      continue;
    SSD_RT_RETURN_IF_ERROR(checkDimensions(spec, it->second, symbols));
    SSD_RT_RETURN_IF_ERROR(checkStrides(spec, it->second));
    SSD_RT_RETURN_IF_ERROR(checkPointer(spec, it->second, device, query));
  }
  SSD_RT_RETURN_IF_ERROR(checkNoAliasing(manifest, args));
  return symbols;
}

Expected<LaunchPlan> ssd::rt::planLaunch(const Manifest &manifest,
                                         const ArgumentMap &args,
                                         const DeviceInfo &device,
                                         const PointerQuery &query) {
  SSD_RT_RETURN_IF_ERROR(checkTarget(manifest.target, device));
  Expected<SymbolTable> symbols = checkArguments(manifest, args, device, query);
  if (!symbols.ok())
    return symbols.status();
  LaunchPlan plan;
  plan.symbols = symbols.take();

  uint64_t offset = 0;
  for (const WorkspaceSpec &w : manifest.workspaces) {
    std::string where = "workspace '" + w.name + "'";
    Expected<int64_t> bytes = w.size.evaluate(plan.symbols);
    if (!bytes.ok())
      return Status::error(where + " size: " + bytes.message());
    if (*bytes < 0)
      return Status::error(where + " size: '" + w.size.text() +
                           "' evaluates to " + std::to_string(*bytes));
    WorkspaceSlot slot;
    slot.name = w.name;
    slot.offset = offset = alignTo(offset, uint64_t(w.alignment));
    slot.bytes = uint64_t(*bytes);
    slot.zeroInit = w.zeroInit;
    for (const Expr &e : w.shape) {
      Expected<int64_t> d = e.evaluate(plan.symbols);
      if (!d.ok())
        return Status::error(where + " shape: " + d.message());
      slot.shape.push_back(*d);
    }
    offset += slot.bytes;
    plan.workspace.push_back(std::move(slot));
  }
  bool previousZeroed = false;
  for (const WorkspaceSlot &w : plan.workspace) {
    if (!w.bytes)
      continue;
    if (!w.zeroInit) {
      previousZeroed = false;
      continue;
    }
    if (previousZeroed) {
      ByteRange &run = plan.zeroRanges.back();
      run.bytes = w.offset + w.bytes - run.offset;
    } else {
      plan.zeroRanges.push_back({w.offset, w.bytes});
    }
    previousZeroed = true;
  }

  constexpr int64_t kMaxGridX = std::numeric_limits<int32_t>::max();
  for (size_t ki = 0; ki < manifest.kernels.size(); ++ki) {
    const KernelSpec &k = manifest.kernels[ki];
    std::string where = "kernel '" + k.name + "'";
    KernelLaunch launch;
    launch.spec = &k;
    Expected<int64_t> when = k.when.evaluate(plan.symbols);
    if (!when.ok())
      return Status::error(where + " when: " + when.message());
    launch.selected = *when != 0;
    for (int d = 0; d < 3; ++d) {
      std::string dim = std::string(1, "xyz"[d]);
      Expected<uint32_t> g =
          evalDim(k.grid[d], plan.symbols, where + " grid." + dim, 0,
                  d == 0 ? kMaxGridX : 65535);
      if (!g.ok())
        return g.status();
      launch.grid[d] = *g;
      Expected<uint32_t> b =
          evalDim(k.block[d], plan.symbols, where + " block." + dim, 1, 1024);
      if (!b.ok())
        return b.status();
      launch.block[d] = *b;
    }
    if (uint64_t(launch.block[0]) * launch.block[1] * launch.block[2] > 1024)
      return Status::error(where + ": a block has at most 1024 threads, got " +
                           std::to_string(uint64_t(launch.block[0]) *
                                          launch.block[1] * launch.block[2]));
    Expected<uint32_t> smem =
        evalDim(k.sharedMemory, plan.symbols, where + " shared_memory", 0,
                device.maxSharedPerBlockOptin);
    if (!smem.ok())
      return smem.status();
    launch.sharedBytes = *smem;
    if (launch.runs())
      for (int d = 0; d < 3; ++d)
        if (launch.grid[d] % k.cluster[d] != 0)
          return Status::error(where + ": grid." + std::string(1, "xyz"[d]) +
                               " = " + std::to_string(launch.grid[d]) +
                               " is not a multiple of the "
                               "cluster size " +
                               std::to_string(k.cluster[d]));

    launch.descriptorOffsets.assign(k.params.size(), 0);
    launch.scalarValues.assign(k.params.size(), 0);
    for (size_t pi = 0; pi < k.params.size(); ++pi) {
      const ParamSpec &p = k.params[pi];
      if (p.kind == ParamKind::Scalar) {
        std::string pwhere = where + " scalar '" + p.name + "'";
        Expected<int64_t> v = p.value.evaluate(plan.symbols);
        if (!v.ok())
          return Status::error(pwhere + ": " + v.message());
        if (p.scalarType == ScalarType::I32 &&
            (*v < std::numeric_limits<int32_t>::min() ||
             *v > std::numeric_limits<int32_t>::max()))
          return Status::error(pwhere + ": " + std::to_string(*v) +
                               " does not fit in i32");
        launch.scalarValues[pi] = *v;
      } else if (p.kind == ParamKind::TensorMap && !p.tensorMap.byValue) {
        // Descriptors passed by pointer live in the workspace; the driver
        // requires 64-byte alignment, 128 keeps them on their own lines.
        offset = alignTo(offset, 128);
        launch.descriptorOffsets[pi] = offset;
        offset += 128;
      }
    }
    plan.kernels.push_back(std::move(launch));
  }
  plan.workspaceBytes = offset;
  return plan;
}
