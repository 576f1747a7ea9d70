//===- Runtime.h - Loading and launching SSD artifacts ----------*- C++ -*-===//
//
// The runtime loads an artifact (kernels.cubin + manifest.json) produced by
// ssd-compile and launches it on the caller's CUDA stream after checking
// every argument against the manifest. It depends on nothing but the CUDA
// driver, which it opens at run time; the C interface is ssd-c/Runtime.h.
//
//   auto artifact = ssd::rt::Artifact::load("out/");
//   if (!artifact.ok()) { report(artifact.message()); ... }
//   ssd::rt::ArgumentMap args;
//   args["x"] = {xPtr, ssd::rt::DType::BF16, {b, L, 80, 64}, {}, 0};
//   ...
//   ssd::rt::Status s = artifact->launch(args, stream);
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_RUNTIME_H
#define SSD_RUNTIME_RUNTIME_H

#include "ssd/Runtime/Manifest.h"
#include "ssd/Runtime/Plan.h"
#include "ssd/Runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ssd::rt {

/// Scratch device memory for a launch. Null: the launch allocates it on the
/// stream (stream-ordered, freed after the last kernel).
struct Workspace {
  void *devicePtr = nullptr;
  uint64_t bytes = 0;
};

/// Alignment of the workspace buffer a caller passes.
constexpr uint64_t kWorkspaceAlignment = 256;

/// Whether the CUDA driver can be loaded; the error says why not.
Status driverAvailable();

/// The device of the calling thread's current CUDA context.
Expected<DeviceInfo> currentDevice();

class Artifact {
public:
  /// Reads and validates `dir`/manifest.json and `dir`/kernels.cubin. Needs
  /// no GPU: the cubin is loaded into a context at the first launch there.
  static Expected<Artifact> load(const std::string &dir);
  /// The same from memory; `origin` names the artifact in messages.
  static Expected<Artifact> fromMemory(const std::string &manifestJson,
                                       std::vector<char> cubin,
                                       const std::string &origin);

  const Manifest &manifest() const;
  const std::string &origin() const;

  /// Checks the arguments and plans the launch for `device` (pure).
  Expected<LaunchPlan> plan(const ArgumentMap &args,
                            const DeviceInfo &device) const;

  /// Bytes of workspace a launch with these arguments needs on the current
  /// device; checks and prepares the launch as `launch` does.
  Expected<uint64_t> workspaceSize(const ArgumentMap &args) const;

  /// Checks every argument, then launches in order on `stream` (a CUstream;
  /// null is the default stream), in the current context, every kernel
  /// whose launch condition (`when`) holds and whose grid is not empty.
  /// The checks and the preparation are kept for recent argument sets
  /// (same context, pointers, dtypes, shapes and strides): a repeat only
  /// checks the workspace and enqueues (docs/runtime.md).
  Status launch(const ArgumentMap &args, void *stream,
                Workspace workspace = {}) const;

  struct Impl;

private:
  explicit Artifact(std::shared_ptr<Impl> impl) : impl(std::move(impl)) {}
  std::shared_ptr<Impl> impl;
};

} // namespace ssd::rt

#endif // SSD_RUNTIME_RUNTIME_H
