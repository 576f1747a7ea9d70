//===- Json.h - JSON values as the runtime names them -----------*- C++ -*-===//
//
// The reader and printer live in the artifact library.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_JSON_H
#define SSD_RUNTIME_JSON_H

#include "ssd/Artifact/Json.h"
#include "ssd/Runtime/Status.h"

namespace ssd::rt {
using artifact::JsonValue;
using artifact::parseJson;
using artifact::printJson;
} // namespace ssd::rt

#endif // SSD_RUNTIME_JSON_H
