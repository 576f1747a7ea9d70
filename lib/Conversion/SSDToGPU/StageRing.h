//===- StageRing.h - shared-memory stages from a producer to consumers -*- C++
//-*-===//
//
// A ring of `stages` shared-memory buffers that a producer fills with TMA
// copies and consumers read, in use order i = 0, 1, ...: use i takes stage
// i % stages, and is that stage's u-th fill, u = i / stages. Each stage has
// two mbarriers:
//   full:  phase u completes once fill u has landed: by TMA, one arrival
//          (the producer's expect_tx) and the copies' bytes; or written by
//          `producerArrivals` threads, each publishing its part;
//   empty: phase u completes once every consumer thread has released fill
//          u (`consumerThreads` arrivals).
// So the producer waits for empty's phase u - 1 before fill u (none before
// the first), and the consumers wait for full's phase u: parities
// (u - 1) & 1 and u & 1. The producer runs ahead of the consumers by up to
// `stages` fills, and neither side ever blocks the block's other warps.
//
// A ring may have fewer buffers than stages (a divisor): use i then writes
// buffer i % buffers, and the producer waits for the release of use
// i - buffers, on that use's stage. Consumers that take every k-th use
// (k warpgroups alternating) need k stages of barriers even over one
// buffer: a consumer waits by the parity of a phase, so a barrier that
// another consumer's use sits between would let it through a phase early.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_STAGERING_H
#define SSD_LIB_CONVERSION_SSDTOGPU_STAGERING_H

#include "Kernels.h"

namespace ssd {
namespace gpu_lowering {

class StageRing {
public:
  /// Takes the 2 x `stages` mbarriers from `kernel`'s shared memory.
  StageRing(Emitter &e, KernelFunc &kernel, int64_t stages,
            int64_t consumerThreads, int64_t producerArrivals = 1,
            int64_t buffers = 0);

  /// Initialises the mbarriers: from one thread, then a block barrier
  /// before any other use.
  void init();

  /// The stage of `use` (index): its barriers, and its buffer where the
  /// ring has as many buffers as stages.
  Value stage(Value use);
  /// The buffer of `use` (index).
  Value buffer(Value use);
  /// The mbarriers of `stage` (!llvm.ptr<3>).
  Value full(Value stage);
  Value empty(Value stage);

  /// Producer, one thread: waits until use `use`'s stage is free, then
  /// announces `bytes` bytes on its full barrier (the caller's copies
  /// complete it there). Returns the stage (a ring with a buffer a stage).
  Value acquire(Value use, int64_t bytes);
  /// Producer, every producing thread: waits until use `use`'s buffer is
  /// free (for buffers the producer's threads write themselves). Returns
  /// the buffer.
  Value acquire(Value use);
  /// Producer, every producing thread, after its writes to use `use`'s
  /// stage (and the proxy fence that makes them visible to wgmma).
  void publish(Value use);
  /// Consumer: waits until use `use`'s fill has landed.
  void waitFull(Value use);
  /// Consumer, every thread: releases use `use`'s stage.
  void release(Value use);

private:
  /// The parity of phase `phase` (index) as the i32 try_wait takes.
  Value parity(Value phase);

  Emitter &e;
  int64_t stages, consumerThreads, producerArrivals, buffers;
  Value barriers; // [2 * stages] i64: full, then empty
};

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_STAGERING_H
