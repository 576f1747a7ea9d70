//===- Params.h - Kernel parameter buffers ----------------------*- C++ -*-===//
//
// Builds the kernelParams array of one launch from the manifest's parameter
// layout: pointers, expanded memref descriptors, scalars and TMA descriptors.
// Pure (no driver calls) so the layout is unit-tested.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_PARAMS_H
#define SSD_LIB_RUNTIME_PARAMS_H

#include "CudaDecls.h"
#include "ssd/Runtime/Plan.h"

#include <cstddef>
#include <vector>

namespace ssd::rt {

/// cuLaunchKernel reads each parameter through a pointer, so every value has
/// its own slot; 128-byte alignment suits by-value TMA descriptors.
class KernelParams {
public:
  void addBytes(const void *data, size_t size);
  template <typename T> void add(const T &value) {
    addBytes(&value, sizeof(T));
  }

  size_t count() const { return slots.size(); }
  size_t sizeAt(size_t i) const { return slots[i].size; }
  const void *dataAt(size_t i) const { return slots[i].bytes; }
  /// The array to pass as kernelParams; valid until the next add.
  void **pointers();

private:
  struct alignas(128) Slot {
    unsigned char bytes[128];
    size_t size;
  };
  std::vector<Slot> slots;
  std::vector<void *> ptrs;
};

/// `tensorMaps[i]` is the encoded descriptor of parameter i when it is a
/// by-value TMA parameter; `workspaceBase` is the device address of the
/// workspace buffer.
Expected<KernelParams>
packKernelParams(const Manifest &manifest, const KernelLaunch &launch,
                 const ArgumentMap &args, const LaunchPlan &plan,
                 uint64_t workspaceBase,
                 const std::vector<CUtensorMap> &tensorMaps);

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_PARAMS_H
