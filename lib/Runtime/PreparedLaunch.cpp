//===- PreparedLaunch.cpp - A launch with its host work done --------------===//

#include "PreparedLaunch.h"

#include "TensorMap.h"

#include <algorithm>
#include <cstring>

using namespace ssd::rt;

namespace {

/// Encodes the TMA descriptor of every tensor-map parameter of `launch`.
Expected<std::vector<CUtensorMap>>
encodeTensorMaps(const Driver &d, const Manifest &m, const KernelLaunch &launch,
                 const ArgumentMap &args, const std::string &where) {
  const KernelSpec &k = *launch.spec;
  std::vector<CUtensorMap> maps(k.params.size());
  for (size_t pi = 0; pi < k.params.size(); ++pi) {
    const ParamSpec &p = k.params[pi];
    if (p.kind != ParamKind::TensorMap)
      continue;
    auto arg = args.find(p.name);
    if (arg == args.end())
      return Status::error(where + ": TMA parameter of absent tensor '" +
                           p.name + "'");
    const std::vector<int64_t> &shape = arg->second.shape;
    // TMA takes no empty extent, and a tensor without elements has no tile
    // for a kernel to copy (e.g. L = 0): its descriptor stays zeroed and
    // unread.
    if (std::find(shape.begin(), shape.end(), 0) != shape.end())
      continue;
    Expected<TensorMapRequest> request =
        makeTensorMapRequest(p.tensorMap, *m.findTensor(p.name), arg->second);
    if (!request.ok())
      return request.status();
    Expected<CUtensorMap> map = encodeTensorMap(d, *request, p.name);
    if (!map.ok())
      return map.status();
    maps[pi] = *map;
  }
  return maps;
}

} // namespace

/// Kernel `index` of `plan` with its TMA descriptors encoded.
Expected<ReadyKernel> ssd::rt::prepareKernel(const Driver &d, const Manifest &m,
                                             const LaunchPlan &plan,
                                             size_t index,
                                             const ArgumentMap &args,
                                             CUfunction f) {
  ReadyKernel k;
  k.launch = &plan.kernels[index];
  k.function = f;
  k.where = "kernel '" + k.launch->spec->name + "' (" +
            std::to_string(index + 1) + " of " +
            std::to_string(plan.kernels.size()) + ")";
  Expected<std::vector<CUtensorMap>> maps =
      encodeTensorMaps(d, m, *k.launch, args, k.where);
  if (!maps.ok())
    return maps.status();
  k.maps = maps.take();
  return k;
}

/// `prepared` with every kernel's parameters packed for the workspace at
/// `base`; `args` are those it was prepared for (equal by LaunchKey).
Expected<std::shared_ptr<const PreparedLaunch>>
ssd::rt::packFor(const PreparedLaunch &prepared, const Manifest &m,
                 const ArgumentMap &args, uint64_t base) {
  auto packed = std::make_shared<PreparedLaunch>(prepared);
  for (ReadyKernel &k : packed->kernels) {
    Expected<KernelParams> params =
        packKernelParams(m, *k.launch, args, *packed->plan, base, k.maps);
    if (!params.ok())
      return params.status();
    k.params = params.take();
    if (k.layout) {
      Expected<ParamBuffer> buffer = layOutParams(k.params, *k.layout, k.where);
      if (!buffer.ok())
        return buffer.status();
      k.buffer = buffer.take();
    }
  }
  packed->packedFor = base;
  return std::shared_ptr<const PreparedLaunch>(std::move(packed));
}

/// Launches a prepared kernel on `stream`; a cluster shape travels as a
/// launch attribute, so the cubin need not carry it.
CUresult ssd::rt::enqueueKernel(const Driver &d, const ReadyKernel &k,
                                CUstream stream) {
  const KernelLaunch &launch = *k.launch;
  const KernelSpec &spec = *launch.spec;
  // One buffer where the layout is known (the driver copies it whole),
  // else a pointer per parameter.
  std::vector<void *> pointers;
  size_t bufferSize = k.buffer ? k.buffer->size() : 0;
  void *extra[] = {reinterpret_cast<void *>(kLaunchParamBufferPointer),
                   const_cast<void *>(k.buffer ? k.buffer->data() : nullptr),
                   reinterpret_cast<void *>(kLaunchParamBufferSize),
                   &bufferSize, reinterpret_cast<void *>(kLaunchParamEnd)};
  void **params = nullptr, **extraParams = nullptr;
  if (k.buffer) {
    extraParams = extra;
  } else {
    pointers = k.params.pointers();
    params = pointers.data();
  }
  if (spec.cluster[0] * spec.cluster[1] * spec.cluster[2] == 1)
    return d.cuLaunchKernel(k.function, launch.grid[0], launch.grid[1],
                            launch.grid[2], launch.block[0], launch.block[1],
                            launch.block[2], launch.sharedBytes, stream, params,
                            extraParams);
  CUlaunchAttribute attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = unsigned(spec.cluster[0]);
  attr.value.clusterDim.y = unsigned(spec.cluster[1]);
  attr.value.clusterDim.z = unsigned(spec.cluster[2]);
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = launch.grid[0];
  config.gridDimY = launch.grid[1];
  config.gridDimZ = launch.grid[2];
  config.blockDimX = launch.block[0];
  config.blockDimY = launch.block[1];
  config.blockDimZ = launch.block[2];
  config.sharedMemBytes = launch.sharedBytes;
  config.hStream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  return d.cuLaunchKernelEx(&config, k.function, params, extraParams);
}
