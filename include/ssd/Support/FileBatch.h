//===- FileBatch.h - files written all or none -------------------*- C++ -*-===//
#ifndef SSD_SUPPORT_FILEBATCH_H
#define SSD_SUPPORT_FILEBATCH_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ssd {

/// Files written as one: add() stages each file's bytes; commit() writes
/// every file to PATH.tmp, then renames them all into place. A failure
/// removes the temporaries and renames nothing, so a failed run leaves
/// neither a half-written file nor a part of the set.
class FileBatch {
public:
  void add(std::string path, std::vector<uint8_t> bytes) {
    files.emplace_back(std::move(path), std::move(bytes));
  }
  /// On failure returns false with the file and the reason set.
  bool commit(std::string &failedPath, std::string &error);

private:
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
};

} // namespace ssd

#endif // SSD_SUPPORT_FILEBATCH_H
