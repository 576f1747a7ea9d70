//===- ReferenceTest.cpp - the naive recurrence vs golden and by hand -----===//
#include "TestUtil.h"

#include "ssd/Reference/Reference.h"
#include "ssd/Support/Compare.h"
#include "ssd/Support/RandomCase.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace ssd;

//===----------------------------------------------------------------------===//
// Against the golden cases (SSD_GOLDEN_DIR)
//===----------------------------------------------------------------------===//

namespace {
class GoldenReference : public ::testing::TestWithParam<const char *> {};
} // namespace

TEST_P(GoldenReference, MatchesExpectedOutputs) {
  std::string golden = test::goldenDir();
  if (golden.empty())
    GTEST_SKIP() << "SSD_GOLDEN_DIR is not set: golden cases unavailable";
  ssd::artifact::Expected<SSDCase> c = loadCase(golden + "/" + GetParam());
  ASSERT_TRUE(c.ok()) << c.message();
  ReferenceResult r = runReference(*c);
  // The golden outputs are the float64 recurrence stored as float32.
  double yErr = maxRelativeError(r.y, c->expectedY.data);
  double fsErr = maxRelativeError(r.finalStates, c->expectedFinalStates.data);
  EXPECT_LE(yErr, 1e-6) << GetParam() << " y";
  EXPECT_LE(fsErr, 1e-6) << GetParam() << " final_states";
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenReference,
                         ::testing::Values("c01_tiny", "c02_all_features",
                                           "c03_seq_idx", "c04_varlen",
                                           "c05_mamba2_head",
                                           "c06_groups_eq_heads"));

//===----------------------------------------------------------------------===//
// Self-contained properties
//===----------------------------------------------------------------------===//

TEST(Reference, ProcessDt) {
  double inf = INFINITY;
  EXPECT_DOUBLE_EQ(processDt(0.3, 0.0, false, 0.0, inf), 0.3);
  EXPECT_DOUBLE_EQ(processDt(0.3, 0.1, false, 0.0, inf), 0.4);
  EXPECT_DOUBLE_EQ(processDt(0.0, 0.0, true, 0.0, inf), std::log(2.0));
  // softplus is the identity above 20, and continuous enough at the switch.
  EXPECT_DOUBLE_EQ(processDt(25.0, 0.0, true, 0.0, inf), 25.0);
  EXPECT_NEAR(processDt(20.0, 0.0, true, 0.0, inf), 20.0, 1e-8);
  EXPECT_DOUBLE_EQ(processDt(-1.0, 0.0, false, 0.0, inf), 0.0);
  EXPECT_DOUBLE_EQ(processDt(1.0, 0.0, false, 0.001, 0.2), 0.2);
  EXPECT_DOUBLE_EQ(processDt(-30.0, 0.0, true, 0.001, 0.2), 0.001);
}

TEST(Reference, HandComputedScalarCase) {
  // h = p = n = 1, L = 2: S0 = a0 S_-1 + dt0 x0 B0, y0 = S0 C0 + D x0, ...
  RandomCaseOptions o;
  o.seqlen = 2;
  o.nheads = o.headdim = o.dstate = 1;
  o.D = o.initialStates = true;
  SSDCase c = makeRandomCase(o);
  c.x.data = {2.0f, -1.0f};
  c.dt.data = {0.5f, 0.25f};
  c.A.data = {-1.0f};
  c.B.data = {3.0f, 4.0f};
  c.C.data = {0.5f, 2.0f};
  c.D.data = {0.1f};
  c.initialStates.data = {1.0f};
  ReferenceResult r = runReference(c);
  double s0 = std::exp(-0.5) * 1.0 + 0.5 * 2.0 * 3.0;
  double s1 = std::exp(-0.25) * s0 + 0.25 * -1.0 * 4.0;
  EXPECT_NEAR(r.y[0], s0 * 0.5 + double(0.1f) * 2.0, 1e-12);
  EXPECT_NEAR(r.y[1], s1 * 2.0 + double(0.1f) * -1.0, 1e-12);
  EXPECT_NEAR(r.finalStates[0], s1, 1e-12);
}

TEST(Reference, ZGating) {
  RandomCaseOptions o;
  o.seqlen = 5;
  o.z = true;
  SSDCase gated = makeRandomCase(o);
  SSDCase plain = gated;
  plain.z = FloatTensor();
  ReferenceResult a = runReference(gated), b = runReference(plain);
  for (size_t i = 0; i < a.y.size(); ++i) {
    double z = gated.z.data[i];
    EXPECT_NEAR(a.y[i], b.y[i] * z / (1.0 + std::exp(-z)), 1e-12);
  }
  EXPECT_EQ(a.finalStates, b.finalStates);
}

