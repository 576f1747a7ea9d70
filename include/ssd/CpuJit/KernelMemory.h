//===- KernelMemory.h - the heap of JIT-compiled CPU kernels ----*- C++ -*-===//
//
// The compiled CPU kernels allocate their temporaries (chunk states, decay
// matrices, a segment's buffers) with malloc and free them before they
// return. Blocks that large come from mmap and go back with the call, so
// every call faulted its temporaries in again, page by page, zeroed by the
// kernel: at short lengths that was most of a call's time. The JIT binds the
// kernels' malloc family to this heap instead, which keeps freed blocks of
// 64 KiB and more for the next call, up to a cap
// ($SSD_MLIR_CPU_CACHE_MB, 512 by default; 0 keeps none).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_CPUJIT_KERNELMEMORY_H
#define SSD_CPUJIT_KERNELMEMORY_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ssd {
namespace kernel_memory {

/// The C allocation functions as the kernels call them.
void *allocate(size_t size);
void *allocateZeroed(size_t count, size_t size);
void *allocateAligned(size_t alignment, size_t size);
int allocateAlignedPosix(void **out, size_t alignment, size_t size);
void *reallocate(void *block, size_t size);
/// Frees a block of this heap (null is ignored); a pointer from elsewhere
/// aborts with a message instead of corrupting either heap.
void release(void *block);

/// The symbols the JIT binds (malloc, calloc, aligned_alloc, posix_memalign,
/// realloc, free) and the functions above they name.
std::vector<std::pair<const char *, void *>> symbols();

struct Stats {
  /// Large blocks handed out from the cache, and those that were not.
  uint64_t reused = 0, fresh = 0;
  /// Bytes of freed blocks the cache holds now.
  uint64_t cachedBytes = 0;
};
Stats stats();

/// Sets the cache's cap in bytes (the environment's until then) and frees
/// what it holds beyond it; for tests and embedders.
void setCacheLimit(uint64_t bytes);

} // namespace kernel_memory
} // namespace ssd

#endif // SSD_CPUJIT_KERNELMEMORY_H
