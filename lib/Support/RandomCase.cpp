//===- RandomCase.cpp - random SSD problems -------------------------------===//
#include "ssd/Support/RandomCase.h"

#include <cmath>
#include <random>

using namespace ssd;

namespace {
/// Uniform doubles from a 64-bit Mersenne twister, identical on every
/// platform (std::uniform_real_distribution is not).
class Uniform {
public:
  explicit Uniform(uint64_t seed) : engine(seed) {}
  double operator()(double lo, double hi) {
    double unit = static_cast<double>(engine() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * unit;
  }
  FloatTensor tensor(std::vector<int64_t> shape, double lo, double hi) {
    FloatTensor t;
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    t.shape = std::move(shape);
    t.data.resize(count);
    for (float &v : t.data)
      v = static_cast<float>((*this)(lo, hi));
    return t;
  }

private:
  std::mt19937_64 engine;
};
} // namespace

SSDCase ssd::makeRandomCase(const RandomCaseOptions &o) {
  SSDCase c;
  c.name = "random";
  c.batch = o.batch;
  c.seqlen = o.seqlen;
  c.nheads = o.nheads;
  c.headdim = o.headdim;
  c.ngroups = o.ngroups;
  c.dstate = o.dstate;
  c.dtSoftplus = o.softplus;
  c.dtLimitLo = o.dtLimitLo;
  c.dtLimitHi = o.dtLimitHi;

  Uniform rand(o.seed);
  int64_t b = o.batch, L = o.seqlen, h = o.nheads, p = o.headdim,
          g = o.ngroups, n = o.dstate;
  c.x = rand.tensor({b, L, h, p}, -1.0, 1.0);
  // With softplus the raw dt is drawn so that softplus(dt) spans the range.
  double dtLo = o.softplus ? std::log(std::expm1(o.dtMin)) : o.dtMin;
  double dtHi = o.softplus ? std::log(std::expm1(o.dtMax)) : o.dtMax;
  c.dt = rand.tensor({b, L, h}, dtLo, dtHi);
  c.A = rand.tensor({h}, o.aMin, o.aMax);
  c.B = rand.tensor({b, L, g, n}, -1.0, 1.0);
  c.C = rand.tensor({b, L, g, n}, -1.0, 1.0);
  if (o.Dhp)
    c.D = rand.tensor({h, p}, 0.5, 1.5);
  else if (o.D)
    c.D = rand.tensor({h}, 0.5, 1.5);
  if (o.z)
    c.z = rand.tensor({b, L, h, p}, -2.0, 2.0);
  if (o.dtBias)
    c.dtBias = rand.tensor({h}, -0.2, 0.2);

  if (!o.cuSeqlens.empty()) {
    c.cuSeqlens.shape = {static_cast<int64_t>(o.cuSeqlens.size())};
    c.cuSeqlens.data = o.cuSeqlens;
  }
  if (!o.seqIdxCuts.empty()) {
    c.seqIdx.shape = {b, L};
    c.seqIdx.data.assign(b * L, 0);
    for (int64_t row = 0; row < b; ++row)
      for (int64_t l = 0; l < L; ++l) {
        int32_t id = 0;
        for (int64_t cut : o.seqIdxCuts)
          id += l >= cut;
        c.seqIdx.data[row * L + l] = id;
      }
  }
  if (o.initialStates)
    c.initialStates = rand.tensor(c.stateShape(), -1.0, 1.0);
  return c;
}
