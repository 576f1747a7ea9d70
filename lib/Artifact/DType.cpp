//===- DType.cpp - The element types of the project -----------------------===//

#include "ssd/Artifact/DType.h"

using namespace ssd::artifact;

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  size_t bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4}, {DType::F16, "f16", 2}, {DType::BF16, "bf16", 2},
    {DType::F64, "f64", 8}, {DType::I8, "i8", 1},   {DType::U8, "u8", 1},
    {DType::I32, "i32", 4}, {DType::I64, "i64", 8},
};
} // namespace

const char *ssd::artifact::dtypeName(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return info.name;
  return "?";
}

std::optional<DType> ssd::artifact::parseDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.type;
  return std::nullopt;
}

size_t ssd::artifact::dtypeBytes(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return info.bytes;
  return 0;
}
