//===- Format.cpp - byte order and file helpers of SSDSupport -------------===//
#include "Format.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

using namespace ssd;

std::optional<std::vector<uint8_t>> ssd::readBinaryFile(const std::string &path,
                                                        std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "cannot read: Is a directory";
    return std::nullopt;
  }
  // A device (/dev/zero) never ends and a FIFO can block forever: only
  // regular files (symbolic links followed) are read.
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status)) {
    error = "cannot read: not a regular file";
    return std::nullopt;
  }
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = std::string("cannot read: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = "cannot read: I/O error";
    return std::nullopt;
  }
  return bytes;
}

bool ssd::writeBinaryFile(const std::string &path,
                          const std::vector<uint8_t> &bytes,
                          std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = std::string("cannot write: ") + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok &= std::fclose(file) == 0;
  if (!ok)
    error = std::string("cannot write: ") + std::strerror(errno);
  return ok;
}

std::string ssd::joinPath(const std::string &dir, const std::string &file) {
  if (dir.empty())
    return file;
  if (dir.back() == '/')
    return dir + file;
  return dir + "/" + file;
}

bool ssd::isDirectory(const std::string &path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool ssd::fileExists(const std::string &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

std::string ssd::createDirectories(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return ec ? ec.message() : "";
}

std::string ssd::baseName(const std::string &path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  while (p.rfind("./", 0) == 0 && p.size() > 2)
    p = p.substr(2);
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}
