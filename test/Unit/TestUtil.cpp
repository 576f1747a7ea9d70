//===- TestUtil.cpp - helpers shared by the unit tests --------------------===//
#include "TestUtil.h"

#include <cstdlib>

std::string ssd::test::goldenDir() {
  const char *dir = std::getenv("SSD_GOLDEN_DIR");
  return dir ? std::string(dir) : std::string();
}
