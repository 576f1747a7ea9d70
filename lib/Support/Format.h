//===- Format.h - byte order and file helpers of SSDSupport -----*- C++ -*-===//
//
// The little pieces of LLVM's Support library that SSDSupport used, in plain
// C++17, so that it builds without LLVM (the runtime-only configuration).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_SUPPORT_FORMAT_H
#define SSD_LIB_SUPPORT_FORMAT_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace ssd {

template <typename To, typename From> To bitCast(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/// The hosts SSD-MLIR supports (x86-64, AArch64) are little endian, which
/// is the byte order of .npy files we read and write.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "SSDSupport assumes a little-endian host");

template <typename T> T loadLittleEndian(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T> void storeLittleEndian(uint8_t *p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

/// The whole file, or nullopt with `error` set to the system's reason
/// ("cannot read: No such file or directory").
std::optional<std::vector<uint8_t>> readBinaryFile(const std::string &path,
                                                   std::string &error);
/// Writes `bytes` to `path`; on failure sets `error` ("cannot write: ...").
bool writeBinaryFile(const std::string &path, const std::vector<uint8_t> &bytes,
                     std::string &error);

/// `dir/file`, with no doubled separator.
std::string joinPath(const std::string &dir, const std::string &file);
bool isDirectory(const std::string &path);
bool fileExists(const std::string &path);
/// Creates `dir` and its parents; returns the system's reason on failure,
/// or "".
std::string createDirectories(const std::string &dir);
/// The last component of `path`, ignoring trailing separators and "./".
std::string baseName(const std::string &path);

} // namespace ssd

#endif // SSD_LIB_SUPPORT_FORMAT_H
