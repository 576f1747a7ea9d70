//===- CaseTest.cpp - case folder loading and validation ------------------===//
#include "TestUtil.h"

#include "ssd/Support/Case.h"
#include "ssd/Support/Npy.h"
#include "ssd/Support/RandomCase.h"

#include "llvm/Support/raw_ostream.h"

#include "gmock/gmock.h"

#include <cmath>

using namespace ssd;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

RandomCaseOptions smallOptions() {
  RandomCaseOptions o;
  o.batch = 2;
  o.seqlen = 10;
  o.nheads = 4;
  o.headdim = 3;
  o.ngroups = 2;
  o.dstate = 5;
  o.D = o.z = o.dtBias = o.softplus = o.initialStates = true;
  return o;
}

/// Writes `c` to a fresh folder and returns the loader's error (or "").
class CaseFolder : public ::testing::Test {
protected:
  std::string write(const SSDCase &c) {
    return test::errorMessage(writeCase(c, dir.path()));
  }
  std::string load() {
    ssd::artifact::Expected<SSDCase> c = loadCase(dir.path());
    return c.ok() ? std::string() : c.message();
  }
  void writeText(llvm::StringRef name, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir.file(name), ec);
    ASSERT_FALSE(ec);
    os << text;
  }
  std::string file(llvm::StringRef name) { return dir.file(name); }

  test::TempDir dir;
};

} // namespace

TEST_F(CaseFolder, RoundTripKeepsEverything) {
  SSDCase c = makeRandomCase(smallOptions());
  c.expectedY = c.x;
  c.expectedFinalStates = c.initialStates;
  c.dtLimitLo = 0.001;
  c.dtLimitHi = 0.2;
  ASSERT_EQ(write(c), "");
  ssd::artifact::Expected<SSDCase> back = loadCase(dir.path());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->x.data, c.x.data);
  EXPECT_EQ(back->z.shape, c.z.shape);
  EXPECT_EQ(back->dtBias.data, c.dtBias.data);
  EXPECT_EQ(back->initialStates.data, c.initialStates.data);
  EXPECT_EQ(back->expectedY.data, c.x.data);
  EXPECT_TRUE(back->dtSoftplus);
  EXPECT_EQ(back->dtLimitLo, 0.001);
  EXPECT_EQ(back->dtLimitHi, 0.2);
  EXPECT_EQ(back->inputNames(),
            (std::vector<std::string>{"x", "dt", "A", "B", "C", "D", "z",
                                      "dt_bias", "initial_states"}));
}

TEST_F(CaseFolder, InfiniteDtLimitIsNull) {
  ASSERT_EQ(write(makeRandomCase(smallOptions())), "");
  ssd::artifact::Expected<SSDCase> back = loadCase(dir.path());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(std::isinf(back->dtLimitHi));
}

TEST_F(CaseFolder, VarlenAndPerChannelD) {
  RandomCaseOptions o = smallOptions();
  o.batch = 1;
  o.Dhp = true;
  o.cuSeqlens = {0, 3, 3, 10};
  SSDCase c = makeRandomCase(o);
  EXPECT_EQ(c.stateShape(), (std::vector<int64_t>{3, 4, 3, 5}));
  ASSERT_EQ(write(c), "");
  EXPECT_EQ(load(), "");
}

TEST_F(CaseFolder, ShapeMismatchNamesFileAndShapes) {
  SSDCase c = makeRandomCase(smallOptions());
  ASSERT_EQ(write(c), "");
  ASSERT_TRUE(writeNpy(file("B.npy"), {2, 10, 1, 5},
                        std::vector<float>(100, 0.0f)).ok());
  EXPECT_EQ(load(), file("B.npy") +
                        ": shape (2, 10, 1, 5) does not match (batch, seqlen, "
                        "ngroups, dstate) = (2, 10, 2, 5)");
}

TEST_F(CaseFolder, StateShapeFollowsCuSeqlens) {
  RandomCaseOptions o = smallOptions();
  o.batch = 1;
  o.cuSeqlens = {0, 4, 10};
  ASSERT_EQ(write(makeRandomCase(o)), "");
  ASSERT_TRUE(writeNpy(file("initial_states.npy"), {1, 4, 3, 5},
                        std::vector<float>(60, 0.0f)).ok());
  EXPECT_THAT(load(), HasSubstr("initial_states.npy: shape (1, 4, 3, 5) does not "
                                "match (num_seqs, nheads, headdim, dstate) = "
                                "(2, 4, 3, 5)"));
}

TEST_F(CaseFolder, SeqIdxMustNotDecrease) {
  RandomCaseOptions o = smallOptions();
  o.seqIdxCuts = {4};
  SSDCase c = makeRandomCase(o);
  c.seqIdx.data[15] = 0; // row 1, token 5 after a 1 at token 4
  ASSERT_THAT(write(c), HasSubstr("seq_idx.npy: must be non-decreasing along each "
                                  "row, element (1, 5) is 0 after 1"));
}

