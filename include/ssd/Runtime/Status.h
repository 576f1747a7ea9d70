//===- Status.h - Error values of the SSD runtime ---------------*- C++ -*-===//
//
// The runtime reports failures with the artifact library's Status and
// Expected; these names keep ssd::rt code and embedders unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_STATUS_H
#define SSD_RUNTIME_STATUS_H

#include "ssd/Artifact/Status.h"

namespace ssd::rt {
using artifact::Expected;
using artifact::Status;
} // namespace ssd::rt

#define SSD_RT_RETURN_IF_ERROR(expr) SSD_RETURN_IF_ERROR(expr)

#endif // SSD_RUNTIME_STATUS_H
