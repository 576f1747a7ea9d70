//===- Driver.cpp - The CUDA driver, loaded at run time -------------------===//

#include "Driver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace ssd::rt;

Status Driver::error(CUresult result, const std::string &what) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUresult";
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = "no description";
  return Status::error(what + ": " + name + " (" + std::to_string(int(result)) +
                       "): " + text);
}

namespace {
// cuGetProcAddress as of CUDA 12.5 (_v2, with a query result) and before.
using GetProcAddressV2 = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      int *);
using GetProcAddressV1 = CUresult (*)(const char *, void **, int, cuuint64_t);

/// Resolves entry points by their API name at kDriverApiVersion, so that
/// e.g. "cuMemcpyHtoDAsync" yields the variant with the signature above.
class Resolver {
public:
  explicit Resolver(void *library) : library(library) {
    v2 = reinterpret_cast<GetProcAddressV2>(
        dlsym(library, "cuGetProcAddress_v2"));
    if (!v2)
      v1 = reinterpret_cast<GetProcAddressV1>(
          dlsym(library, "cuGetProcAddress"));
  }

  bool usable() const { return v1 || v2; }

  template <typename Fn>
  Status resolve(const char *name, Fn &out, int version = kDriverApiVersion) {
    void *fn = nullptr;
    CUresult r;
    if (v2) {
      int found = 0;
      r = v2(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    } else {
      r = v1(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT);
    }
    if (r != CUDA_SUCCESS || !fn)
      return Status::error("the CUDA driver lacks " + std::string(name) +
                           " (cuGetProcAddress returned " +
                           std::to_string(int(r)) +
                           "); the runtime needs a CUDA 12 or newer driver");
    out = reinterpret_cast<Fn>(fn);
    return Status::success();
  }

private:
  void *library;
  GetProcAddressV2 v2 = nullptr;
  GetProcAddressV1 v1 = nullptr;
};

Status resolveAll(Resolver &r, Driver &d) {
#define SSD_RT_RESOLVE(name) SSD_RT_RETURN_IF_ERROR(r.resolve(#name, d.name))
  SSD_RT_RESOLVE(cuInit);
  SSD_RT_RESOLVE(cuDriverGetVersion);
  SSD_RT_RESOLVE(cuGetErrorName);
  SSD_RT_RESOLVE(cuGetErrorString);
  SSD_RT_RESOLVE(cuCtxGetCurrent);
  SSD_RT_RESOLVE(cuCtxGetDevice);
  SSD_RT_RESOLVE(cuDeviceGetAttribute);
  SSD_RT_RESOLVE(cuPointerGetAttributes);
  SSD_RT_RESOLVE(cuModuleLoadData);
  SSD_RT_RESOLVE(cuModuleUnload);
  SSD_RT_RESOLVE(cuModuleGetFunction);
  SSD_RT_RESOLVE(cuFuncSetAttribute);
  SSD_RT_RESOLVE(cuLaunchKernel);
  SSD_RT_RESOLVE(cuLaunchKernelEx);
  SSD_RT_RESOLVE(cuTensorMapEncodeTiled);
  SSD_RT_RESOLVE(cuMemAllocAsync);
  SSD_RT_RESOLVE(cuMemFreeAsync);
  SSD_RT_RESOLVE(cuMemsetD8Async);
  SSD_RT_RESOLVE(cuMemcpyHtoDAsync);
  SSD_RT_RESOLVE(cuStreamIsCapturing);
#undef SSD_RT_RESOLVE
  // Optional: without it, launches pass their parameters one by one.
  if (!r.resolve("cuFuncGetParamInfo", d.cuFuncGetParamInfo, 12040).ok())
    d.cuFuncGetParamInfo = nullptr;
  // Optional: without it, a context is known by its handle alone.
  if (!r.resolve("cuCtxGetId", d.cuCtxGetId, 12000).ok())
    d.cuCtxGetId = nullptr;
  return Status::success();
}
} // namespace

Expected<std::unique_ptr<Driver>> ssd::rt::loadDriver(const std::string &path) {
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return Status::error("CUDA driver not found: cannot load " + path + " (" +
                         (why ? why : "unknown reason") +
                         "); running kernels needs an NVIDIA GPU and driver");
  }
  auto driver = std::make_unique<Driver>();
  driver->library = library;
  Resolver resolver(library);
  Status s = resolver.usable()
                 ? resolveAll(resolver, *driver)
                 : Status::error("CUDA driver at " + path +
                                 " has no cuGetProcAddress; the runtime needs "
                                 "a CUDA 12 or newer driver");
  if (s.ok()) {
    CUresult r = driver->cuInit(0);
    if (r != CUDA_SUCCESS)
      s = driver->error(r, "cuInit failed");
  }
  if (!s.ok()) {
    dlclose(library);
    return s;
  }
  return driver;
}

Expected<const Driver *> ssd::rt::getDriver() {
  // Kept for the life of the process: modules and kernels refer to it.
  static std::once_flag once;
  static std::unique_ptr<Driver> driver;
  static Status failure = Status::success();
  std::call_once(once, [] {
    const char *env = std::getenv("SSD_RT_CUDA_DRIVER");
    Expected<std::unique_ptr<Driver>> d =
        loadDriver(env && *env ? env : "libcuda.so.1");
    if (d.ok())
      driver = d.take();
    else
      failure = d.status();
  });
  if (!driver)
    return failure;
  return static_cast<const Driver *>(driver.get());
}
