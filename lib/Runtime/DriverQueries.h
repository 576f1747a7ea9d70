//===- DriverQueries.h - What the runtime asks the driver --------*- C++
//-*-===//
//
// The current context and its device, where a pointer lives, and where a
// function reads its parameters: the driver calls behind a launch's checks
// and preparation.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_DRIVERQUERIES_H
#define SSD_LIB_RUNTIME_DRIVERQUERIES_H

#include "Driver.h"
#include "Params.h"
#include "ssd/Runtime/Plan.h"

#include <optional>
#include <vector>

namespace ssd::rt {

/// The calling thread's current context and its device.
struct CurrentContext {
  CUcontext context = nullptr;
  /// The context's unique id (cuCtxGetId; 0 where the driver cannot say):
  /// a context destroyed and created again may get the same handle, never
  /// the same id, so what is kept per context is kept by both.
  uint64_t id = 0;
  CUdevice device = 0;
};

/// An error naming what to do where the thread has no current context.
Expected<CurrentContext> currentContext(const Driver &d);

/// The current context's device, as a plan needs it.
Expected<DeviceInfo> queryDevice(const Driver &d);

/// checkArguments' pointer query, by cuPointerGetAttributes.
PointerQuery driverPointerQuery(const Driver &d);

/// Where `f` reads its first `count` parameters (the number the manifest
/// packs), fewer where it takes fewer; none where the driver cannot say.
/// The driver has no parameter count, and a query past the last parameter
/// is an API error (which compute-sanitizer reports), so none is made:
/// a function taking more parameters fails its launch instead, the buffer
/// being too short for them.
std::optional<std::vector<ParamPlacement>>
queryParamLayout(const Driver &d, CUfunction f, size_t count);

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_DRIVERQUERIES_H
