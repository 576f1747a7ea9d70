//===- HostBuffer.h - host data behind a memref argument --------*- C++ -*-===//
#ifndef SSD_TOOLS_SSDRUN_HOSTBUFFER_H
#define SSD_TOOLS_SSDRUN_HOSTBUFFER_H

#include "CaseModule.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace ssd {

/// Owns the elements of one memref argument, in the argument's element type,
/// and a ranked memref descriptor over them with the layout MLIR's C
/// interface expects ({allocated, aligned, offset, sizes[r], strides[r]}).
class HostBuffer {
public:
  explicit HostBuffer(const KernelArg &arg);

  /// Stores float32 values, rounding to bf16/f16 when that is the element
  /// type. Only for float buffers; the size must match.
  void store(llvm::ArrayRef<float> values);
  /// Stores int32 values. Only for I32 buffers.
  void store(llvm::ArrayRef<int32_t> values);
  /// The elements widened to float32. Only for float buffers.
  std::vector<float> load() const;

  /// The memref descriptor to pass by pointer to the C interface.
  void *descriptor() { return desc.data(); }
  const KernelArg &arg() const { return karg; }

private:
  KernelArg karg;
  int64_t count;
  std::vector<uint32_t> words; // 4-byte aligned element storage
  std::vector<int64_t> desc;
};

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_HOSTBUFFER_H
