//===- TmaCopy.h - whole operand panels by the tensor memory accelerator -*- C++ -*-===//
//
// On sm_90a one thread copies an operand's rows into shared memory with one
// cp.async.bulk.tensor per 64-element panel: no per-thread address math, no
// registers, and the completion is counted in bytes on an mbarrier that the
// readers wait on. The rows land in TMA's 128-byte swizzle (16-byte chunk c
// of row r at chunk c ^ (r % 8) of a 128-byte row), which keeps ldmatrix
// free of bank conflicts without padding and is the layout wgmma reads.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_TMACOPY_H
#define SSD_LIB_CONVERSION_SSDTOGPU_TMACOPY_H

#include "Emit.h"

#include "llvm/ADT/SmallVector.h"

namespace ssd {
namespace gpu_lowering {

/// Elements of a 2-byte type in one swizzled row (128 bytes).
inline constexpr int64_t kSwizzlePanel = 64;
/// Alignment of a swizzled buffer: the swizzle repeats every 8 rows.
inline constexpr int64_t kSwizzleAlign = 1024;

/// Indices of element (row, col) of a [cols / 64][rows][64] buffer of
/// 2-byte elements written by TMA with the 128-byte swizzle; eight elements
/// from a multiple of 8 stay contiguous (one 16-byte chunk).
llvm::SmallVector<Value> swizzled128At(Emitter &e, Value row, Value col);

/// The address of element `indices` of `memref` as an !llvm.ptr in address
/// space `space` (1 global, 3 shared).
Value elementPointer(Emitter &e, Value memref, ValueRange indices,
                     unsigned space);

/// Orders this thread's generic-proxy accesses of shared memory (and, after
/// a barrier, the block's) before the async proxy's: the wgmma reads of
/// rows just stored, or the TMA writes into rows just read.
void fenceSharedForAsyncProxy(Emitter &e);

/// Initialises the mbarrier at `bar` (!llvm.ptr<3>) for `arrivals`
/// arrivals a phase. Call from one thread, then a barrier before any use.
void initTmaBarrier(Emitter &e, Value bar, int64_t arrivals = 1);

/// From the thread that issues the copies: the copies of this phase of `bar`
/// will deliver `bytes` bytes (arrive.expect_tx).
void expectTmaBytes(Emitter &e, Value bar, int64_t bytes);

/// One box of the tensor map `descriptor` (an !llvm.ptr to it) at
/// `coordinates` (innermost first, index) into shared memory at `dst`
/// (!llvm.ptr<3>), completing on `bar`. Out-of-range elements read zero.
/// With `multicastMask` (i16, bit r: the cluster's block of rank r) the box
/// lands at `dst` in each of those blocks and completes on their `bar`.
void copyTmaBox(Emitter &e, Value descriptor, Value dst, Value bar,
                ValueRange coordinates, Value multicastMask = Value());

/// Waits until the phase of `bar` with parity `parity` (i32, 0 or 1) has
/// completed; the copies it counted are then visible to this thread.
void waitTmaBarrier(Emitter &e, Value bar, Value parity);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_TMACOPY_H
