//===- LaunchCache.cpp - Reusing a launch's host work ---------------------===//

#include "LaunchCache.h"

using namespace ssd::rt;

namespace {

/// FNV-1a over 64-bit words: cheap, and only a filter before the full
/// comparison.
uint64_t mix(uint64_t hash, uint64_t word) {
  for (int i = 0; i < 8; ++i) {
    hash ^= (word >> (8 * i)) & 0xff;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace

LaunchKey LaunchKey::of(const void *context, uint64_t contextId,
                        int deviceOrdinal, const ArgumentMap &args) {
  LaunchKey key;
  key.words.reserve(3 + args.size() * 12);
  key.words.push_back(reinterpret_cast<uintptr_t>(context));
  key.words.push_back(contextId);
  key.words.push_back(uint64_t(int64_t(deviceOrdinal)));
  for (const auto &[name, arg] : args) {
    key.names += name;
    key.names += '\0';
    key.words.push_back(reinterpret_cast<uintptr_t>(arg.devicePtr));
    key.words.push_back(uint64_t(arg.dtype));
    key.words.push_back(uint64_t(int64_t(arg.device)));
    // The counts keep [2, 3] + strides [] apart from [2] + strides [3].
    key.words.push_back(arg.shape.size());
    for (int64_t d : arg.shape)
      key.words.push_back(uint64_t(d));
    key.words.push_back(arg.strides.size());
    for (int64_t s : arg.strides)
      key.words.push_back(uint64_t(s));
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint64_t w : key.words)
    hash = mix(hash, w);
  for (char c : key.names)
    hash = mix(hash, uint64_t(static_cast<unsigned char>(c)));
  key.hash = hash;
  return key;
}
