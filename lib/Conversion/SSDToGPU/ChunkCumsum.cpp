//===- ChunkCumsum.cpp - the ssd_chunk_cumsum kernel ----------------------===//
//
// Grid (nc, b), 128 threads; thread t walks heads t, t+128, ... and scans
// the chunk's Q positions sequentially: dt' = clamp(softplus?(dt + bias)),
// 0 on padding, written to dt_out, and its running A*dt' sum to dA_cumsum.
// For a fixed position the threads of a warp read consecutive heads of one
// token, so the dt loads coalesce.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

static constexpr int64_t kCumsumThreads = 128;

Value processDt(Emitter &e, const SSDProblem &p, Value dt, Value bias) {
  if (bias)
    dt = e.addf(dt, bias);
  if (p.softplus) {
    // f32 layers keep libm's form: their bound (1e-4) leaves the kernels'
    // arithmetic little room; 16-bit inputs' rounding dwarfs the SFU's.
    Value soft = p.elementType.isF32()
                     ? math::Log1pOp::create(e.b, e.exp(dt)).getResult()
                     : e.softplusApprox(dt);
    dt = e.select(e.gtf(dt, e.f32(20.0)), dt, soft);
  }
  dt = e.maxf(dt, e.f32(p.dtLow));
  if (std::isfinite(p.dtHigh))
    dt = e.minf(dt, e.f32(p.dtHigh));
  return dt;
}

KernelInfo buildChunkCumsumKernel(ImplicitLocOpBuilder &b,
                                  gpu::GPUModuleOp module,
                                  const SSDProblem &p) {
  KernelInfo info;
  info.name = "ssd_chunk_cumsum";
  info.grid = {p.chunksExpr, p.batchExpr};
  info.block = kCumsumThreads;
  for (StringRef name : {"dt", "A", "dt_bias", "cu_seqlens"})
    if (p.has(name))
      info.params.push_back({name.str(), false});
  info.params.push_back({"dt_out", true});
  info.params.push_back({"dA_cumsum", true});

  KernelFunc k = createKernel(b, module, p, info);
  Emitter e(b);
  Value dt = k.arg("dt"), dtOut = k.arg("dt_out"), dA = k.arg("dA_cumsum");
  Value c = e.blockId(gpu::Dimension::x);
  Value batch = e.blockId(gpu::Dimension::y);
  ChunkRange range =
      chunkRange(e, p, c, e.dim(dt, 1), e.dim(dA, 2),
                 k.has("cu_seqlens") ? k.arg("cu_seqlens") : Value());
  e.forLoop(e.threadId(), e.idx(p.heads), e.idx(kCumsumThreads), [&](Value h) {
    Value a = e.loadF32(k.arg("A"), {h});
    Value bias = k.has("dt_bias") ? e.loadF32(k.arg("dt_bias"), {h}) : Value();
    e.forLoop(e.idx(0), e.idx(p.chunk), e.idx(1), ValueRange{e.f32(0.0)},
              [&](Value q, ValueRange sum) -> SmallVector<Value> {
                Value valid = e.lt(q, range.len);
                Value t = e.select(valid, e.add(range.start, q), e.idx(0));
                Value v = processDt(e, p, e.loadF32(dt, {batch, t, h}), bias);
                v = e.select(valid, v, e.f32(0.0));
                Value next = e.fma(a, v, sum[0]);
                e.store(v, dtOut, {batch, h, c, q});
                e.store(next, dA, {batch, h, c, q});
                return {next};
              });
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
