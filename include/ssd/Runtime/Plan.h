//===- Plan.h - Checking arguments and planning a launch --------*- C++ -*-===//
//
// The part of a launch that needs no GPU: check the caller's tensors against
// the manifest, bind the problem sizes (b, L, ...), and compute every
// kernel's geometry and the workspace layout. Artifact::launch runs this
// first and only then talks to the driver; tests run it with fake tensors.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_PLAN_H
#define SSD_RUNTIME_PLAN_H

#include "ssd/Runtime/DType.h"
#include "ssd/Runtime/Manifest.h"
#include "ssd/Runtime/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ssd::rt {

/// A tensor in device memory, described the way frameworks do.
struct TensorArg {
  void *devicePtr = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Strides in elements, outermost first; empty means contiguous.
  std::vector<int64_t> strides;
  /// The CUDA device ordinal the tensor lives on.
  int device = 0;
};

/// Tensor arguments by manifest name ("x", "dt", ...).
using ArgumentMap = std::map<std::string, TensorArg, std::less<>>;

/// What a plan needs to know about the device that will run it.
struct DeviceInfo {
  int ordinal = 0;
  int computeMajor = 9;
  int computeMinor = 0;
  int64_t smCount = 132;
  int64_t maxSharedPerBlockOptin = 232448;
};

/// Where the driver says a pointer lives.
struct PointerInfo {
  bool isDeviceMemory = false; ///< Device or managed memory.
  int device = -1;
};
/// Asks the driver about a pointer; tests pass a fake.
using PointerQuery = std::function<Expected<PointerInfo>(const void *)>;

struct WorkspaceSlot {
  std::string name;
  uint64_t offset = 0; ///< From the start of the workspace buffer.
  uint64_t bytes = 0;
  bool zeroInit = false;
  std::vector<int64_t> shape; ///< Evaluated, when the manifest gives one.
};

struct KernelLaunch {
  const KernelSpec *spec = nullptr;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0;
  /// Offsets in the workspace of the global-memory TMA descriptors, one per
  /// parameter (unused entries are 0).
  std::vector<uint64_t> descriptorOffsets;
  /// Evaluated values of the scalar parameters, one per parameter.
  std::vector<int64_t> scalarValues;
  /// The manifest's launch condition (`when`) holds for these arguments.
  bool selected = true;
  /// A kernel whose grid is empty has no work (e.g. L = 0).
  bool empty() const { return grid[0] * grid[1] * grid[2] == 0; }
  /// Launched: selected by its condition, with a non-empty grid.
  bool runs() const { return selected && !empty(); }
};

/// Bytes [offset, offset + bytes) of the workspace.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool operator==(const ByteRange &other) const {
    return offset == other.offset && bytes == other.bytes;
  }
};

struct LaunchPlan {
  SymbolTable symbols;
  std::vector<WorkspaceSlot> workspace;
  /// What to zero before the kernels: the zero_init slots, those next to
  /// each other (nothing but alignment padding between) as one range, so
  /// that a launch issues one memset per run of them.
  std::vector<ByteRange> zeroRanges;
  uint64_t workspaceBytes = 0;
  std::vector<KernelLaunch> kernels;

  const WorkspaceSlot *findWorkspace(const std::string &name) const;
};

/// Checks every tensor argument against the manifest: presence, dtype, rank,
/// every dimension (binding symbols such as b and L consistently), strides,
/// alignment, device, and that outputs overlap no other tensor. Returns the
/// bound symbols, including derived ones, constants and num_sms.
Expected<SymbolTable>
checkArguments(const Manifest &manifest, const ArgumentMap &args,
               const DeviceInfo &device,
               const PointerQuery &queryPointer = nullptr);

/// checkArguments, then the geometry of every kernel, the workspace layout
/// and the device limits (target, shared memory, cluster divisibility).
Expected<LaunchPlan> planLaunch(const Manifest &manifest,
                                const ArgumentMap &args,
                                const DeviceInfo &device,
                                const PointerQuery &queryPointer = nullptr);

/// "[b, L, 80, 64]" or "[2, 128, 80, 64]": for messages.
std::string formatShape(const std::vector<int64_t> &shape);
std::string formatShape(const std::vector<Expr> &shape);

} // namespace ssd::rt

#endif // SSD_RUNTIME_PLAN_H