TEST_F(CaseFolder, CuSeqlensRules) {
  RandomCaseOptions o = smallOptions();
  o.batch = 1;
  o.cuSeqlens = {0, 4, 10};
  SSDCase c = makeRandomCase(o);
  ASSERT_EQ(write(c), "");
  auto withCu = [&](std::vector<int32_t> cu) {
    EXPECT_TRUE(writeNpy(file("cu_seqlens.npy"), {int64_t(cu.size())}, cu).ok());
    return load();
  };
  EXPECT_THAT(withCu({1, 4, 10}), HasSubstr("cu_seqlens.npy: must start at 0, starts at 1"));
  EXPECT_THAT(withCu({0, 6, 4, 10}),
              HasSubstr("cu_seqlens.npy: must be non-decreasing, element 2 is 4 after 6"));
  EXPECT_THAT(withCu({0, 4, 9}),
              HasSubstr("cu_seqlens.npy: must end at seqlen 10, ends at 9"));
  EXPECT_THAT(withCu({0}), HasSubstr("at least one sequence"));
}

TEST_F(CaseFolder, CuSeqlensNeedsBatchOne) {
  RandomCaseOptions o = smallOptions();
  o.initialStates = false;
  SSDCase c = makeRandomCase(o);
  c.cuSeqlens.shape = {2};
  c.cuSeqlens.data = {0, 10};
  EXPECT_THAT(write(c), HasSubstr("cu_seqlens.npy: cu_seqlens needs batch 1, "
                                  "case.json has batch 2"));
}

TEST_F(CaseFolder, SeqIdxAndCuSeqlensAreExclusive) {
  RandomCaseOptions o = smallOptions();
  o.batch = 1;
  o.seqIdxCuts = {3};
  o.cuSeqlens = {0, 10};
  o.initialStates = false;
  EXPECT_THAT(write(makeRandomCase(o)), HasSubstr("mutually exclusive"));
}

TEST_F(CaseFolder, NonFiniteInput) {
  SSDCase c = makeRandomCase(smallOptions());
  c.x.data[7] = NAN;
  EXPECT_THAT(write(c), HasSubstr("x.npy: element (0, 0, 2, 1) is nan"));
}

TEST_F(CaseFolder, JsonProblems) {
  ASSERT_EQ(write(makeRandomCase(smallOptions())), "");
  std::string json = file("case.json");
  writeText("case.json", "{ not json");
  EXPECT_THAT(load(), StartsWith(json + ": invalid JSON"));
  writeText("case.json", "[1, 2]");
  EXPECT_EQ(load(), json + ": must hold a JSON object");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "inputs": ["x", "dt", "A", "B", "C"]})");
  EXPECT_EQ(load(), json + ": missing key 'dstate'");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 3, "dstate": 5, "inputs": ["x", "dt", "A", "B", "C"]})");
  EXPECT_EQ(load(), json + ": nheads (4) must be a multiple of ngroups (3)");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "dstate": 5, "inputs": ["x", "dt", "A", "B", "C", "w"]})");
  EXPECT_EQ(load(), json + ": unknown input 'w' in 'inputs'");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "dstate": 5, "inputs": ["x", "dt", "A", "B"]})");
  EXPECT_EQ(load(), json + ": required input 'C' not listed in 'inputs'");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "dstate": 5, "dt_limit": [0.5, 0.1],
    "inputs": ["x", "dt", "A", "B", "C"]})");
  EXPECT_EQ(load(), json + ": dt_limit low (0.5) exceeds high (0.1)");
  writeText("case.json", R"({"batch": "2", "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "dstate": 5, "inputs": ["x", "dt", "A", "B", "C"]})");
  EXPECT_EQ(load(), json + ": 'batch' must be an integer");
  writeText("case.json", R"({"batch": 2, "seqlen": 10, "nheads": 4, "headdim": 3,
    "ngroups": 2, "dstate": 5, "inputs": ["x", "dt", "A", "B", "C", "seq_idx"]})");
  EXPECT_THAT(load(), StartsWith(file("seq_idx.npy") + ": cannot read"));
}

TEST_F(CaseFolder, DtypeProblems) {
  ASSERT_EQ(write(makeRandomCase(smallOptions())), "");
  ASSERT_TRUE(writeNpy(file("A.npy"), {4}, std::vector<int32_t>(4, 1)).ok());
  EXPECT_EQ(load(), file("A.npy") + ": dtype <i4 where a float array (<f4) is expected");
}

TEST_F(CaseFolder, MissingFolder) {
  ssd::artifact::Expected<SSDCase> c = loadCase(dir.file("nope"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.message(), HasSubstr("nope: not a case folder"));
}

TEST(GoldenCases, LoadAndValidate) {
  std::string golden = test::goldenDir();
  if (golden.empty())
    GTEST_SKIP() << "SSD_GOLDEN_DIR is not set: no golden cases to load";
  for (const char *name : {"c01_tiny", "c02_all_features", "c03_seq_idx",
                           "c04_varlen", "c05_mamba2_head", "c06_groups_eq_heads"}) {
    ssd::artifact::Expected<SSDCase> c = loadCase(golden + "/" + name);
    ASSERT_TRUE(c.ok()) << c.message();
    EXPECT_EQ(c->name, name);
    EXPECT_TRUE(c->expectedY.present());
    EXPECT_TRUE(c->expectedFinalStates.present());
  }
}
