//===- CudaDecls.h - CUDA driver types, from cuda.h or not ------*- C++ -*-===//
//
// The runtime takes only types and constants from cuda.h; the functions come
// from the driver at run time (Driver.h). Where cuda.h is absent the build
// uses CudaFallback.h instead.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_CUDADECLS_H
#define SSD_LIB_RUNTIME_CUDADECLS_H

#include <cstdint>

#if SSD_RT_HAVE_CUDA_H
#include <cuda.h>
#else
#include "CudaFallback.h"
#endif

namespace ssd::rt {
// cuda.h's CU_LAUNCH_PARAM_{END,BUFFER_POINTER,BUFFER_SIZE}_AS_INT: macros
// there, so they cannot live in CudaFallback.h (CudaFallbackCheck.cpp
// compares these with cuda.h's).
constexpr uintptr_t kLaunchParamEnd = 0x00;
constexpr uintptr_t kLaunchParamBufferPointer = 0x01;
constexpr uintptr_t kLaunchParamBufferSize = 0x02;
} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_CUDADECLS_H
