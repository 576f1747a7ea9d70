//===- DType.h - The element types of the project ---------------*- C++ -*-===//
//
// One enum for every element type the host code names: manifests, the
// runtime's tensors, .npy files and layer specifications. Names follow the
// command line (`--dtype f32|bf16|f16`).
//
//===----------------------------------------------------------------------===//

#ifndef SSD_ARTIFACT_DTYPE_H
#define SSD_ARTIFACT_DTYPE_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace ssd::artifact {

enum class DType { F32, F16, BF16, F64, I8, U8, I32, I64 };

/// "f32", "bf16", ...
const char *dtypeName(DType type);
/// Parses a name as written by dtypeName.
std::optional<DType> parseDType(std::string_view name);
size_t dtypeBytes(DType type);

} // namespace ssd::artifact

#endif // SSD_ARTIFACT_DTYPE_H
