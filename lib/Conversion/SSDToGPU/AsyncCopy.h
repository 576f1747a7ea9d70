//===- AsyncCopy.h - global -> shared copies without registers --*- C++ -*-===//
//
// Operands that need no transform (x, B and C of a chunk) go from global
// memory straight into shared memory with cp.async (16 bytes a copy, through
// L2, no register round trip and no st.shared), issued early so that their
// latency overlaps other work, and waited for just before they are read.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_ASYNCCOPY_H
#define SSD_LIB_CONVERSION_SSDTOGPU_ASYNCCOPY_H

#include "Emit.h"

#include "llvm/ADT/SmallVector.h"

namespace ssd {
namespace gpu_lowering {

/// Rows of a shared buffer filled from global memory: row r of `dst`
/// ([1][rows][width + pad], 2-byte elements) takes the `width` elements of
/// `src` starting at srcAt(r), which must be contiguous; rows r >= `valid`
/// are zero-filled and read nothing (srcAt is then called with a clamped
/// row). `width` is a multiple of 8.
struct AsyncRows {
  Value dst;
  int64_t rows = 0, width = 0;
  Value src;
  std::function<llvm::SmallVector<Value>(Value row)> srcAt;
  Value valid;
};

/// Issues this thread's share of the copies (the block's `threads` threads
/// split them) and commits them as one group.
void copyRowsAsync(Emitter &e, const AsyncRows &rows, int64_t threads);

/// Waits until this thread's committed copies have landed; a barrier after
/// it makes every thread's copies visible to the block.
void waitAsyncCopies(Emitter &e);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_ASYNCCOPY_H
