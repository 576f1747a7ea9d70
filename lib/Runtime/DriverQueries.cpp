//===- DriverQueries.cpp - What the runtime asks the driver ---------------===//

#include "DriverQueries.h"

using namespace ssd::rt;

Expected<CurrentContext> ssd::rt::currentContext(const Driver &d) {
  CurrentContext current;
  CUresult r = d.cuCtxGetCurrent(&current.context);
  if (r != CUDA_SUCCESS)
    return d.error(r, "cuCtxGetCurrent failed");
  if (!current.context)
    return Status::error(
        "no current CUDA context on this thread; make one current first "
        "(PyTorch does on first CUDA use; with the driver API, "
        "cuDevicePrimaryCtxRetain and cuCtxSetCurrent)");
  if ((r = d.cuCtxGetDevice(&current.device)) != CUDA_SUCCESS)
    return d.error(r, "cuCtxGetDevice failed");
  // A driver that cannot say leaves the handle alone to tell contexts
  // apart (as before CUDA 12.0); the launch itself does not need the id.
  unsigned long long id = 0;
  if (d.cuCtxGetId && d.cuCtxGetId(current.context, &id) == CUDA_SUCCESS)
    current.id = id;
  return current;
}

Expected<DeviceInfo> ssd::rt::queryDevice(const Driver &d) {
  Expected<CurrentContext> current = currentContext(d);
  if (!current.ok())
    return current.status();
  CUdevice dev = current->device;
  DeviceInfo info;
  info.ordinal = int(dev);
  int v = 0;
  auto attr = [&](CUdevice_attribute a, const char *what) -> Status {
    CUresult res = d.cuDeviceGetAttribute(&v, a, dev);
    if (res != CUDA_SUCCESS)
      return d.error(res,
                     std::string("cuDeviceGetAttribute(") + what + ") failed");
    return Status::success();
  };
  SSD_RT_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "major"));
  info.computeMajor = v;
  SSD_RT_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "minor"));
  info.computeMinor = v;
  SSD_RT_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count"));
  info.smCount = v;
  SSD_RT_RETURN_IF_ERROR(attr(
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory"));
  info.maxSharedPerBlockOptin = v;
  return info;
}

PointerQuery ssd::rt::driverPointerQuery(const Driver &d) {
  return [&d](const void *ptr) -> Expected<PointerInfo> {
    // cuPointerGetAttributes, unlike cuPointerGetAttribute, succeeds on
    // pointers CUDA does not know and leaves the memory type 0.
    unsigned int memoryType = 0;
    int ordinal = -1;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[] = {&memoryType, &ordinal};
    CUresult r = d.cuPointerGetAttributes(
        2, attrs, data, CUdeviceptr(reinterpret_cast<uintptr_t>(ptr)));
    if (r != CUDA_SUCCESS)
      return d.error(r, "cuPointerGetAttributes failed");
    PointerInfo info;
    info.isDeviceMemory = memoryType == CU_MEMORYTYPE_DEVICE ||
                          memoryType == CU_MEMORYTYPE_UNIFIED;
    info.device = ordinal;
    return info;
  };
}

std::optional<std::vector<ParamPlacement>>
ssd::rt::queryParamLayout(const Driver &d, CUfunction f, size_t count) {
  if (!d.cuFuncGetParamInfo)
    return std::nullopt;
  std::vector<ParamPlacement> layout;
  for (size_t i = 0; i < count; ++i) {
    ParamPlacement p;
    CUresult r = d.cuFuncGetParamInfo(f, i, &p.offset, &p.size);
    if (r == CUDA_ERROR_INVALID_VALUE)
      break; // Past its last parameter: layOutParams reports the count.
    if (r != CUDA_SUCCESS)
      return std::nullopt;
    layout.push_back(p);
  }
  return layout;
}
