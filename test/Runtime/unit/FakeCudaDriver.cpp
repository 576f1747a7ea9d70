//===- FakeCudaDriver.cpp - A CUDA driver that records its calls ---------===//
//
// Built as a shared library that the runtime opens in place of libcuda
// (SSD_RT_CUDA_DRIVER), so that Artifact::launch runs end to end without a
// GPU: each entry point succeeds, and records what a test asserts on (how
// often the host work ran, which descriptors and parameters a launch got).
// Kernels never run; device memory is never touched.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include <cstring>
#include <string>

using namespace ssd::rt::fake;

namespace {

FakeCudaState state;

// Handles are addresses of these; the runtime only compares and passes them.
char moduleTag, functionTags[16];
std::vector<std::string> functionNames; // Of functionTags[i].

const std::string &nameOf(CUfunction f) {
  return functionNames[reinterpret_cast<char *>(f) - functionTags];
}

/// Offsets at the natural alignment of each size (64 for descriptors).
std::vector<size_t> offsetsOf(const std::vector<size_t> &sizes) {
  std::vector<size_t> offsets;
  size_t at = 0;
  for (size_t size : sizes) {
    size_t align = size >= 64 ? 64 : size;
    at = (at + align - 1) / align * align;
    offsets.push_back(at);
    at += size;
  }
  return offsets;
}

CUresult fakeInit(unsigned int) { return CUDA_SUCCESS; }
CUresult fakeDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorName(CUresult, const char **name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorString(CUresult, const char **text) {
  *text = "failure injected by the fake driver";
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetCurrent(CUcontext *ctx) {
  *ctx = reinterpret_cast<CUcontext>(state.context);
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetId(CUcontext, unsigned long long *id) {
  ++state.contextIdQueries;
  *id = state.contextId;
  return CUDA_SUCCESS;
}
CUresult fakeCtxGetDevice(CUdevice *dev) {
  *dev = state.device;
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  ++state.deviceAttributeQueries;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = 232448;
    break;
  default:
    *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult fakePointerGetAttributes(unsigned int count,
                                  CUpointer_attribute *attrs, void **data,
                                  CUdeviceptr) {
  ++state.pointerQueries;
  for (unsigned i = 0; i < count; ++i) {
    if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
      *static_cast<unsigned int *>(data[i]) = CU_MEMORYTYPE_DEVICE;
    else if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
      *static_cast<int *>(data[i]) = state.device;
  }
  return CUDA_SUCCESS;
}
CUresult fakeModuleLoadData(CUmodule *m, const void *) {
  ++state.moduleLoads;
  *m = reinterpret_cast<CUmodule>(&moduleTag);
  return CUDA_SUCCESS;
}
CUresult fakeModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult fakeModuleGetFunction(CUfunction *f, CUmodule, const char *name) {
  size_t i = 0;
  while (i < functionNames.size() && functionNames[i] != name)
    ++i;
  if (i == functionNames.size()) {
    if (i == sizeof(functionTags))
      return CUresult(500);
    functionNames.push_back(name);
  }
  *f = reinterpret_cast<CUfunction>(&functionTags[i]);
  return CUDA_SUCCESS;
}
CUresult fakeFuncGetParamInfo(CUfunction f, size_t index, size_t *offset,
                              size_t *size) {
  auto it = state.paramSizes.find(nameOf(f));
  if (it == state.paramSizes.end())
    return CUresult(801); // CUDA_ERROR_NOT_SUPPORTED
  if (index >= it->second.size()) {
    ++state.paramQueriesPastTheEnd;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *offset = offsetsOf(it->second)[index];
  *size = it->second[index];
  return CUDA_SUCCESS;
}
CUresult fakeFuncSetAttribute(CUfunction, CUfunction_attribute a, int value) {
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    ++state.sharedOptIns;
    state.lastSharedOptIn = value;
  }
  return CUDA_SUCCESS;
}

/// Keeps the launch's parameters: 8 bytes of each (a TMA descriptor's first
/// 8 bytes are, in this fake, its global address), from the pointer array
/// or from the one buffer of `extra` at the function's layout.
CUresult recordLaunch(CUfunction f, void **params, void **extra) {
  ++state.launches;
  state.lastParams.clear();
  if ((params == nullptr) == (extra == nullptr))
    return CUDA_ERROR_INVALID_VALUE; // Exactly one of them, as the driver asks.
  const unsigned char *buffer = nullptr;
  size_t bufferSize = 0;
  for (void **e = extra; e && *e; e += 2) {
    if (*e == reinterpret_cast<void *>(ssd::rt::kLaunchParamBufferPointer))
      buffer = static_cast<const unsigned char *>(e[1]);
    else if (*e == reinterpret_cast<void *>(ssd::rt::kLaunchParamBufferSize))
      bufferSize = *static_cast<size_t *>(e[1]);
    else
      return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<size_t> offsets;
  if (extra) {
    ++state.bufferLaunches;
    auto it = state.paramSizes.find(nameOf(f));
    if (!buffer || it == state.paramSizes.end())
      return CUDA_ERROR_INVALID_VALUE;
    offsets = offsetsOf(it->second);
    if (bufferSize < offsets.back() + it->second.back())
      return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < state.paramsToRecord; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, extra ? buffer + offsets[i] : params[i], sizeof(v));
    state.lastParams.push_back(v);
  }
  return state.failLaunches ? CUresult(1) : CUDA_SUCCESS;
}
CUresult fakeLaunchKernel(CUfunction f, unsigned, unsigned, unsigned, unsigned,
                          unsigned, unsigned, unsigned, CUstream, void **params,
                          void **extra) {
  return recordLaunch(f, params, extra);
}
CUresult fakeLaunchKernelEx(const CUlaunchConfig *, CUfunction f, void **params,
                            void **extra) {
  return recordLaunch(f, params, extra);
}
CUresult fakeTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType,
                                  cuuint32_t, void *address, const cuuint64_t *,
                                  const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill) {
  ++state.tensorMapEncodes;
  std::memset(map, 0, sizeof(*map));
  uint64_t a = reinterpret_cast<uintptr_t>(address);
  std::memcpy(map, &a, sizeof(a));
  return CUDA_SUCCESS;
}
CUresult fakeMemAllocAsync(CUdeviceptr *p, size_t, CUstream) {
  *p = state.nextAllocation;
  return CUDA_SUCCESS;
}
CUresult fakeMemFreeAsync(CUdeviceptr, CUstream) { return CUDA_SUCCESS; }
CUresult fakeMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) {
  ++state.memsets;
  return CUDA_SUCCESS;
}
CUresult fakeMemcpyHtoDAsync(CUdeviceptr, const void *, size_t, CUstream) {
  ++state.descriptorCopies;
  return CUDA_SUCCESS;
}
CUresult fakeStreamIsCapturing(CUstream, CUstreamCaptureStatus *s) {
  *s = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

struct Entry {
  const char *name;
  void *fn;
};

#define SSD_FAKE(api, impl)                                                    \
  { #api, reinterpret_cast < void *>(&impl) }
const Entry kEntries[] = {
    SSD_FAKE(cuInit, fakeInit),
    SSD_FAKE(cuDriverGetVersion, fakeDriverGetVersion),
    SSD_FAKE(cuGetErrorName, fakeGetErrorName),
    SSD_FAKE(cuGetErrorString, fakeGetErrorString),
    SSD_FAKE(cuCtxGetCurrent, fakeCtxGetCurrent),
    SSD_FAKE(cuCtxGetDevice, fakeCtxGetDevice),
    SSD_FAKE(cuCtxGetId, fakeCtxGetId),
    SSD_FAKE(cuDeviceGetAttribute, fakeDeviceGetAttribute),
    SSD_FAKE(cuPointerGetAttributes, fakePointerGetAttributes),
    SSD_FAKE(cuModuleLoadData, fakeModuleLoadData),
    SSD_FAKE(cuModuleUnload, fakeModuleUnload),
    SSD_FAKE(cuModuleGetFunction, fakeModuleGetFunction),
    SSD_FAKE(cuFuncSetAttribute, fakeFuncSetAttribute),
    SSD_FAKE(cuLaunchKernel, fakeLaunchKernel),
    SSD_FAKE(cuLaunchKernelEx, fakeLaunchKernelEx),
    SSD_FAKE(cuTensorMapEncodeTiled, fakeTensorMapEncodeTiled),
    SSD_FAKE(cuMemAllocAsync, fakeMemAllocAsync),
    SSD_FAKE(cuMemFreeAsync, fakeMemFreeAsync),
    SSD_FAKE(cuMemsetD8Async, fakeMemsetD8Async),
    SSD_FAKE(cuMemcpyHtoDAsync, fakeMemcpyHtoDAsync),
    SSD_FAKE(cuStreamIsCapturing, fakeStreamIsCapturing),
    SSD_FAKE(cuFuncGetParamInfo, fakeFuncGetParamInfo),
};
#undef SSD_FAKE

} // namespace

extern "C" {

/// The one symbol the runtime looks up by name; everything else comes
/// through it, as from the real driver.
CUresult cuGetProcAddress_v2(const char *name, void **fn, int, cuuint64_t,
                             int *found) {
  for (const Entry &e : kEntries)
    if (std::strcmp(e.name, name) == 0) {
      *fn = e.fn;
      if (found)
        *found = 1;
      return CUDA_SUCCESS;
    }
  *fn = nullptr;
  if (found)
    *found = 0;
  return CUresult(500); // CUDA_ERROR_NOT_FOUND
}

FakeCudaState *ssdFakeCudaState() { return &state; }

} // extern "C"
