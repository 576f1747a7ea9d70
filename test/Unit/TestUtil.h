//===- TestUtil.h - helpers shared by the unit tests ------------*- C++ -*-===//
#ifndef SSD_TEST_UNIT_TESTUTIL_H
#define SSD_TEST_UNIT_TESTUTIL_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "ssd/Artifact/Status.h"

#include "gtest/gtest.h"

#include <string>

namespace ssd::test {

/// A fresh directory under the system temporary directory, removed with its
/// contents on destruction.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> path;
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("ssd-unit", path);
    EXPECT_FALSE(ec) << ec.message();
    dir = std::string(path);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(dir); }
  const std::string &path() const { return dir; }
  std::string file(llvm::StringRef name) const { return dir + "/" + name.str(); }

private:
  std::string dir;
};

/// The message of `err` (consumed); empty for success.
inline std::string errorMessage(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : std::string();
}
inline std::string errorMessage(const ssd::artifact::Status &status) {
  return status.message();
}

/// The golden case folder named by the SSD_GOLDEN_DIR environment
/// variable, or an empty string when it is unset.
std::string goldenDir();

} // namespace ssd::test

#endif // SSD_TEST_UNIT_TESTUTIL_H
