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

#endif // SSD_LIB_RUNTIME_CUDADECLS_H
