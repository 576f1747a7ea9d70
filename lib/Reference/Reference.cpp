//===- Reference.cpp - the naive sequential SSD recurrence ----------------===//
//
// Straight from the semantics in golden/README.md:
//
//   dt'  = clamp(softplus?(dt + dt_bias[h]), dt_limit)
//   S_t  = exp(A[h] dt'_t) S_{t-1} + dt'_t outer(x_t, B_t[g])      (p, n)
//   y_t  = S_t C_t[g] + D x_t ;  y_t *= z_t sigmoid(z_t)
//
// S starts from initial_states (or zero), is reset to zero where seq_idx
// changes, and with cu_seqlens restarts from each sequence's own initial
// state. Everything is computed in double.
//
//===----------------------------------------------------------------------===//
#include "ssd/Reference/Reference.h"

#include <algorithm>
#include <cmath>

using namespace ssd;

double ssd::processDt(double dt, double bias, bool softplus, double lo,
                      double hi) {
  double v = dt + bias;
  if (softplus && v <= 20.0)
    v = std::log1p(std::exp(v));
  return std::min(std::max(v, lo), hi);
}

namespace {
/// Runs the recurrence over the tokens of one batch row and head.
class HeadScan {
public:
  HeadScan(const SSDCase &c, ReferenceResult &out, int64_t b, int64_t h)
      : c(c), out(out), b(b), h(h), P(c.headdim), N(c.dstate),
        group(h / (c.nheads / c.ngroups)), state(P * N, 0.0) {}

  /// Sets the state to `initial_states[index, h]`, or to zero when the case
  /// has none.
  void loadInitial(int64_t index) {
    if (!c.initialStates.present()) {
      std::fill(state.begin(), state.end(), 0.0);
      return;
    }
    const float *src = &c.initialStates.data[stateOffset(index)];
    std::copy(src, src + P * N, state.begin());
  }

  void reset() { std::fill(state.begin(), state.end(), 0.0); }

  /// Writes the state to `final_states[index, h]`.
  void storeFinal(int64_t index) {
    std::copy(state.begin(), state.end(),
              out.finalStates.begin() + stateOffset(index));
  }

  /// Consumes token `l` of the row: updates the state and writes y.
  void step(int64_t l) {
    int64_t L = c.seqlen, H = c.nheads, G = c.ngroups;
    int64_t token = b * L + l;
    double bias = c.dtBias.present() ? c.dtBias.data[h] : 0.0;
    double dt = processDt(c.dt.data[token * H + h], bias, c.dtSoftplus,
                          c.dtLimitLo, c.dtLimitHi);
    double decay = std::exp(static_cast<double>(c.A.data[h]) * dt);
    const float *x = &c.x.data[(token * H + h) * P];
    const float *B = &c.B.data[(token * G + group) * N];
    const float *C = &c.C.data[(token * G + group) * N];
    double *y = &out.y[(token * H + h) * P];
    for (int64_t p = 0; p < P; ++p) {
      double *row = &state[p * N];
      double xdt = dt * x[p];
      double acc = 0.0;
      for (int64_t n = 0; n < N; ++n) {
        row[n] = decay * row[n] + xdt * B[n];
        acc += row[n] * C[n];
      }
      y[p] = acc + skip(p) * x[p];
    }
    if (c.z.present()) {
      const float *z = &c.z.data[(token * H + h) * P];
      for (int64_t p = 0; p < P; ++p) {
        double zv = z[p];
        y[p] *= zv / (1.0 + std::exp(-zv));
      }
    }
  }

private:
  int64_t stateOffset(int64_t index) const {
    return (index * c.nheads + h) * P * N;
  }
  /// The skip coefficient D for channel p (per head or per channel).
  double skip(int64_t p) const {
    if (!c.D.present())
      return 0.0;
    return c.D.shape.size() == 1 ? c.D.data[h] : c.D.data[h * P + p];
  }

  const SSDCase &c;
  ReferenceResult &out;
  int64_t b, h, P, N, group;
  std::vector<double> state;
};
} // namespace

ReferenceResult ssd::runReference(const SSDCase &c) {
  ReferenceResult out;
  out.y.assign(c.x.data.size(), 0.0);
  std::vector<int64_t> stateShape = c.stateShape();
  out.finalStates.assign(stateShape[0] * c.nheads * c.headdim * c.dstate, 0.0);

  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t h = 0; h < c.nheads; ++h) {
      HeadScan scan(c, out, b, h);
      if (c.varlen()) {
        // Each sequence [cu[s], cu[s+1]) starts from its own initial state;
        // an empty one passes its initial state through.
        for (int64_t s = 0; s < c.numSeqs(); ++s) {
          scan.loadInitial(s);
          for (int64_t l = c.cuSeqlens.data[s]; l < c.cuSeqlens.data[s + 1]; ++l)
            scan.step(l);
          scan.storeFinal(s);
        }
        continue;
      }
      scan.loadInitial(b);
      for (int64_t l = 0; l < c.seqlen; ++l) {
        if (c.seqIdx.present() && l > 0 &&
            c.seqIdx.data[b * c.seqlen + l] != c.seqIdx.data[b * c.seqlen + l - 1])
          scan.reset();
        scan.step(l);
      }
      scan.storeFinal(b);
    }
  }
  return out;
}
