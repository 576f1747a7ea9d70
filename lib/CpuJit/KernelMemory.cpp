//===- KernelMemory.cpp - the heap of JIT-compiled CPU kernels ------------===//
//
// Every block carries a header just below the pointer handed out: the
// pointer libc returned, the block's capacity (0 for a small block, which
// goes back to libc) and the size asked for. Large blocks are rounded up to
// size classes (an eighth of their power of two) so that a call of a
// slightly different length reuses the previous call's blocks.
//
//===----------------------------------------------------------------------===//
#include "ssd/CpuJit/KernelMemory.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

using namespace ssd;
using namespace ssd::kernel_memory;

namespace {

constexpr uint64_t kMagic = 0x53534431424c4b31; // "SSD1BLK1"
/// Blocks of at least this many bytes are cached; smaller ones are libc's
/// (its arenas keep them anyway).
constexpr size_t kCachedFrom = size_t(64) << 10;
/// Room kept below every pointer handed out (at least sizeof(Header)).
constexpr size_t kHeaderRoom = 64;
/// libc's malloc alignment, which every block has at least.
constexpr size_t kMinAlignment = 16;
constexpr uint64_t kDefaultLimitMiB = 512;
constexpr const char *kLimitEnv = "SSD_MLIR_CPU_CACHE_MB";

struct Header {
  void *base;      ///< What libc returned.
  size_t capacity; ///< Bytes at base; 0: a small block, libc's to free.
  size_t size;     ///< Bytes asked for.
  uint64_t magic;  ///< kMagic while the block is handed out.
};
static_assert(sizeof(Header) <= kHeaderRoom, "header room too small");

Header *headerOf(void *block) { return static_cast<Header *>(block) - 1; }

/// `need` rounded up to an eighth of its power of two (4 KiB at least).
size_t sizeClass(size_t need) {
  size_t top = 1;
  while (top < need)
    top <<= 1;
  size_t step = std::max<size_t>(top / 8, 4096);
  return (need + step - 1) / step * step;
}

uint64_t limitFromEnvironment() {
  const char *text = std::getenv(kLimitEnv);
  if (!text || !*text)
    return kDefaultLimitMiB << 20;
  char *end = nullptr;
  errno = 0;
  unsigned long long mib = std::strtoull(text, &end, 10);
  if (errno || *end || text[0] == '-' || mib > (UINT64_MAX >> 20)) {
    std::fprintf(stderr,
                 "ssd-mlir: ignoring %s='%s' (not a number of MiB); "
                 "keeping up to %llu MiB of freed kernel blocks\n",
                 kLimitEnv, text,
                 static_cast<unsigned long long>(kDefaultLimitMiB));
    return kDefaultLimitMiB << 20;
  }
  return static_cast<uint64_t>(mib) << 20;
}

struct Cache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> freeBlocks;
  uint64_t limit = limitFromEnvironment();
  Stats stats;

  /// Frees cached blocks until at most `limit` bytes are held (mutex held).
  void trim() {
    for (auto it = freeBlocks.begin();
         it != freeBlocks.end() && stats.cachedBytes > limit;) {
      std::vector<void *> &blocks = it->second;
      while (!blocks.empty() && stats.cachedBytes > limit) {
        std::free(blocks.back());
        blocks.pop_back();
        stats.cachedBytes -= it->first;
      }
      it = blocks.empty() ? freeBlocks.erase(it) : std::next(it);
    }
  }
};

Cache &cache() {
  // Never destroyed: a kernel may still free blocks during exit.
  static Cache *instance = [] {
    auto *c = new Cache();
    // A child forked while another thread held the lock would wait forever.
    pthread_atfork([] { cache().mutex.lock(); },
                   [] { cache().mutex.unlock(); },
                   [] { cache().mutex.unlock(); });
    return c;
  }();
  return *instance;
}

/// `capacity` bytes from the cache or, failing that, from libc.
void *takeLarge(size_t capacity) {
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.freeBlocks.find(capacity);
    if (it != c.freeBlocks.end() && !it->second.empty()) {
      void *base = it->second.back();
      it->second.pop_back();
      c.stats.cachedBytes -= capacity;
      ++c.stats.reused;
      return base;
    }
    ++c.stats.fresh;
  }
  return std::malloc(capacity);
}

