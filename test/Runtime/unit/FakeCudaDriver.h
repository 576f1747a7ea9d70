//===- FakeCudaDriver.h - What the fake CUDA driver records -----*- C++ -*-===//

#ifndef SSD_TEST_RUNTIME_FAKECUDADRIVER_H
#define SSD_TEST_RUNTIME_FAKECUDADRIVER_H

#include "CudaDecls.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ssd::rt::fake {

/// Counters and settings shared by the fake driver and the tests.
struct FakeCudaState {
  // Settings.
  uintptr_t context = 0x1000; ///< cuCtxGetCurrent's answer.
  uint64_t contextId = 1;     ///< cuCtxGetId's answer for it.
  int device = 0;
  CUdeviceptr nextAllocation = 0x40000000; ///< cuMemAllocAsync's answer.
  size_t paramsToRecord = 0; ///< How many of a launch's parameters to keep.
  bool failLaunches = false;
  /// Parameter sizes by function name: cuFuncGetParamInfo answers with
  /// these, placed at their natural alignment; for a function not listed
  /// it fails (as a driver that cannot say).
  std::map<std::string, std::vector<size_t>> paramSizes;
  // Counts of calls.
  int deviceAttributeQueries = 0;
  int pointerQueries = 0;
  int contextIdQueries = 0;
  int moduleLoads = 0;
  int sharedOptIns = 0;
  int lastSharedOptIn = 0;
  int tensorMapEncodes = 0;
  int memsets = 0;
  int descriptorCopies = 0;
  int launches = 0;
  int bufferLaunches = 0; ///< Launches with the parameters as one buffer.
  /// cuFuncGetParamInfo calls past a function's last parameter: API errors,
  /// which compute-sanitizer reports.
  int paramQueriesPastTheEnd = 0;
  /// The first 8 bytes of each recorded parameter of the last launch.
  std::vector<uint64_t> lastParams;
};

} // namespace ssd::rt::fake

extern "C" ssd::rt::fake::FakeCudaState *ssdFakeCudaState();

#endif // SSD_TEST_RUNTIME_FAKECUDADRIVER_H