TEST(Reference, PerChannelDEqualsBroadcastPerHeadD) {
  RandomCaseOptions o;
  o.seqlen = 7;
  o.D = true;
  SSDCase perHead = makeRandomCase(o);
  SSDCase perChannel = perHead;
  perChannel.D.shape = {o.nheads, o.headdim};
  perChannel.D.data.clear();
  for (int64_t h = 0; h < o.nheads; ++h)
    for (int64_t p = 0; p < o.headdim; ++p)
      perChannel.D.data.push_back(perHead.D.data[h]);
  EXPECT_EQ(runReference(perHead).y, runReference(perChannel).y);
}

/// Copies tokens [begin, end) of batch row 0 into a batch-1 case.
static SSDCase slice(const SSDCase &c, int64_t begin, int64_t end) {
  SSDCase s = c;
  s.seqlen = end - begin;
  s.seqIdx = IntTensor();
  s.cuSeqlens = IntTensor();
  s.initialStates = FloatTensor();
  auto cut = [&](FloatTensor &t, const FloatTensor &src, int64_t perToken) {
    t.shape[1] = s.seqlen;
    t.data.assign(src.data.begin() + begin * perToken,
                  src.data.begin() + end * perToken);
  };
  int64_t hp = c.nheads * c.headdim, gn = c.ngroups * c.dstate;
  cut(s.x, c.x, hp);
  cut(s.dt, c.dt, c.nheads);
  cut(s.B, c.B, gn);
  cut(s.C, c.C, gn);
  return s;
}

TEST(Reference, SeqIdxResetEqualsSeparateRuns) {
  RandomCaseOptions o;
  o.seqlen = 20;
  o.nheads = 4;
  o.ngroups = 2;
  o.softplus = o.dtBias = true;
  o.seqIdxCuts = {7, 13};
  SSDCase packed = makeRandomCase(o);
  ReferenceResult all = runReference(packed);
  int64_t hp = o.nheads * o.headdim;
  int64_t bounds[] = {0, 7, 13, 20};
  for (int k = 0; k < 3; ++k) {
    ReferenceResult part = runReference(slice(packed, bounds[k], bounds[k + 1]));
    for (size_t i = 0; i < part.y.size(); ++i)
      EXPECT_NEAR(part.y[i], all.y[bounds[k] * hp + i], 1e-12);
    if (k != 2)
      continue;
    for (size_t i = 0; i < part.finalStates.size(); ++i)
      EXPECT_NEAR(part.finalStates[i], all.finalStates[i], 1e-12);
  }
}

TEST(Reference, VarlenStartsEachSequenceFromItsState) {
  RandomCaseOptions o;
  o.seqlen = 12;
  o.initialStates = true;
  o.cuSeqlens = {0, 5, 5, 12};
  SSDCase varlen = makeRandomCase(o);
  ReferenceResult all = runReference(varlen);
  int64_t stateSize = o.nheads * o.headdim * o.dstate;
  int64_t hp = o.nheads * o.headdim;
  // The empty sequence 1 keeps its initial state.
  for (int64_t i = 0; i < stateSize; ++i)
    EXPECT_EQ(all.finalStates[stateSize + i],
              varlen.initialStates.data[stateSize + i]);
  for (int64_t s : {0, 2}) {
    SSDCase part = slice(varlen, varlen.cuSeqlens.data[s], varlen.cuSeqlens.data[s + 1]);
    part.initialStates.shape = {1, o.nheads, o.headdim, o.dstate};
    part.initialStates.data.assign(
        varlen.initialStates.data.begin() + s * stateSize,
        varlen.initialStates.data.begin() + (s + 1) * stateSize);
    ReferenceResult r = runReference(part);
    for (size_t i = 0; i < r.y.size(); ++i)
      EXPECT_NEAR(r.y[i], all.y[varlen.cuSeqlens.data[s] * hp + i], 1e-12);
    for (int64_t i = 0; i < stateSize; ++i)
      EXPECT_NEAR(r.finalStates[i], all.finalStates[s * stateSize + i], 1e-12);
  }
}

TEST(Reference, StrongDecayStaysFinite) {
  RandomCaseOptions o;
  o.seqlen = 50;
  o.aMin = -60.0;
  o.aMax = -20.0;
  o.dtMin = 5.0;
  o.dtMax = 50.0;
  o.softplus = true;
  ReferenceResult r = runReference(makeRandomCase(o));
  for (double v : r.y)
    ASSERT_TRUE(std::isfinite(v));
  for (double v : r.finalStates)
    ASSERT_TRUE(std::isfinite(v));
}
