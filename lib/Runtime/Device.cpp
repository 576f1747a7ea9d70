//===- Device.cpp - Host-side CUDA helpers for tools and benchmarks -------===//
//
// The entry points here are looked up by their exported (versioned) names in
// the driver library the runtime already opened.
//
//===----------------------------------------------------------------------===//
#include "ssd/Runtime/Device.h"

#include "Driver.h"

#include <dlfcn.h>
#include <mutex>

using namespace ssd::rt;

namespace {
using EventHandle = struct EventHandle_st *;

struct DeviceApi {
  const Driver *driver = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuEventCreate)(EventHandle *, unsigned);
  CUresult (*cuEventDestroy)(EventHandle);
  CUresult (*cuEventRecord)(EventHandle, CUstream);
  CUresult (*cuEventSynchronize)(EventHandle);
  CUresult (*cuEventElapsedTime)(float *, EventHandle, EventHandle);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

template <typename Fn>
Status lookup(void *library, const char *name, Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
  if (!out)
    return Status::error(std::string("the CUDA driver lacks ") + name);
  return Status::success();
}

Expected<const DeviceApi *> api() {
  static std::once_flag once;
  static DeviceApi table;
  static Status failure = Status::success();
  std::call_once(once, [] {
    Expected<const Driver *> d = getDriver();
    if (!d.ok()) {
      failure = d.status();
      return;
    }
    table.driver = *d;
    void *lib = (*d)->library;
    Status s = Status::success();
    auto get = [&](const char *name, auto &fn) {
      if (s.ok())
        s = lookup(lib, name, fn);
    };
    get("cuDeviceGet", table.cuDeviceGet);
    get("cuDeviceGetName", table.cuDeviceGetName);
    get("cuDevicePrimaryCtxRetain", table.cuDevicePrimaryCtxRetain);
    get("cuCtxSetCurrent", table.cuCtxSetCurrent);
    get("cuCtxSynchronize", table.cuCtxSynchronize);
    get("cuMemAlloc_v2", table.cuMemAlloc);
    get("cuMemFree_v2", table.cuMemFree);
    get("cuMemcpyHtoD_v2", table.cuMemcpyHtoD);
    get("cuMemcpyDtoH_v2", table.cuMemcpyDtoH);
    get("cuMemsetD8_v2", table.cuMemsetD8);
    get("cuEventCreate", table.cuEventCreate);
    get("cuEventDestroy_v2", table.cuEventDestroy);
    get("cuEventRecord", table.cuEventRecord);
    get("cuEventSynchronize", table.cuEventSynchronize);
    get("cuEventElapsedTime", table.cuEventElapsedTime);
    get("cuStreamCreate", table.cuStreamCreate);
    get("cuStreamDestroy_v2", table.cuStreamDestroy);
    get("cuStreamBeginCapture_v2", table.cuStreamBeginCapture);
    get("cuStreamEndCapture", table.cuStreamEndCapture);
    get("cuGraphInstantiateWithFlags", table.cuGraphInstantiateWithFlags);
    get("cuGraphLaunch", table.cuGraphLaunch);
    get("cuGraphExecDestroy", table.cuGraphExecDestroy);
    get("cuGraphDestroy", table.cuGraphDestroy);
    failure = s;
  });
  if (!failure.ok())
    return failure;
  return static_cast<const DeviceApi *>(&table);
}

/// Runs `call` on the table; failures read "what: CUDA_ERROR_...".
template <typename F> Status call(const char *what, F &&fn) {
  Expected<const DeviceApi *> a = api();
  if (!a.ok())
    return a.status();
  CUresult r = fn(**a);
  if (r != CUDA_SUCCESS)
    return (*a)->driver->error(r, what);
  return Status::success();
}

CUdeviceptr dptr(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }
} // namespace

Status ssd::rt::usePrimaryContext(int device) {
  return call("making the primary context current", [&](const DeviceApi &a) {
    CUdevice dev;
    CUcontext ctx;
    CUresult r = a.cuDeviceGet(&dev, device);
    if (r == CUDA_SUCCESS)
      r = a.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
      r = a.cuCtxSetCurrent(ctx);
    return r;
  });
}

Expected<std::string> ssd::rt::currentDeviceName() {
  char name[256] = {0};
  Status s = call("cuDeviceGetName", [&](const DeviceApi &a) {
    CUdevice dev;
    CUresult r = a.driver->cuCtxGetDevice(&dev);
    return r == CUDA_SUCCESS ? a.cuDeviceGetName(name, sizeof(name) - 1, dev)
                             : r;
  });
  if (!s.ok())
    return s;
  return std::string(name);
}

Expected<void *> ssd::rt::deviceAlloc(size_t bytes) {
  if (bytes == 0)
    return static_cast<void *>(nullptr);
  CUdeviceptr p = 0;
  Status s = call("cuMemAlloc", [&](const DeviceApi &a) {
    return a.cuMemAlloc(&p, bytes);
  });
  if (!s.ok())
    return Status::error(s.message() + " (" + std::to_string(bytes) +
                         " bytes)");
  return reinterpret_cast<void *>(p);
}

void ssd::rt::deviceFree(void *ptr) {
  if (ptr)
    (void)call("cuMemFree",
               [&](const DeviceApi &a) { return a.cuMemFree(dptr(ptr)); });
}

