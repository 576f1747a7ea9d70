//===- Artifact.cpp - Loading and launching SSD artifacts -----------------===//
//
// launch() = planLaunch (pure checks and geometry) + the driver calls: load
// the cubin into the current context once, lay out the workspace, encode TMA
// descriptors and pack parameters for every kernel, then enqueue the
// workspace zeroing and the kernels on the caller's stream back to back.
// All but the enqueueing is kept for the artifact's recent argument sets
// (LaunchCache.h), so a repeated launch does only the enqueueing.
//
//===----------------------------------------------------------------------===//

#include "ssd/Runtime/Runtime.h"

#include "Driver.h"
#include "DriverQueries.h"
#include "LaunchCache.h"
#include "PreparedLaunch.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

using namespace ssd::rt;

namespace {

Expected<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

/// A kernel the 48 KB default cannot hold needs an explicit opt-in.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

struct LoadedModule {
  CUmodule module = nullptr;
  std::vector<CUfunction> functions; // Parallel to Manifest::kernels.
  /// The dynamic shared memory each function is allowed so far (0: the
  /// default): the limit is the function's, so it only ever grows.
  std::vector<uint32_t> sharedAllowed;
  /// Where each function reads its parameters, where the driver says
  /// (cuFuncGetParamInfo, CUDA 12.4); parallel to `functions`.
  std::vector<std::optional<std::vector<ParamPlacement>>> paramLayouts;
};

/// How many argument sets an artifact keeps prepared: one per layer of a
/// deep model calling it with its own buffers (64 in Mamba-2 2.7B), with
/// room to spare; an entry is a few KB.
constexpr size_t kPreparedLaunches = 256;

/// Frees an auto-allocated workspace on the stream however launch() exits.
struct StreamBuffer {
  const Driver *driver = nullptr;
  CUdeviceptr ptr = 0;
  CUstream stream = nullptr;
  ~StreamBuffer() {
    if (ptr)
      driver->cuMemFreeAsync(ptr, stream);
  }
};

} // namespace

struct Artifact::Impl {
  Manifest manifest;
  std::vector<char> cubin;
  std::string origin;
  const Driver *driver = nullptr; // Set at the first load into a context.

  std::mutex mutex;
  /// By context handle and id (CurrentContext::id).
  using ContextKey = std::pair<CUcontext, uint64_t>;
  static ContextKey keyOf(const CurrentContext &ctx) {
    return {ctx.context, ctx.id};
  }
  std::map<ContextKey, LoadedModule> modules;
  // The TMA descriptors of launches captured into CUDA graphs. A captured
  // copy reads its host source at every replay, so each captured launch
  // keeps its own (never reused, 128 bytes each) while the artifact lives;
  // a deque keeps their addresses stable as it grows.
  std::deque<CUtensorMap> capturedDescriptors;
  /// The host work of recent launches, by their arguments.
  LaunchCache<PreparedLaunch> prepared{kPreparedLaunches};

  ~Impl() {
    // Errors are ignored: the context may already be gone.
    for (auto &[ctx, loaded] : modules)
      driver->cuModuleUnload(loaded.module);
  }

  Expected<const LoadedModule *> moduleFor(const Driver &d,
                                           const CurrentContext &ctx);

  /// Lets kernel `index` of the module in `ctx` use `bytes` of dynamic
  /// shared memory, asking the driver only when that exceeds what it allows.
  Status allowShared(const Driver &d, const CurrentContext &ctx, size_t index,
                     uint32_t bytes, const std::string &where);

  /// The host work of a launch with `args` in the current context: cached
  /// under `key`, or done now (every check, the plan, the descriptors, the
  /// shared-memory opt-in) and cached unpacked.
  Expected<std::shared_ptr<const PreparedLaunch>>
  prepare(const Driver &d, const ArgumentMap &args, const LaunchKey &key,
          const CurrentContext &ctx);

  /// Host memory holding map for as long as a graph may replay a copy of it.
  const CUtensorMap *keepForReplays(const CUtensorMap &map) {
    std::lock_guard<std::mutex> lock(mutex);
    capturedDescriptors.push_back(map);
    return &capturedDescriptors.back();
  }
};

Expected<const LoadedModule *>
Artifact::Impl::moduleFor(const Driver &d, const CurrentContext &ctx) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(keyOf(ctx));
  if (it != modules.end())
    return static_cast<const LoadedModule *>(&it->second);
  driver = &d;
  LoadedModule loaded;
  CUresult r = d.cuModuleLoadData(&loaded.module, cubin.data());
  if (r != CUDA_SUCCESS)
    return d.error(r, origin + ": cuModuleLoadData of kernels.cubin failed");
  for (const KernelSpec &k : manifest.kernels) {
    CUfunction f;
    r = d.cuModuleGetFunction(&f, loaded.module, k.name.c_str());
    if (r == CUDA_SUCCESS && k.cluster[0] * k.cluster[1] * k.cluster[2] > 8)
      r = d.cuFuncSetAttribute(
          f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS) {
      d.cuModuleUnload(loaded.module);
      return d.error(r, origin + ": kernel '" + k.name + "' in kernels.cubin");
    }
    loaded.functions.push_back(f);
  }
  loaded.sharedAllowed.assign(loaded.functions.size(), 0);
  for (size_t ki = 0; ki < loaded.functions.size(); ++ki)
    loaded.paramLayouts.push_back(
        queryParamLayout(d, loaded.functions[ki],
                         packedParamCount(manifest, manifest.kernels[ki])));
  auto [pos, inserted] = modules.emplace(keyOf(ctx), std::move(loaded));
  return static_cast<const LoadedModule *>(&pos->second);
}

