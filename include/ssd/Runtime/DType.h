//===- DType.h - Element types of runtime tensors ---------------*- C++ -*-===//
//
// The project's one element-type enum lives in the artifact library; the
// runtime names it as ssd::rt::DType too.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_DTYPE_H
#define SSD_RUNTIME_DTYPE_H

#include "ssd/Artifact/DType.h"

namespace ssd::rt {
using artifact::DType;
using artifact::dtypeBytes;
using artifact::dtypeName;
using artifact::parseDType;
} // namespace ssd::rt

#endif // SSD_RUNTIME_DTYPE_H
