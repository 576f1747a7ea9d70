//===- StageRing.cpp - shared-memory stages from a producer to consumers --===//
#include "StageRing.h"
#include "TmaCopy.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

StageRing::StageRing(Emitter &e, KernelFunc &kernel, int64_t stages,
                     int64_t consumerThreads, int64_t producerArrivals,
                     int64_t buffers)
    : e(e), stages(stages), consumerThreads(consumerThreads),
      producerArrivals(producerArrivals), buffers(buffers ? buffers : stages) {
  assert(stages > 0 && consumerThreads > 0 && producerArrivals > 0 &&
         "a ring with writers and readers");
  assert(stages % this->buffers == 0 && "buffers divide the stages");
  barriers = kernel.sharedBuffer({2 * stages}, e.b.getI64Type());
}

void StageRing::init() {
  for (int64_t s = 0; s < stages; ++s) {
    initTmaBarrier(e, full(e.idx(s)), producerArrivals);
    initTmaBarrier(e, empty(e.idx(s)), consumerThreads);
  }
}

Value StageRing::stage(Value use) { return e.rem(use, e.idx(stages)); }

Value StageRing::buffer(Value use) { return e.rem(use, e.idx(buffers)); }

Value StageRing::full(Value stage) {
  return elementPointer(e, barriers, {stage}, /*space=*/3);
}

Value StageRing::empty(Value stage) {
  return elementPointer(e, barriers, {e.add(stage, e.idx(stages))},
                        /*space=*/3);
}

Value StageRing::parity(Value phase) {
  return arith::IndexCastOp::create(e.b, e.b.getI32Type(),
                                    e.rem(phase, e.idx(2)));
}

Value StageRing::acquire(Value use) {
  if (buffers != stages) {
    // Use i reuses the buffer of use i - buffers, whose release completes
    // its own stage's empty phase.
    e.ifThen(e.le(e.idx(buffers), use), [&] {
      Value before = e.sub(use, e.idx(buffers));
      waitTmaBarrier(e, empty(stage(before)),
                     parity(e.div(before, e.idx(stages))));
    });
    return buffer(use);
  }
  // A buffer a stage (the same wait as above, in fills of the stage): use
  // i is the stage's fill u, which reuses the buffer of fill u - 1.
  Value s = stage(use);
  Value fill = e.div(use, e.idx(stages));
  e.ifThen(e.lt(e.idx(0), fill),
           [&] { waitTmaBarrier(e, empty(s), parity(e.sub(fill, e.idx(1)))); });
  return s;
}

Value StageRing::acquire(Value use, int64_t bytes) {
  assert(producerArrivals == 1 && "a TMA fill has one arriving thread");
  assert(buffers == stages && "a TMA fill's stage is its buffer");
  Value s = acquire(use);
  expectTmaBytes(e, full(s), bytes);
  return s;
}

void StageRing::publish(Value use) {
  NVVM::MBarrierArriveOp::create(e.b, /*res=*/Type(), full(stage(use)),
                                 /*count=*/Value(), NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
}

void StageRing::waitFull(Value use) {
  waitTmaBarrier(e, full(stage(use)), parity(e.div(use, e.idx(stages))));
}

void StageRing::release(Value use) {
  NVVM::MBarrierArriveOp::create(e.b, /*res=*/Type(), empty(stage(use)),
                                 /*count=*/Value(), NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
}

} // namespace gpu_lowering
} // namespace ssd
