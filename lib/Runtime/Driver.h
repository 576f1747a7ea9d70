//===- Driver.h - The CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// The runtime never links libcuda: it opens libcuda.so.1 on first use and
// resolves the entry points it needs. So it builds, loads and runs its tests
// on machines without a GPU, and fails with "CUDA driver not found" only
// when asked to touch one.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_DRIVER_H
#define SSD_LIB_RUNTIME_DRIVER_H

#include "CudaDecls.h"
#include "ssd/Runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace ssd::rt {

/// The driver API version whose signatures the table below uses.
constexpr int kDriverApiVersion = 12000;

struct Driver {
  void *library = nullptr;

  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*cuPointerGetAttributes)(unsigned int, CUpointer_attribute *,
                                     void **, CUdeviceptr);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                               void **);
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType,
                                     cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const cuuint32_t *,
                                     const cuuint32_t *, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion,
                                     CUtensorMapFloatOOBfill);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
  /// CUDA 12.4 and newer; null where the driver lacks it.
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *,
                                 size_t *) = nullptr;
  /// CUDA 12.0 and newer; null where the driver lacks it.
  CUresult (*cuCtxGetId)(CUcontext, unsigned long long *) = nullptr;

  /// "what: CUDA_ERROR_NAME: description" for a failed call.
  Status error(CUresult result, const std::string &what) const;
};

/// Opens the driver library `path`, resolves every entry point and calls
/// cuInit. Fails with a message starting "CUDA driver not found" when the
/// library cannot be opened.
Expected<std::unique_ptr<Driver>> loadDriver(const std::string &path);

/// The process-wide driver: libcuda.so.1, or $SSD_RT_CUDA_DRIVER when set.
/// Loaded once; a failure is remembered and returned again.
Expected<const Driver *> getDriver();

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_DRIVER_H
