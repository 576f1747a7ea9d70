//===- CompareTest.cpp - the error measure ---------------------------------===//
#include "ssd/Support/Compare.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace ssd;

TEST(Compare, MaxAbsoluteErrorOverMaxMagnitude) {
  std::vector<float> expected = {1.0f, -4.0f, 2.0f};
  std::vector<float> actual = {1.5f, -4.0f, 2.0f};
  EXPECT_DOUBLE_EQ(maxRelativeError(actual, expected), 0.5 / 4.0);
  std::vector<double> exact = {1.0, -4.0, 2.0};
  EXPECT_EQ(maxRelativeError(exact, expected), 0.0);
}

TEST(Compare, AllZeroExpectedGivesAbsoluteError) {
  std::vector<float> expected = {0.0f, 0.0f};
  std::vector<float> actual = {0.0f, -0.25f};
  EXPECT_DOUBLE_EQ(maxRelativeError(actual, expected), 0.25);
}

TEST(Compare, NonFiniteOrMismatchedIsInfinite) {
  std::vector<float> expected = {1.0f, 2.0f};
  EXPECT_TRUE(std::isinf(maxRelativeError(std::vector<float>{NAN, 2.0f}, expected)));
  EXPECT_TRUE(
      std::isinf(maxRelativeError(std::vector<float>{1.0f, INFINITY}, expected)));
  EXPECT_TRUE(std::isinf(maxRelativeError(std::vector<float>{1.0f}, expected)));
}
