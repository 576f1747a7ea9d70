//===- Params.cpp - Kernel parameter buffers ------------------------------===//

#include "Params.h"

#include <algorithm>
#include <cstring>

using namespace ssd::rt;

void KernelParams::addBytes(const void *data, size_t size) {
  size_t align = size >= 64 ? 64 : 8;
  size_t offset = (used + align - 1) / align * align;
  used = offset + size;
  storage.resize((used + sizeof(Block) - 1) / sizeof(Block));
  std::memcpy(reinterpret_cast<unsigned char *>(storage.data()) + offset, data,
              size);
  offsets.push_back(offset);
  sizes.push_back(size);
}

std::vector<void *> KernelParams::pointers() const {
  std::vector<void *> ptrs;
  ptrs.reserve(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i)
    ptrs.push_back(const_cast<void *>(dataAt(i)));
  return ptrs;
}

size_t ssd::rt::packedParamCount(const Manifest &manifest,
                                 const KernelSpec &k) {
  size_t count = 0;
  for (const ParamSpec &p : k.params) {
    size_t rank = 0;
    if (p.kind == ParamKind::Tensor)
      rank = manifest.findTensor(p.name)->shape.size();
    else if (p.kind == ParamKind::Workspace)
      rank = manifest.findWorkspace(p.name)->shape.size();
    bool memref =
        (p.kind == ParamKind::Tensor || p.kind == ParamKind::Workspace) &&
        p.abi != Abi::Pointer;
    count += memref ? 3 + 2 * rank : 1;
  }
  return count;
}

Expected<ParamBuffer>
ssd::rt::layOutParams(const KernelParams &params,
                      const std::vector<ParamPlacement> &layout,
                      const std::string &where) {
  if (layout.size() != params.count())
    return Status::error(where + ": the cubin's function takes " +
                         std::to_string(layout.size()) +
                         " parameters, the manifest lists " +
                         std::to_string(params.count()) +
                         "; the manifest does not describe this cubin");
  ParamBuffer buffer;
  for (size_t i = 0; i < layout.size(); ++i) {
    if (layout[i].size != params.sizeAt(i))
      return Status::error(
          where + ": parameter " + std::to_string(i) + " is " +
          std::to_string(layout[i].size) + " bytes in the cubin, " +
          std::to_string(params.sizeAt(i)) +
          " as the manifest lists it; the manifest does not describe "
          "this cubin");
    buffer.bytes = std::max(buffer.bytes, layout[i].offset + layout[i].size);
  }
  buffer.storage.resize((buffer.bytes + sizeof(ParamBuffer::Block) - 1) /
                        sizeof(ParamBuffer::Block));
  auto *base = reinterpret_cast<unsigned char *>(buffer.storage.data());
  for (size_t i = 0; i < layout.size(); ++i)
    std::memcpy(base + layout[i].offset, params.dataAt(i), layout[i].size);
  return buffer;
}

/// MLIR's default lowering of a memref argument: allocated pointer, aligned
/// pointer, offset, then sizes and strides (in elements), all 64-bit.
static void addMemref(KernelParams &params, uint64_t address,
                      const std::vector<int64_t> &shape,
                      const std::vector<int64_t> &strides) {
  params.add(address);
  params.add(address);
  params.add(int64_t(0));
  for (int64_t s : shape)
    params.add(s);
  for (int64_t s : strides)
    params.add(s);
}

static std::vector<int64_t> denseStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  return strides;
}

Expected<KernelParams>
ssd::rt::packKernelParams(const Manifest &manifest, const KernelLaunch &launch,
                          const ArgumentMap &args, const LaunchPlan &plan,
                          uint64_t workspaceBase,
                          const std::vector<CUtensorMap> &tensorMaps) {
  const KernelSpec &k = *launch.spec;
  KernelParams params;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const ParamSpec &p = k.params[i];
    switch (p.kind) {
    case ParamKind::Tensor: {
      auto it = args.find(p.name);
      // An absent optional tensor passes a null pointer and empty sizes.
      TensorArg absent;
      absent.shape.assign(manifest.findTensor(p.name)->shape.size(), 0);
      const TensorArg &a = it != args.end() ? it->second : absent;
      uint64_t address = reinterpret_cast<uintptr_t>(a.devicePtr);
      if (p.abi == Abi::Pointer)
        params.add(address);
      else
        addMemref(params, address, a.shape,
                  a.strides.empty() ? denseStrides(a.shape) : a.strides);
      break;
    }
    case ParamKind::Workspace: {
      const WorkspaceSlot *w = plan.findWorkspace(p.name);
      if (!w)
        return Status::error("kernel '" + k.name + "': workspace '" + p.name +
                             "' is not in the plan");
      uint64_t address = workspaceBase + w->offset;
      if (p.abi == Abi::Pointer)
        params.add(address);
      else
        addMemref(params, address, w->shape, denseStrides(w->shape));
      break;
    }
    case ParamKind::Scalar:
      if (p.scalarType == ScalarType::I32)
        params.add(int32_t(launch.scalarValues[i]));
      else
        params.add(int64_t(launch.scalarValues[i]));
      break;
    case ParamKind::TensorMap:
      if (p.tensorMap.byValue) {
        if (i >= tensorMaps.size())
          return Status::error("kernel '" + k.name +
                               "': no TMA descriptor "
                               "encoded for parameter " +
                               std::to_string(i));
        params.add(tensorMaps[i]);
      } else {
        params.add(workspaceBase + launch.descriptorOffsets[i]);
      }
      break;
    }
  }
  return params;
}
