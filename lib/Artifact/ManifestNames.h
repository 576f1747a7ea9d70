//===- ManifestNames.h - The spellings of the manifest's enums --*- C++ -*-===//
//
// One table per enum, read by the parser and the printer alike, so that the
// two cannot disagree on a name.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_ARTIFACT_MANIFESTNAMES_H
#define SSD_LIB_ARTIFACT_MANIFESTNAMES_H

#include "ssd/Artifact/Manifest.h"

#include <cstddef>
#include <utility>

namespace ssd::artifact {

template <typename E> using NameOf = std::pair<const char *, E>;

inline constexpr NameOf<Layout> kLayoutNames[] = {
    {"contiguous", Layout::Contiguous},
    {"inner_contiguous", Layout::InnerContiguous},
    {"strided", Layout::Strided}};
inline constexpr NameOf<ParamKind> kParamKindNames[] = {
    {"tensor", ParamKind::Tensor},
    {"workspace", ParamKind::Workspace},
    {"scalar", ParamKind::Scalar},
    {"tma", ParamKind::TensorMap}};
inline constexpr NameOf<Abi> kAbiNames[] = {{"ptr", Abi::Pointer},
                                            {"memref", Abi::Memref}};
inline constexpr NameOf<ScalarType> kScalarTypeNames[] = {
    {"i32", ScalarType::I32}, {"i64", ScalarType::I64}};
inline constexpr NameOf<Swizzle> kSwizzleNames[] = {{"none", Swizzle::None},
                                                    {"32B", Swizzle::B32},
                                                    {"64B", Swizzle::B64},
                                                    {"128B", Swizzle::B128}};
inline constexpr NameOf<Interleave> kInterleaveNames[] = {
    {"none", Interleave::None},
    {"16B", Interleave::B16},
    {"32B", Interleave::B32}};
inline constexpr NameOf<L2Promotion> kL2PromotionNames[] = {
    {"none", L2Promotion::None},
    {"64B", L2Promotion::B64},
    {"128B", L2Promotion::B128},
    {"256B", L2Promotion::B256}};
inline constexpr NameOf<OobFill> kOobFillNames[] = {{"zero", OobFill::Zero},
                                                    {"nan", OobFill::NaN}};
/// TensorMapSpec::byValue.
inline constexpr NameOf<bool> kPassNames[] = {{"value", true},
                                              {"global", false}};

/// The spelling of `value` in `table`.
template <typename E, size_t N>
const char *nameIn(const NameOf<E> (&table)[N], E value) {
  for (const NameOf<E> &entry : table)
    if (entry.second == value)
      return entry.first;
  return "?";
}

} // namespace ssd::artifact

#endif // SSD_LIB_ARTIFACT_MANIFESTNAMES_H
