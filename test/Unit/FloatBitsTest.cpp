//===- FloatBitsTest.cpp - float16/bfloat16 conversions vs APFloat --------===//
#include "ssd/Support/FloatBits.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace ssd;

static uint16_t viaAPFloat(const llvm::fltSemantics &semantics, float value) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

static void expectSameAsAPFloat(uint32_t bits) {
  float value = llvm::bit_cast<float>(bits);
  if (std::isnan(value)) {
    EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(value))));
    EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(value))));
    return;
  }
  EXPECT_EQ(floatToBF16(value), viaAPFloat(llvm::APFloat::BFloat(), value))
      << "bf16 of bits 0x" << std::hex << bits;
  EXPECT_EQ(floatToF16(value), viaAPFloat(llvm::APFloat::IEEEhalf(), value))
      << "f16 of bits 0x" << std::hex << bits;
}

TEST(FloatBits, MatchesAPFloatOnASweep) {
  // A stride coprime with 2^32 visits every exponent and many mantissas.
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 40503)
    expectSameAsAPFloat(static_cast<uint32_t>(bits));
}

TEST(FloatBits, MatchesAPFloatOnEdges) {
  const uint32_t edges[] = {
      0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
      0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, // f16 max and overflow
      0x38800000, 0x387fffff, 0x38000000,             // f16 normal boundary
      0x33000000, 0x33000001, 0x32ffffff, 0x33800000, // f16 smallest subnormal
      0x3f808000, 0x3f818000, 0x3f808001,             // bf16 ties
      0x7f7fffff, 0x7f7f8000, 0x00000001, 0x3f801000, 0x3f803000};
  for (uint32_t bits : edges) {
    expectSameAsAPFloat(bits);
    expectSameAsAPFloat(bits | 0x80000000);
  }
}

TEST(FloatBits, HalfPatternsRoundTrip) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f16 = f16ToFloat(h), bf16 = bf16ToFloat(h);
    if (!std::isnan(f16)) {
      EXPECT_EQ(floatToF16(f16), h);
      llvm::APFloat ref(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
      EXPECT_EQ(f16, ref.convertToFloat());
    }
    if (!std::isnan(bf16)) {
      EXPECT_EQ(floatToBF16(bf16), h);
    }
  }
}

TEST(FloatBits, RoundTo) {
  EXPECT_EQ(roundTo(DType::F32, 1.0f + 0x1p-20f), 1.0f + 0x1p-20f);
  EXPECT_EQ(roundTo(DType::BF16, 1.0f + 0x1p-9f), 1.0f);
  EXPECT_EQ(roundTo(DType::F16, 1.0f + 0x1p-9f), 1.0f + 0x1p-9f);
  std::vector<float> values = {1.5f, -2.25f, 0.125f};
  EXPECT_EQ(fromHalfBits(DType::F16, toHalfBits(DType::F16, values)), values);
}