Status ssd::rt::copyToDevice(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return Status::success();
  return call("cuMemcpyHtoD", [&](const DeviceApi &a) {
    return a.cuMemcpyHtoD(dptr(dst), src, bytes);
  });
}

Status ssd::rt::copyToHost(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return Status::success();
  return call("cuMemcpyDtoH", [&](const DeviceApi &a) {
    return a.cuMemcpyDtoH(dst, dptr(src), bytes);
  });
}

Status ssd::rt::deviceMemset(void *dst, uint8_t value, size_t bytes) {
  if (!bytes)
    return Status::success();
  return call("cuMemsetD8", [&](const DeviceApi &a) {
    return a.cuMemsetD8(dptr(dst), value, bytes);
  });
}

Status ssd::rt::deviceSynchronize() {
  return call("cuCtxSynchronize",
              [&](const DeviceApi &a) { return a.cuCtxSynchronize(); });
}

EventTimer::EventTimer() = default;

EventTimer::~EventTimer() {
  for (void *e : {begin, end})
    if (e)
      (void)call("cuEventDestroy", [&](const DeviceApi &a) {
        return a.cuEventDestroy(static_cast<EventHandle>(e));
      });
}

Status EventTimer::init() {
  if (begin)
    return Status::success();
  return call("cuEventCreate", [&](const DeviceApi &a) {
    EventHandle b = nullptr, e = nullptr;
    CUresult r = a.cuEventCreate(&b, 0);
    if (r == CUDA_SUCCESS)
      r = a.cuEventCreate(&e, 0);
    begin = b;
    end = e;
    return r;
  });
}

Status EventTimer::start(void *stream) {
  return call("cuEventRecord", [&](const DeviceApi &a) {
    return a.cuEventRecord(static_cast<EventHandle>(begin),
                           static_cast<CUstream>(stream));
  });
}

Status EventTimer::stop(void *stream) {
  return call("cuEventRecord", [&](const DeviceApi &a) {
    return a.cuEventRecord(static_cast<EventHandle>(end),
                           static_cast<CUstream>(stream));
  });
}

Expected<float> EventTimer::elapsedMs() {
  float ms = 0;
  Status s = call("cuEventElapsedTime", [&](const DeviceApi &a) {
    CUresult r = a.cuEventSynchronize(static_cast<EventHandle>(end));
    return r == CUDA_SUCCESS
               ? a.cuEventElapsedTime(&ms, static_cast<EventHandle>(begin),
                                      static_cast<EventHandle>(end))
               : r;
  });
  if (!s.ok())
    return s;
  return ms;
}

GraphReplay::GraphReplay() = default;

GraphReplay::~GraphReplay() {
  for (void *x : execs)
    (void)call("cuGraphExecDestroy", [&](const DeviceApi &a) {
      return a.cuGraphExecDestroy(static_cast<CUgraphExec>(x));
    });
  for (void *g : graphs)
    (void)call("cuGraphDestroy", [&](const DeviceApi &a) {
      return a.cuGraphDestroy(static_cast<CUgraph>(g));
    });
  if (streamHandle)
    (void)call("cuStreamDestroy", [&](const DeviceApi &a) {
      return a.cuStreamDestroy(static_cast<CUstream>(streamHandle));
    });
}

Status GraphReplay::init() {
  if (streamHandle)
    return Status::success();
  // Capture needs a stream other than the legacy default one.
  return call("cuStreamCreate", [&](const DeviceApi &a) {
    CUstream s = nullptr;
    CUresult r = a.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    streamHandle = s;
    return r;
  });
}

Status GraphReplay::record(const std::function<Status(void *stream)> &enqueue) {
  if (!streamHandle)
    return Status::error("GraphReplay::record before init");
  CUstream s = static_cast<CUstream>(streamHandle);
  SSD_RT_RETURN_IF_ERROR(call("cuStreamBeginCapture", [&](const DeviceApi &a) {
    return a.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }));
  Status enqueued = enqueue(streamHandle);
  // End the capture whatever happened, so that the stream stays usable.
  CUgraph graph = nullptr;
  Status ended = call("cuStreamEndCapture", [&](const DeviceApi &a) {
    return a.cuStreamEndCapture(s, &graph);
  });
  if (graph)
    graphs.push_back(graph);
  if (!enqueued.ok())
    return enqueued.withContext("recording a graph");
  SSD_RT_RETURN_IF_ERROR(ended);
  CUgraphExec exec = nullptr;
  SSD_RT_RETURN_IF_ERROR(
      call("cuGraphInstantiateWithFlags", [&](const DeviceApi &a) {
        return a.cuGraphInstantiateWithFlags(&exec, graph, 0);
      }));
  execs.push_back(exec);
  return Status::success();
}

Status GraphReplay::replay(size_t i) {
  if (i >= execs.size())
    return Status::error("GraphReplay::replay: no graph " + std::to_string(i) +
                         " (" + std::to_string(execs.size()) + " recorded)");
  return call("cuGraphLaunch", [&](const DeviceApi &a) {
    return a.cuGraphLaunch(static_cast<CUgraphExec>(execs[i]),
                           static_cast<CUstream>(streamHandle));
  });
}