Status Artifact::Impl::allowShared(const Driver &d, const CurrentContext &ctx,
                                   size_t index, uint32_t bytes,
                                   const std::string &where) {
  if (bytes <= kDefaultSharedLimit)
    return Status::success();
  std::lock_guard<std::mutex> lock(mutex);
  LoadedModule &loaded = modules.at(keyOf(ctx));
  if (bytes <= loaded.sharedAllowed[index])
    return Status::success();
  CUresult r = d.cuFuncSetAttribute(
      loaded.functions[index], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      int(bytes));
  if (r != CUDA_SUCCESS)
    return d.error(r, where + ": allowing " + std::to_string(bytes) +
                          " bytes of dynamic shared memory");
  loaded.sharedAllowed[index] = bytes;
  return Status::success();
}

Expected<std::shared_ptr<const PreparedLaunch>>
Artifact::Impl::prepare(const Driver &d, const ArgumentMap &args,
                        const LaunchKey &key, const CurrentContext &ctx) {
  if (std::shared_ptr<const PreparedLaunch> hit = prepared.find(key))
    return hit;
  Expected<DeviceInfo> device = queryDevice(d);
  if (!device.ok())
    return device.status();
  Expected<LaunchPlan> plan =
      planLaunch(manifest, args, *device, driverPointerQuery(d));
  if (!plan.ok())
    return plan.status();
  Expected<const LoadedModule *> loaded = moduleFor(d, ctx);
  if (!loaded.ok())
    return loaded.status();

  auto fresh = std::make_shared<PreparedLaunch>();
  fresh->plan = std::make_shared<const LaunchPlan>(plan.take());
  const LaunchPlan &p = *fresh->plan;
  for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
    if (!p.kernels[ki].runs())
      continue;
    Expected<ReadyKernel> k =
        prepareKernel(d, manifest, p, ki, args, (*loaded)->functions[ki]);
    if (!k.ok())
      return k.status();
    const auto &layout = (*loaded)->paramLayouts[ki];
    k->layout = layout ? &*layout : nullptr;
    SSD_RT_RETURN_IF_ERROR(
        allowShared(d, ctx, ki, p.kernels[ki].sharedBytes, k->where));
    fresh->kernels.push_back(k.take());
  }
  std::shared_ptr<const PreparedLaunch> result = std::move(fresh);
  prepared.insert(key, result);
  return result;
}

Status ssd::rt::driverAvailable() {
  Expected<const Driver *> d = getDriver();
  return d.ok() ? Status::success() : d.status();
}

Expected<DeviceInfo> ssd::rt::currentDevice() {
  Expected<const Driver *> d = getDriver();
  if (!d.ok())
    return d.status();
  return queryDevice(**d);
}

Expected<Artifact> Artifact::fromMemory(const std::string &manifestJson,
                                        std::vector<char> cubin,
                                        const std::string &origin) {
  Expected<Manifest> m = parseManifest(manifestJson);
  if (!m.ok())
    return Status::error(origin + "/manifest.json: " + m.message());
  // cubins are ELF files; anything else is a packaging mistake.
  if (cubin.size() < 4 || std::memcmp(cubin.data(),
                                      "\x7f"
                                      "ELF",
                                      4) != 0)
    return Status::error(origin +
                         "/kernels.cubin: not a cubin (no ELF header)");
  auto impl = std::make_shared<Impl>();
  impl->manifest = m.take();
  impl->cubin = std::move(cubin);
  impl->origin = origin;
  return Artifact(std::move(impl));
}

Expected<Artifact> Artifact::load(const std::string &dir) {
  Expected<std::string> manifest = readFile(dir + "/manifest.json");
  if (!manifest.ok())
    return manifest.status();
  Expected<std::string> cubin = readFile(dir + "/kernels.cubin");
  if (!cubin.ok())
    return cubin.status();
  return fromMemory(*manifest, std::vector<char>(cubin->begin(), cubin->end()),
                    dir);
}

const Manifest &Artifact::manifest() const { return impl->manifest; }
const std::string &Artifact::origin() const { return impl->origin; }

Expected<LaunchPlan> Artifact::plan(const ArgumentMap &args,
                                    const DeviceInfo &device) const {
  return planLaunch(impl->manifest, args, device);
}

