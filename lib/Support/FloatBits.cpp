//===- FloatBits.cpp - float16 and bfloat16 bit conversions ---------------===//
#include "ssd/Support/FloatBits.h"

#include "Format.h"

#include <cmath>

using namespace ssd;

uint16_t ssd::floatToBF16(float value) {
  uint32_t bits = bitCast<uint32_t>(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // quiet NaN
  // Round to nearest even on the 16 dropped bits; a carry into the exponent
  // is the correct result, up to infinity.
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float ssd::bf16ToFloat(uint16_t bits) {
  return bitCast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t ssd::floatToF16(float value) {
  uint32_t x = bitCast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) // infinity or NaN (kept quiet)
    return sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (x >= 0x477ff000) // at or above 65520: rounds to infinity
    return sign | 0x7c00;
  if (x < 0x38800000) { // below 2^-14: a subnormal or zero
    if (x <= 0x33000000) // at or below 2^-25: ties to even give zero
      return sign;
    uint32_t exponent = x >> 23;
    uint32_t mantissa = (x & 0x7fffff) | 0x800000;
    // The value is mantissa * 2^(exponent - 150); in units of 2^-24 that is
    // mantissa >> (126 - exponent), rounded.
    uint32_t shift = 126 - exponent;
    uint32_t quotient = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1)))
      ++quotient;
    return sign | static_cast<uint16_t>(quotient);
  }
  // Normal: round the 13 dropped bits to nearest even, then rebias the
  // exponent from 127 to 15.
  uint32_t rounded = x + 0xfff + ((x >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

float ssd::f16ToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return bitCast<float>(sign | 0x7f800000 | (mantissa << 13));
  return bitCast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float ssd::roundTo(DType kind, float value) {
  switch (kind) {
  case DType::F32:
    return value;
  case DType::BF16:
    return bf16ToFloat(floatToBF16(value));
  case DType::F16:
    return f16ToFloat(floatToF16(value));
  default:
    // The wider and integer types hold every float value they are given.
    return value;
  }
}

std::vector<uint16_t> ssd::toHalfBits(DType kind,
                                      const std::vector<float> &values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    bits[i] =
        kind == DType::BF16 ? floatToBF16(values[i]) : floatToF16(values[i]);
  return bits;
}

std::vector<float> ssd::fromHalfBits(DType kind,
                                     const std::vector<uint16_t> &bits) {
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    values[i] =
        kind == DType::BF16 ? bf16ToFloat(bits[i]) : f16ToFloat(bits[i]);
  return values;
}