bool isPowerOfTwo(size_t v) { return v && !(v & (v - 1)); }

} // namespace

void *kernel_memory::allocateAligned(size_t alignment, size_t size) {
  alignment = std::max(alignment, kMinAlignment);
  if (!isPowerOfTwo(alignment) ||
      size > SIZE_MAX - kHeaderRoom - alignment) {
    errno = EINVAL;
    return nullptr;
  }
  size_t need = size + kHeaderRoom + (alignment - kMinAlignment);
  size_t capacity = need < kCachedFrom ? 0 : sizeClass(need);
  void *base = capacity ? takeLarge(capacity) : std::malloc(need);
  if (!base) {
    errno = ENOMEM;
    return nullptr;
  }
  uintptr_t at = reinterpret_cast<uintptr_t>(base) + kHeaderRoom;
  at = (at + alignment - 1) & ~(uintptr_t(alignment) - 1);
  void *block = reinterpret_cast<void *>(at);
  *headerOf(block) = Header{base, capacity, size, kMagic};
  return block;
}

void *kernel_memory::allocate(size_t size) {
  return allocateAligned(kMinAlignment, size);
}

void *kernel_memory::allocateZeroed(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  void *block = allocate(count * size);
  if (block)
    std::memset(block, 0, count * size);
  return block;
}

int kernel_memory::allocateAlignedPosix(void **out, size_t alignment,
                                        size_t size) {
  if (!isPowerOfTwo(alignment) || alignment % sizeof(void *))
    return EINVAL;
  void *block = allocateAligned(alignment, size);
  if (!block)
    return ENOMEM;
  *out = block;
  return 0;
}

void *kernel_memory::reallocate(void *block, size_t size) {
  if (!block)
    return allocate(size);
  size_t old = headerOf(block)->size;
  void *moved = allocate(size);
  if (!moved)
    return nullptr;
  std::memcpy(moved, block, std::min(old, size));
  release(block);
  return moved;
}

void kernel_memory::release(void *block) {
  if (!block)
    return;
  Header *header = headerOf(block);
  if (header->magic != kMagic) {
    std::fprintf(stderr,
                 "ssd-mlir: a CPU kernel freed %p, which is not a live block "
                 "of its heap (freed twice, or allocated elsewhere)\n",
                 block);
    std::abort();
  }
  header->magic = 0;
  void *base = header->base;
  size_t capacity = header->capacity;
  if (!capacity) {
    std::free(base);
    return;
  }
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.stats.cachedBytes + capacity <= c.limit) {
      c.freeBlocks[capacity].push_back(base);
      c.stats.cachedBytes += capacity;
      return;
    }
  }
  std::free(base);
}

std::vector<std::pair<const char *, void *>> kernel_memory::symbols() {
  using AllocFn = void *(*)(size_t);
  using CallocFn = void *(*)(size_t, size_t);
  using AlignedFn = void *(*)(size_t, size_t);
  using PosixFn = int (*)(void **, size_t, size_t);
  using ReallocFn = void *(*)(void *, size_t);
  using FreeFn = void (*)(void *);
  return {
      {"malloc", reinterpret_cast<void *>(static_cast<AllocFn>(allocate))},
      {"calloc",
       reinterpret_cast<void *>(static_cast<CallocFn>(allocateZeroed))},
      {"aligned_alloc",
       reinterpret_cast<void *>(static_cast<AlignedFn>(allocateAligned))},
      {"posix_memalign",
       reinterpret_cast<void *>(static_cast<PosixFn>(allocateAlignedPosix))},
      {"realloc", reinterpret_cast<void *>(static_cast<ReallocFn>(reallocate))},
      {"free", reinterpret_cast<void *>(static_cast<FreeFn>(release))},
  };
}

Stats kernel_memory::stats() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void kernel_memory::setCacheLimit(uint64_t bytes) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.limit = bytes;
  c.trim();
}