/// The LaunchKey of `args` in the current context, and the context.
static Expected<std::pair<LaunchKey, CurrentContext>>
currentKey(const Driver &d, const ArgumentMap &args) {
  Expected<CurrentContext> current = currentContext(d);
  if (!current.ok())
    return current.status();
  return std::make_pair(
      LaunchKey::of(current->context, current->id, int(current->device), args),
      *current);
}

Expected<uint64_t> Artifact::workspaceSize(const ArgumentMap &args) const {
  Expected<const Driver *> driver = getDriver();
  if (!driver.ok())
    return driver.status();
  Expected<std::pair<LaunchKey, CurrentContext>> key =
      currentKey(**driver, args);
  if (!key.ok())
    return key.status();
  // Prepared here, the launch that usually follows finds it done.
  Expected<std::shared_ptr<const PreparedLaunch>> prepared =
      impl->prepare(**driver, args, key->first, key->second);
  if (!prepared.ok())
    return prepared.status();
  return (*prepared)->plan->workspaceBytes;
}

Status Artifact::launch(const ArgumentMap &args, void *streamHandle,
                        Workspace workspace) const {
  Expected<const Driver *> driver = getDriver();
  if (!driver.ok())
    return driver.status();
  const Driver &d = **driver;
  CUstream stream = static_cast<CUstream>(streamHandle);

  Expected<std::pair<LaunchKey, CurrentContext>> key = currentKey(d, args);
  if (!key.ok())
    return key.status();
  Expected<std::shared_ptr<const PreparedLaunch>> prepared =
      impl->prepare(d, args, key->first, key->second);
  if (!prepared.ok())
    return prepared.status();
  std::shared_ptr<const PreparedLaunch> ready = prepared.take();
  const LaunchPlan &plan = *ready->plan;

  // Workspace: the caller's, or one allocated on the stream.
  StreamBuffer owned{&d, 0, stream};
  uint64_t base = reinterpret_cast<uintptr_t>(workspace.devicePtr);
  if (plan.workspaceBytes && base) {
    if (workspace.bytes < plan.workspaceBytes)
      return Status::error("workspace: " + std::to_string(workspace.bytes) +
                           " bytes given, the launch needs " +
                           std::to_string(plan.workspaceBytes));
    if (base % kWorkspaceAlignment)
      return Status::error("workspace: the buffer must be " +
                           std::to_string(kWorkspaceAlignment) +
                           "-byte aligned");
  } else if (plan.workspaceBytes) {
    CUresult r = d.cuMemAllocAsync(&owned.ptr, plan.workspaceBytes, stream);
    if (r != CUDA_SUCCESS)
      return d.error(r, "allocating a workspace of " +
                            std::to_string(plan.workspaceBytes) + " bytes");
    base = owned.ptr;
  }
  // The parameters hold the workspace's addresses; a stream-ordered
  // allocation usually returns the same block, so they are packed again
  // only when it moves. Everything is prepared before anything is enqueued:
  // the zeroing and the kernels follow each other on the stream with no
  // host work between them, and an encoding or packing error leaves
  // nothing enqueued. (The launch's device time without graphs did not
  // change with this order: bench/NOTES-fused-gpu.md.)
  if (ready->packedFor != base) {
    Expected<std::shared_ptr<const PreparedLaunch>> packed =
        packFor(*ready, impl->manifest, args, base);
    if (!packed.ok())
      return packed.status();
    ready = packed.take();
    impl->prepared.insert(key->first, ready);
  }

  for (const ByteRange &z : plan.zeroRanges) {
    CUresult r = d.cuMemsetD8Async(base + z.offset, 0, z.bytes, stream);
    if (r != CUDA_SUCCESS)
      return d.error(r, "zeroing workspace bytes [" + std::to_string(z.offset) +
                            ", " + std::to_string(z.offset + z.bytes) + ")");
  }

  // Outside capture a copy from pageable host memory is staged before
  // cuMemcpyHtoDAsync returns; a captured one reads its source at replay.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (CUresult r = d.cuStreamIsCapturing(stream, &capture); r != CUDA_SUCCESS)
    return d.error(r, "querying whether the stream is capturing a graph");
  bool capturing = capture != CU_STREAM_CAPTURE_STATUS_NONE;

  for (const ReadyKernel &k : ready->kernels) {
    const KernelLaunch &launch = *k.launch;
    const KernelSpec &spec = *launch.spec;
    for (size_t pi = 0; pi < spec.params.size(); ++pi) {
      const ParamSpec &p = spec.params[pi];
      if (p.kind != ParamKind::TensorMap || p.tensorMap.byValue)
        continue;
      const CUtensorMap *source =
          capturing ? impl->keepForReplays(k.maps[pi]) : &k.maps[pi];
      CUresult r = d.cuMemcpyHtoDAsync(base + launch.descriptorOffsets[pi],
                                       source, sizeof(CUtensorMap), stream);
      if (r != CUDA_SUCCESS)
        return d.error(r, k.where + ": copying the TMA descriptor of '" +
                              p.name + "'");
    }
    if (CUresult r = enqueueKernel(d, k, stream); r != CUDA_SUCCESS)
      return d.error(r, k.where + ": launch failed");
  }
  return Status::success();
}
