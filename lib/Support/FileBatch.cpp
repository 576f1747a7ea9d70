//===- FileBatch.cpp - files written all or none --------------------------===//
#include "ssd/Support/FileBatch.h"
#include "Format.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace ssd;

bool FileBatch::commit(std::string &failedPath, std::string &error) {
  std::vector<std::string> temporaries;
  auto fail = [&](const std::string &path, const std::string &why) {
    for (const std::string &t : temporaries)
      std::remove(t.c_str());
    failedPath = path;
    error = why;
    return false;
  };
  for (const auto &[path, bytes] : files) {
    temporaries.push_back(path + ".tmp");
    std::string why;
    if (!writeBinaryFile(temporaries.back(), bytes, why))
      return fail(path, why);
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (std::rename(temporaries[i].c_str(), files[i].first.c_str()) != 0)
      return fail(files[i].first,
                  std::string("cannot write: ") + std::strerror(errno));
  return true;
}
