//===- FloatBits.h - float16 and bfloat16 bit conversions -------*- C++ -*-===//
//
// Conversions between float32 and the 16-bit formats the kernels consume,
// rounding to nearest, ties to even; NaN stays NaN, overflow becomes
// infinity, and float16 subnormals are produced and read exactly.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_SUPPORT_FLOATBITS_H
#define SSD_SUPPORT_FLOATBITS_H

#include "ssd/Artifact/DType.h"

#include <cstdint>
#include <vector>

namespace ssd {

/// The project's element types; the tools compute in F32, BF16 or F16.
using artifact::DType;
using artifact::dtypeName;

uint16_t floatToBF16(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToF16(float value);
float f16ToFloat(uint16_t bits);

/// `value` rounded to `kind` and widened back to float32.
float roundTo(DType kind, float value);

/// The 16-bit patterns of `values` in `kind` (BF16 or F16).
std::vector<uint16_t> toHalfBits(DType kind, const std::vector<float> &values);
/// Widens 16-bit patterns of `kind` (BF16 or F16) to float32.
std::vector<float> fromHalfBits(DType kind, const std::vector<uint16_t> &bits);

} // namespace ssd

#endif // SSD_SUPPORT_FLOATBITS_H
