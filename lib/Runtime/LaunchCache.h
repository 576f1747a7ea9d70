//===- LaunchCache.h - Reusing a launch's host work -------------*- C++ -*-===//
//
// A launch's host work (checking the arguments, planning, encoding TMA
// descriptors, packing parameters) depends only on the context, the device
// and every argument's pointer, dtype, shape, strides and device. Callers
// repeat those between steps (a caching allocator hands back the same
// buffers), so the artifact keeps the last few prepared launches by that
// key and a repeat goes straight to the driver's enqueue calls.
// Pure (no driver calls) so the keys and the eviction are unit-tested.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_LIB_RUNTIME_LAUNCHCACHE_H
#define SSD_LIB_RUNTIME_LAUNCHCACHE_H

#include "ssd/Runtime/Plan.h"

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ssd::rt {

/// Everything a prepared launch depends on, flattened for comparison.
class LaunchKey {
public:
  /// The CUDA context the launch runs in is `context` (its handle) and
  /// `contextId` (its unique id, CurrentContext::id; 0 where the driver has
  /// none).
  static LaunchKey of(const void *context, uint64_t contextId,
                      int deviceOrdinal, const ArgumentMap &args);

  bool operator==(const LaunchKey &other) const {
    return hash == other.hash && words == other.words && names == other.names;
  }
  bool operator!=(const LaunchKey &other) const { return !(*this == other); }

private:
  std::vector<uint64_t> words; ///< Context, device, then each argument's.
  std::string names;           ///< The arguments' names, '\0'-terminated.
  uint64_t hash = 0;
};

/// The `capacity` most recently used values by key; thread-safe. Values are
/// shared and immutable, so a launch keeps using one that a concurrent
/// launch evicts or replaces.
template <typename Value> class LaunchCache {
public:
  explicit LaunchCache(size_t capacity) : capacity(capacity) {}

  /// The value stored under `key`, now the most recently used; null if none.
  std::shared_ptr<const Value> find(const LaunchKey &key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (it->first == key) {
        entries.splice(entries.begin(), entries, it);
        return entries.front().second;
      }
    return nullptr;
  }

  /// Stores `value` under `key` (replacing what was there) as the most
  /// recently used, evicting the least recently used beyond the capacity.
  void insert(LaunchKey key, std::shared_ptr<const Value> value) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (it->first == key) {
        entries.erase(it);
        break;
      }
    entries.emplace_front(std::move(key), std::move(value));
    while (entries.size() > capacity)
      entries.pop_back();
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex);
    return entries.size();
  }

private:
  size_t capacity;
  std::mutex mutex;
  std::list<std::pair<LaunchKey, std::shared_ptr<const Value>>> entries;
};

} // namespace ssd::rt

#endif // SSD_LIB_RUNTIME_LAUNCHCACHE_H
