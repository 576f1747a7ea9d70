//===- StatePassing.cpp - the ssd_state_passing kernel ---------------------===//
//
// Sequential over chunks, parallel over state elements: grid
// (ceil(p*n/256), h, b), one thread per (b, h, p, n) element carrying the f32
// state s. For every chunk: prev_states[c] = s, then
//   s = exp(dA[c, Q-1]) s + states[c]
// (carry 0 where seq_idx changes inside chunk c), final_states = s after the
// last chunk. Varlen (b = 1) runs the chain once per sequence over its own
// chunks, from its own initial state; a sequence without chunks keeps it.
// The next chunk's operands are loaded before the current step's store so
// that the chain waits on one load latency per step at most.
//
//===----------------------------------------------------------------------===//
#include "KernelCommon.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {

struct Element {
  Value batch, head, pp, nn;
};

/// The chain s <- carry(c) s + states[c] over chunks [first, first + count),
/// storing s before each step into prev_states. Returns the last state.
Value runChain(Emitter &e, const SSDProblem &p, const KernelFunc &k,
               const Element &el, Value first, Value count, Value init,
               Value seqLen) {
  Value dA = k.arg("dA_cumsum"), states = k.arg("states");
  Value prev = k.arg("prev_states");
  auto carryOf = [&](Value c) {
    Value carry = e.decay(e.loadF32(dA, {el.batch, el.head, c,
                                         e.idx(p.chunk - 1)}));
    if (k.has("seq_idx")) {
      Value si = k.arg("seq_idx");
      Value reset = e.ne(e.load(si, {el.batch, lastTokenOf(e, p, c, seqLen)}),
                         e.load(si, {el.batch, tokenBefore(e, p, c)}));
      carry = e.select(reset, e.f32(0.0), carry);
    }
    return carry;
  };
  SmallVector<Value> r = e.forLoop(
      e.idx(0), count, e.idx(1), ValueRange{init},
      [&](Value j, ValueRange s) -> SmallVector<Value> {
        Value c = e.add(first, j);
        Value add = e.loadF32(states, {el.batch, c, el.head, el.pp, el.nn});
        Value carry = carryOf(c);
        e.store(s[0], prev, {el.batch, c, el.head, el.pp, el.nn});
        return {e.fma(carry, s[0], add)};
      });
  return r[0];
}

Value initialState(Emitter &e, const KernelFunc &k, Value row,
                   const Element &el) {
  if (!k.has("initial_states"))
    return e.f32(0.0);
  return e.loadF32(k.arg("initial_states"), {row, el.head, el.pp, el.nn});
}

} // namespace

KernelInfo buildStatePassingKernel(ImplicitLocOpBuilder &b,
                                   gpu::GPUModuleOp module,
                                   const SSDProblem &p) {
  int64_t elements = p.headDim * p.state;
  KernelInfo info;
  info.name = "ssd_state_passing";
  info.grid = {std::to_string((elements + 255) / 256),
               std::to_string(p.heads), p.isVarlen() ? "1" : p.batchExpr};
  info.params.push_back({"states", true});
  info.params.push_back({"dA_cumsum", true});
  addParams(info, p, {"initial_states", "seq_idx", "cu_seqlens"}, false);
  info.params.push_back({"prev_states", true});
  info.params.push_back({"final_states", false});

  KernelFunc k = createKernel(b, module, p, info);
  Emitter e(b);
  Value index = e.add(e.mul(e.blockId(gpu::Dimension::x), 256), e.threadId());
  Element el{e.blockId(gpu::Dimension::z), e.blockId(gpu::Dimension::y),
             e.div(index, e.idx(p.state)), e.rem(index, e.idx(p.state))};
  Value nc = e.dim(k.arg("dA_cumsum"), 2);
  Value finals = k.arg("final_states");
  e.ifThen(e.lt(index, e.idx(elements)), [&] {
    if (!p.isVarlen()) {
      Value seqLen = k.has("seq_idx") ? e.dim(k.arg("seq_idx"), 1) : Value();
      Value s = runChain(e, p, k, el, e.idx(0), nc,
                         initialState(e, k, el.batch, el), seqLen);
      e.store(s, finals, {el.batch, el.head, el.pp, el.nn});
      return;
    }
    // Varlen: the op has no token operand; nc = ceil(L/Q) + s - 1 bounds the
    // offsets by (nc - s + 1) Q, as in the CPU lowering.
    Value cu = k.arg("cu_seqlens");
    Value zero = e.idx(0), one = e.idx(1), q = e.idx(p.chunk);
    Value numSeqs = e.sub(e.dim(cu, 0), one);
    Value maxLen = e.mul(e.add(e.sub(nc, numSeqs), one), q);
    auto cuAt = [&](Value i) {
      return e.min(e.max(e.toIndex(e.load(cu, {i})), zero), maxLen);
    };
    e.forLoop(zero, numSeqs, one, ValueRange{zero},
              [&](Value i, ValueRange base) -> SmallVector<Value> {
                Value lo = cuAt(i);
                Value hi = e.max(cuAt(e.add(i, one)), lo);
                Value count = e.div(e.add(e.sub(hi, lo), e.idx(p.chunk - 1)), q);
                count = e.min(count, e.max(e.sub(nc, base[0]), zero));
                Element seqEl = el;
                seqEl.batch = zero;
                Value s = runChain(e, p, k, seqEl, base[0], count,
                                   initialState(e, k, i, el), Value());
                e.store(s, finals, {i, el.head, el.pp, el.nn});
                return {e.add(base[0], count)};
              });
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
