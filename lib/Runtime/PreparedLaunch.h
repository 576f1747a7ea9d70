//===- PreparedLaunch.h - A launch with its host work done ------*- C++ -*-===//
//
// What Artifact::launch computes for a launch before it enqueues anything
// (TMA descriptors, packed parameters, in the function's layout where the
// driver gives it), kept whole so that a repeat of the same arguments only
// enqueues (LaunchCache.h), and the enqueueing of one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_PREPAREDLAUNCH_H
#define SSD_LIB_RUNTIME_PREPAREDLAUNCH_H

#include "Driver.h"
#include "Params.h"
#include "ssd/Runtime/Plan.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ssd::rt {

/// One kernel of a launch with everything the host computes for it done:
/// the TMA descriptors encoded and, once the workspace is known, the
/// parameters packed.
struct ReadyKernel {
  const KernelLaunch *launch = nullptr;
  CUfunction function = nullptr;
  std::string where;             // "kernel 'name' (i of n)", for errors.
  std::vector<CUtensorMap> maps; // Parallel to the kernel's params.
  /// The function's parameter layout; null where the driver cannot say.
  const std::vector<ParamPlacement> *layout = nullptr;
  KernelParams params;
  /// `params` in that layout, launched as one buffer.
  std::optional<ParamBuffer> buffer;
};

/// A launch's host work: the plan, and every kernel that runs with its
/// function and descriptors, its parameters packed for the workspace at
/// `packedFor` (none while the workspace is not known). Immutable once
/// cached; each ReadyKernel::launch points into `plan`.
struct PreparedLaunch {
  std::shared_ptr<const LaunchPlan> plan;
  std::vector<ReadyKernel> kernels;
  std::optional<uint64_t> packedFor;
};

/// Kernel `index` of `plan` with its TMA descriptors encoded.
Expected<ReadyKernel> prepareKernel(const Driver &d, const Manifest &m,
                                    const LaunchPlan &plan, size_t index,
                                    const ArgumentMap &args, CUfunction f);

/// `prepared` with every kernel's parameters packed for the workspace at
/// `base`; `args` are those it was prepared for (equal by LaunchKey).
Expected<std::shared_ptr<const PreparedLaunch>>
packFor(const PreparedLaunch &prepared, const Manifest &m,
        const ArgumentMap &args, uint64_t base);

/// Launches a prepared kernel on `stream`; a cluster shape travels as a
/// launch attribute, so the cubin need not carry it.
CUresult enqueueKernel(const Driver &d, const ReadyKernel &k, CUstream stream);

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_PREPAREDLAUNCH_H
