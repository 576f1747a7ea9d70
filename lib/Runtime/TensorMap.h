//===- TensorMap.h - TMA descriptors of tensor arguments --------*- C++ -*-===//
//
// Turns a manifest's TMA parameter and the caller's tensor into the
// arguments of cuTensorMapEncodeTiled (dimensions innermost first, byte
// strides of the outer dimensions), checking the hardware's rules first so
// that a bad tensor fails with its name rather than CUDA_ERROR_INVALID_VALUE.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_TENSORMAP_H
#define SSD_LIB_RUNTIME_TENSORMAP_H

#include "CudaDecls.h"
#include "ssd/Runtime/Manifest.h"
#include "ssd/Runtime/Plan.h"

namespace ssd::rt {

struct Driver;

struct TensorMapRequest {
  CUtensorMapDataType dataType;
  cuuint32_t rank = 0;
  void *address = nullptr;
  cuuint64_t globalDim[5] = {};
  cuuint64_t globalStrides[4] = {}; ///< Bytes, dimensions 1..rank-1.
  cuuint32_t boxDim[5] = {};
  cuuint32_t elementStrides[5] = {};
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2Promotion;
  CUtensorMapFloatOOBfill oobFill;
};

Expected<TensorMapRequest> makeTensorMapRequest(const TensorMapSpec &spec,
                                                const TensorSpec &tensor,
                                                const TensorArg &arg);

Expected<CUtensorMap> encodeTensorMap(const Driver &driver,
                                      const TensorMapRequest &request,
                                      const std::string &tensorName);

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_TENSORMAP_H
