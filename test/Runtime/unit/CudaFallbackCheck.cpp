//===- CudaFallbackCheck.cpp - CudaFallback.h agrees with cuda.h ----------===//
//
// Built where cuda.h exists: the declarations used without it must match
// the real ones bit for bit, or runtimes built on machines without the CUDA
// toolkit would pass wrong values to the driver.
//
//===----------------------------------------------------------------------===//

#include "CudaDecls.h"
#include <cstddef>
#include <cstdint>
#include <cuda.h>

namespace fallback {
#include "CudaFallback.h"
} // namespace fallback

#define SSD_SAME(name)                                                         \
  static_assert(int(fallback::name) == int(::name),                            \
                #name " differs from cuda.h")

SSD_SAME(CUDA_SUCCESS);
SSD_SAME(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SSD_SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SSD_SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SSD_SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SSD_SAME(CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
SSD_SAME(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
SSD_SAME(CU_MEMORYTYPE_HOST);
SSD_SAME(CU_MEMORYTYPE_DEVICE);
SSD_SAME(CU_MEMORYTYPE_ARRAY);
SSD_SAME(CU_MEMORYTYPE_UNIFIED);
SSD_SAME(CU_STREAM_CAPTURE_STATUS_NONE);
SSD_SAME(CU_STREAM_CAPTURE_STATUS_ACTIVE);
SSD_SAME(CU_STREAM_CAPTURE_STATUS_INVALIDATED);
SSD_SAME(CU_STREAM_CAPTURE_MODE_GLOBAL);
SSD_SAME(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
SSD_SAME(CU_STREAM_CAPTURE_MODE_RELAXED);
SSD_SAME(CU_STREAM_DEFAULT);
SSD_SAME(CU_STREAM_NON_BLOCKING);
SSD_SAME(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SSD_SAME(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
SSD_SAME(CU_GET_PROC_ADDRESS_DEFAULT);
SSD_SAME(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_UINT8);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_INT32);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_INT64);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
SSD_SAME(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
SSD_SAME(CU_TENSOR_MAP_INTERLEAVE_NONE);
SSD_SAME(CU_TENSOR_MAP_INTERLEAVE_16B);
SSD_SAME(CU_TENSOR_MAP_INTERLEAVE_32B);
SSD_SAME(CU_TENSOR_MAP_SWIZZLE_NONE);
SSD_SAME(CU_TENSOR_MAP_SWIZZLE_32B);
SSD_SAME(CU_TENSOR_MAP_SWIZZLE_64B);
SSD_SAME(CU_TENSOR_MAP_SWIZZLE_128B);
SSD_SAME(CU_TENSOR_MAP_L2_PROMOTION_NONE);
SSD_SAME(CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
SSD_SAME(CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SSD_SAME(CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
SSD_SAME(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
SSD_SAME(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);

static_assert(sizeof(fallback::CUtensorMap) == sizeof(::CUtensorMap), "");
static_assert(sizeof(fallback::CUlaunchAttribute) ==
                  sizeof(::CUlaunchAttribute),
              "");
static_assert(offsetof(fallback::CUlaunchAttribute, value) ==
                  offsetof(::CUlaunchAttribute, value),
              "");
static_assert(sizeof(fallback::CUlaunchConfig) == sizeof(::CUlaunchConfig), "");
static_assert(offsetof(fallback::CUlaunchConfig, hStream) ==
                  offsetof(::CUlaunchConfig, hStream),
              "");
static_assert(offsetof(fallback::CUlaunchConfig, numAttrs) ==
                  offsetof(::CUlaunchConfig, numAttrs),
              "");
static_assert(sizeof(fallback::CUdeviceptr) == sizeof(::CUdeviceptr), "");
static_assert(sizeof(fallback::CUresult) == sizeof(::CUresult), "");
SSD_SAME(CUDA_ERROR_INVALID_VALUE);
static_assert(ssd::rt::kLaunchParamEnd == CU_LAUNCH_PARAM_END_AS_INT, "");
static_assert(ssd::rt::kLaunchParamBufferPointer ==
                  CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
              "");
static_assert(ssd::rt::kLaunchParamBufferSize ==
                  CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
              "");
