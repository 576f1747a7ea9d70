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
#include <string>
#include <vector>

namespace ssd::rt {

/// cuLaunchKernel reads each parameter through a pointer, so every value has
/// its own bytes: 8-byte aligned, 64 for by-value TMA descriptors, packed
/// into one buffer (a prepared launch keeps its parameters).
class KernelParams {
public:
  void addBytes(const void *data, size_t size);
  template <typename T> void add(const T &value) {
    addBytes(&value, sizeof(T));
  }

  size_t count() const { return offsets.size(); }
  size_t sizeAt(size_t i) const { return sizes[i]; }
  const void *dataAt(size_t i) const {
    return reinterpret_cast<const unsigned char *>(storage.data()) + offsets[i];
  }
  /// The array to pass as kernelParams, valid while this object is
  /// unchanged (a prepared launch's parameters are shared and never are).
  std::vector<void *> pointers() const;

private:
  struct alignas(64) Block {
    unsigned char bytes[64];
  };
  std::vector<Block> storage;
  std::vector<size_t> offsets, sizes;
  size_t used = 0;
};

/// Where a kernel's code reads parameter i: cuFuncGetParamInfo's answer.
struct ParamPlacement {
  size_t offset = 0;
  size_t size = 0;
};

/// The parameters as one buffer in the kernel's own layout, for
/// CU_LAUNCH_PARAM_BUFFER_POINTER: the driver copies it whole instead of
/// reading each parameter through its own pointer.
class ParamBuffer {
public:
  const void *data() const { return storage.data(); }
  size_t size() const { return bytes; }

private:
  friend Expected<ParamBuffer> layOutParams(const KernelParams &,
                                            const std::vector<ParamPlacement> &,
                                            const std::string &);
  struct alignas(128) Block {
    unsigned char bytes[128];
  };
  std::vector<Block> storage;
  size_t bytes = 0;
};

/// How many parameters packKernelParams packs for kernel `k` of `manifest`
/// (a memref takes 3 + 2 x rank): how many a cubin's function built from it
/// takes.
size_t packedParamCount(const Manifest &manifest, const KernelSpec &k);

/// `params` placed as `layout` says; an error naming `where` when the
/// function takes another number of parameters or another size at some
/// index than the manifest's parameter list packs (the manifest does not
/// describe this cubin).
Expected<ParamBuffer> layOutParams(const KernelParams &params,
                                   const std::vector<ParamPlacement> &layout,
                                   const std::string &where);

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
