//===- Sync.h - inter-CTA hand-offs of the fused SSD kernel -----*- C++ -*-===//
//
// The few synchronisation pieces the persistent kernel is built from. Every
// counter is an i32 element of a zero-initialised workspace (a 1-D memref).
//
// LLVM 22.1.8 lowers `llvm.atomicrmw` as a relaxed `atom` whatever ordering
// it is given (HOPPER-NOTES.md, trap 2), so ordering never rides on an RMW:
//  - the ticket is a relaxed atomic add; it orders nothing but the handing
//    out of work items (the block holding ticket t is resident, so items
//    before t are running or done);
//  - a publish is a block barrier, then thread 0's `fence.acq_rel.gpu` and
//    a strong relaxed store of the new value: the fence makes the store a
//    release (the PTX memory model's release pattern), and it is
//    cumulative over the block's writes the barrier ordered before it.
//    (`st.release.gpu` after the fence would fence a second time: ptxas
//    emits MEMBAR.GPU for both, and one fewer was 2-3% at b1 L=16K-128K);
//  - a wait is thread 0 spinning on `ld.acquire.gpu` until the counter
//    reaches a target, sleeping kSpinSleepNs between its polls
//    (waitForChunks spins on a second counter in thread 32 at the same
//    time), then a block barrier: the acquire synchronises thread
//    0 with the producer and the barrier the block with thread 0, so the
//    block's plain loads that follow see the producer's data (causality
//    order is transitive in the PTX memory model). A fence per thread there
//    would only make each warp wait for its own earlier stores.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_SYNC_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_SYNC_H

#include "../Emit.h"

namespace ssd {
namespace gpu_lowering {
namespace fused {

/// Nanoseconds a spinning thread sleeps between two polls of a counter.
/// Hundreds of blocks poll the few counters of the chain's head at once;
/// fewer polls leave the L2 slices holding them to the writers. Measured on
/// the H200 (2.7B layer, 3 rounds): 64 ns was 0.5-0.8% faster than no
/// sleep at b1 2K, 16K, 128K and b8 16K; 256 ns the same but at 2K; 1 us
/// slower at 2K.
constexpr int64_t kSpinSleepNs = 64;

/// `!llvm.ptr<1>` (global) to element `indices` of `memref` (any strided
/// layout; integer or float elements of whole bytes), for the atomic and
/// ordered accesses that memref ops cannot express.
Value globalElementPointer(Emitter &e, Value memref, mlir::ValueRange indices);

/// `!llvm.ptr<1>` (global) to element `index` of the 1-D i32 memref
/// `counters`.
Value counterPointer(Emitter &e, Value counters, Value index);

/// Thread 0 only: the next ticket of the global counter (relaxed add of 1),
/// as an index.
Value fetchTicket(Emitter &e, Value ticketPtr);

/// `ld.acquire.gpu` of a counter, as an index.
Value loadAcquire(Emitter &e, Value ptr);
/// `st.relaxed.gpu` of `value` (an index) to a counter: a release where a
/// fence precedes it (blockRelease).
void storeRelaxed(Emitter &e, Value ptr, Value value);
/// `fence.acq_rel.gpu`.
void fenceDevice(Emitter &e);

/// Spins until the counter at `ptr` is at least `target` (acquire), and
/// returns the value read last, as an index. With `patienceCycles` > 0 it
/// gives up once that many SM clock cycles have passed (the value read
/// last may then be below `target`).
Value spinUntilAtLeast(Emitter &e, Value ptr, Value target,
                       int64_t patienceCycles = 0);

/// The whole block waits until counter `index` of `counters` reaches
/// `target` (acquire), after which the producer's writes are visible to
/// every thread of the block.
void blockAcquire(Emitter &e, Value counters, Value index, Value target);

/// The whole block publishes its global writes: counter `index` of
/// `counters` becomes `value` (release) once every thread's writes are
/// ordered before it.
void blockRelease(Emitter &e, Value counters, Value index, Value value);

/// As blockRelease, for a counter several blocks publish to: counter
/// `index` of `counters` grows by `amount` (an index; a relaxed atomic add
/// after the fence), so that a consumer waits for the sum of what every
/// producer did, however the work was split among them.
void blockReleaseAdd(Emitter &e, Value counters, Value index, Value amount);

/// Makes a value computed by thread 0 known to the whole block through the
/// one-element shared buffer `slot` (i64 element type: a buffer of the
/// shared arena, KernelFunc::sharedBuffer).
Value broadcastFromThread0(Emitter &e, Value slot,
                           llvm::function_ref<Value()> compute);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_SYNC_H
