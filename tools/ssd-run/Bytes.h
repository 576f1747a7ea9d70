//===- Bytes.h - memcpy that accepts empty ranges -------------*- C++ -*-===//
//
// A case without tokens (L = 0) has tensors without elements, whose
// vectors' data() may be null; memcpy with a null pointer is undefined even
// for zero bytes.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_TOOLS_SSD_RUN_BYTES_H
#define SSD_TOOLS_SSD_RUN_BYTES_H

#include <cstddef>
#include <cstring>

namespace ssd {

inline void copyBytes(void *dst, const void *src, std::size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

} // namespace ssd

#endif // SSD_TOOLS_SSD_RUN_BYTES_H
