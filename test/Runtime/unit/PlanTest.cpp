//===- PlanTest.cpp - Argument checks and launch geometry -----------------===//
//
// Fake tensors (addresses that are never dereferenced) against the example
// manifest: every check that launch() makes before touching the driver.
//
//===----------------------------------------------------------------------===//

#include "ssd/Runtime/Plan.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

using namespace ssd::rt;
using ssd::rt::test::kManifest;

namespace {

void *fakePointer(int index) {
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000) +
                                  uintptr_t(index) * 0x10000000);
}

class PlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    Expected<Manifest> m = parseManifest(kManifest);
    ASSERT_TRUE(m.ok()) << m.message();
    manifest = m.take();
    setProblem(2, 300);
  }

  void setProblem(int64_t b, int64_t L) {
    args.clear();
    int i = 0;
    auto add = [&](const char *name, DType t, std::vector<int64_t> shape) {
      args[name] = TensorArg{fakePointer(i++), t, shape, {}, 0};
    };
    add("x", DType::BF16, {b, L, 8, 64});
    add("dt", DType::F32, {b, L, 8});
    add("A", DType::F32, {8});
    add("B", DType::BF16, {b, L, 2, 128});
    add("C", DType::BF16, {b, L, 2, 128});
    add("D", DType::F32, {8});
    add("y", DType::BF16, {b, L, 8, 64});
    add("final_states", DType::F32, {b, 8, 64, 128});
  }

  std::string errorOf(const PointerQuery &query = nullptr) {
    Expected<LaunchPlan> plan = planLaunch(manifest, args, device, query);
    EXPECT_FALSE(plan.ok()) << "planned";
    return plan.ok() ? "" : plan.message();
  }

  Manifest manifest;
  ArgumentMap args;
  DeviceInfo device; // An H100/H200: sm_90, 132 SMs.
};

TEST_F(PlanTest, BindsSymbolsAndComputesGeometry) {
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->symbols.at("b"), 2);
  EXPECT_EQ(plan->symbols.at("L"), 300);
  EXPECT_EQ(plan->symbols.at("nc"), 3);
  EXPECT_EQ(plan->symbols.at("num_sms"), 132);

  ASSERT_EQ(plan->kernels.size(), 2u);
  const KernelLaunch &cumsum = plan->kernels[0];
  EXPECT_EQ(cumsum.grid, (std::array<uint32_t, 3>{2, 3, 1}));
  EXPECT_EQ(cumsum.block, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(cumsum.sharedBytes, 0u);
  EXPECT_EQ(cumsum.scalarValues[3], 300);

  const KernelLaunch &fused = plan->kernels[1];
  EXPECT_EQ(fused.grid, (std::array<uint32_t, 3>{132, 1, 1}));
  EXPECT_EQ(fused.block, (std::array<uint32_t, 3>{384, 1, 1}));
  EXPECT_EQ(fused.sharedBytes, 200000u);
  EXPECT_EQ(fused.scalarValues[9], 2);
  EXPECT_EQ(fused.scalarValues[10], 3 * 32);

  // dA_cumsum (f32 [b, h, nc, Q]), then the zeroed counters aligned to 128,
  // then the global-memory TMA descriptor of B.
  ASSERT_EQ(plan->workspace.size(), 2u);
  EXPECT_EQ(plan->workspace[0].offset, 0u);
  EXPECT_EQ(plan->workspace[0].bytes, 4u * 2 * 8 * 3 * 128);
  EXPECT_EQ(plan->workspace[0].shape, (std::vector<int64_t>{2, 8, 3, 128}));
  EXPECT_FALSE(plan->workspace[0].zeroInit);
  EXPECT_EQ(plan->workspace[1].offset, 24576u);
  EXPECT_EQ(plan->workspace[1].bytes, 24u);
  EXPECT_TRUE(plan->workspace[1].zeroInit);
  EXPECT_EQ(fused.descriptorOffsets[1], 24704u);
  EXPECT_EQ(plan->workspaceBytes, 24832u);
}

TEST_F(PlanTest, AdjacentZeroedWorkspacesAreOneRange) {
  // Zeroed slots with only alignment padding between them make one range; a
  // slot that is not zeroed ends it, and an empty one does not.
  std::string text = kManifest;
  const std::string counters =
      R"({"name": "counters", "size": "4*b*nc", "zero_init": true, "alignment": 128})";
  size_t at = text.find(counters);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, counters.size(),
               counters + R"(,
    {"name": "ready", "size": "4*b", "zero_init": true, "alignment": 64},
    {"name": "none", "size": "0"},
    {"name": "flags", "size": "4", "zero_init": true},
    {"name": "scratch", "size": "100"},
    {"name": "turn", "size": "8", "zero_init": true})");
  Expected<Manifest> m = parseManifest(text);
  ASSERT_TRUE(m.ok()) << m.message();
  Expected<LaunchPlan> plan = planLaunch(*m, args, device);
  ASSERT_TRUE(plan.ok()) << plan.message();
  // counters [24576, 24600), ready [24640, 24648), none at 24832 (the
  // default alignment is 256), flags [24832, 24836), scratch [25088, 25188),
  // turn [25344, 25352).
  EXPECT_EQ(plan->zeroRanges,
            (std::vector<ByteRange>{{24576, 24836 - 24576}, {25344, 8}}));
}

/// kManifest with state-chain=auto's derived symbol: look_back is 1 where
/// the 2 * num_sms blocks give each of the b * 8 chains 8 (b * 64 <= 2 *
/// num_sms), and `workspaces` first among the workspaces.
std::string withLookBack(const std::string &workspaces = "") {
  return ssd::rt::test::manifestWith(
      R"("workspaces": [)",
      R"json("derived": {"look_back": "1 - min(1, (b * 64 - 1) / (num_sms * 2))"},
  "workspaces": [)json" + workspaces);
}

TEST_F(PlanTest, DerivedSymbolChoosesWorkspaceShapes) {
  // look_back shapes the state slots: nc + 1 of them when it is 1, a ring
  // of 2 when 0.
  std::string text = withLookBack(R"json(
    {"name": "slots", "dtype": "f32", "shape": ["b", "2 + look_back * (nc + 1 - 2)", "h"]},
    {"name": "chunk_states", "dtype": "f32", "shape": ["b", "max(1, look_back * nc)", "h"]},)json");
  Expected<Manifest> m = parseManifest(text);
  ASSERT_TRUE(m.ok()) << m.message();
  auto shapeOf = [&](const char *name) {
    Expected<LaunchPlan> plan = planLaunch(*m, args, device);
    EXPECT_TRUE(plan.ok()) << plan.message();
    for (const WorkspaceSlot &w : plan->workspace)
      if (w.name == name)
        return w.shape;
    ADD_FAILURE() << "no workspace " << name;
    return std::vector<int64_t>{};
  };
  // b = 2, L = 300 (nc = 3) on 132 SMs: 2 * 64 <= 264, look back.
  EXPECT_EQ(shapeOf("slots"), (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(shapeOf("chunk_states"), (std::vector<int64_t>{2, 3, 8}));
  // b = 5: 5 * 64 > 264, the ring and one unused chunk state.
  setProblem(5, 300);
  EXPECT_EQ(shapeOf("slots"), (std::vector<int64_t>{5, 2, 8}));
  EXPECT_EQ(shapeOf("chunk_states"), (std::vector<int64_t>{5, 1, 8}));
  // The same b on a part with more SMs looks back again.
  device.smCount = 160;
  EXPECT_EQ(shapeOf("slots"), (std::vector<int64_t>{5, 4, 8}));
}

TEST_F(PlanTest, LaunchConditionSelectsOneOfTwoKernels) {
  // state-chain=auto's form: the turn-chain kernel under 1 - look_back, the
  // look-back kernel under look_back; exactly one runs.
  std::string text = withLookBack();
  for (auto [from, to] :
       {std::pair<std::string, std::string>{
            R"("name": "ssd_fused",)",
            R"("name": "ssd_fused", "when": "look_back",)"},
        {R"("name": "ssd_chunk_cumsum",)",
         R"("name": "ssd_chunk_cumsum", "when": "1 - look_back",)"}}) {
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  Expected<Manifest> m = parseManifest(text);
  ASSERT_TRUE(m.ok()) << m.message();
  auto runs = [&] {
    Expected<LaunchPlan> plan = planLaunch(*m, args, device);
    EXPECT_TRUE(plan.ok()) << plan.message();
    std::vector<bool> out;
    for (const KernelLaunch &k : plan->kernels)
      out.push_back(k.runs());
    return out;
  };
  // b = 2 on 132 SMs: 2 * 64 <= 264 blocks, the second kernel.
  EXPECT_EQ(runs(), (std::vector<bool>{false, true}));
  // b = 5: 5 * 64 > 264, the first.
  setProblem(5, 300);
  EXPECT_EQ(runs(), (std::vector<bool>{true, false}));
  // A kernel not selected is still planned (its geometry checked), but an
  // empty grid keeps a selected kernel from running too.
  setProblem(5, 0);
  EXPECT_EQ(runs(), (std::vector<bool>{false, false}));
}

TEST_F(PlanTest, LaunchConditionErrorNamesTheKernel) {
  Expected<Manifest> m = parseManifest(
      ssd::rt::test::manifestWith(R"("name": "ssd_fused",)",
                                  R"json("name": "ssd_fused", "when": "1 / (b - 2)",)json"));
  ASSERT_TRUE(m.ok()) << m.message();
  Expected<LaunchPlan> plan = planLaunch(*m, args, device);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.message().rfind("kernel 'ssd_fused' when: ", 0), 0u)
      << plan.message();
}

TEST_F(PlanTest, OptionalTensorMayBePassed) {
  args["z"] = TensorArg{fakePointer(20), DType::BF16, {2, 300, 8, 64}, {}, 0};
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
}

TEST_F(PlanTest, EmptySequenceSkipsKernelsWithEmptyGrids) {
  setProblem(2, 0);
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_TRUE(plan->kernels[0].empty());
  EXPECT_FALSE(plan->kernels[1].empty());
}

TEST_F(PlanTest, MissingTensor) {
  args.erase("dt");
  EXPECT_EQ(errorOf(), "missing tensor argument 'dt' (f32 [b, L, nheads])");
}

TEST_F(PlanTest, UnknownTensor) {
  args["dt_bias"] = args["A"];
  EXPECT_EQ(errorOf(), "unknown tensor argument 'dt_bias'; this artifact takes "
                       "x, dt, A, B, C, D, z, y, final_states");
}

TEST_F(PlanTest, WrongDType) {
  args["x"].dtype = DType::F16;
  EXPECT_EQ(errorOf(), "tensor argument 'x': dtype is f16, expected bf16");
}

TEST_F(PlanTest, WrongRank) {
  args["dt"].shape = {2, 300};
  EXPECT_EQ(errorOf(), "tensor argument 'dt': rank is 2 [2, 300], expected 3 "
                       "[b, L, nheads]");
}

TEST_F(PlanTest, StridesOfWrongRank) {
  args["A"].strides = {1, 1};
  EXPECT_EQ(errorOf(), "tensor argument 'A': has 2 strides for rank 1");
}

TEST_F(PlanTest, InconsistentSequenceLength) {
  args["B"].shape = {2, 299, 2, 128};
  EXPECT_EQ(errorOf(), "tensor argument 'B': dimension 1 (L) is 299, but L = "
                       "300 from x dimension 1");
}

TEST_F(PlanTest, InconsistentBatch) {
  args["final_states"].shape = {3, 8, 64, 128};
  EXPECT_EQ(errorOf(), "tensor argument 'final_states': dimension 0 (b) is 3, "
                       "but b = 2 from x dimension 0");
}

TEST_F(PlanTest, WrongConstantDimension) {
  args["x"].shape = {2, 300, 9, 64};
  EXPECT_EQ(errorOf(), "tensor argument 'x': dimension 2 is 9, expected 8; "
                       "shape is [2, 300, 9, 64], expected [b, L, 8, 64]");
}

TEST_F(PlanTest, WrongNamedConstantDimension) {
  args["C"].shape = {2, 300, 1, 128};
  EXPECT_EQ(errorOf(), "tensor argument 'C': dimension 2 is 1, expected 2 (g); "
                       "shape is [2, 300, 1, 128], expected [b, L, g, n]");
}

TEST_F(PlanTest, NegativeDimension) {
  args["A"].shape = {-8};
  EXPECT_EQ(errorOf(), "tensor argument 'A': dimension 0 is -8");
}

TEST_F(PlanTest, NonContiguousStrides) {
  // A transposed view of x: [b, L, h, p] with h and L swapped in memory.
  args["x"].strides = {300 * 8 * 64, 64, 300 * 64, 1};
  EXPECT_EQ(errorOf(), "tensor argument 'x': strides [153600, 64, 19200, 1] "
                       "are not contiguous, expected [153600, 512, 64, 1]");
}

TEST_F(PlanTest, StridesOfUnitDimensionsDoNotMatter) {
  setProblem(1, 300);
  args["x"].strides = {12345, 512, 64, 1};
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
}

TEST_F(PlanTest, StridedLayoutAcceptsStrides) {
  args["D"].strides = {4};
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
  args["D"].strides = {-1};
  EXPECT_EQ(errorOf(),
            "tensor argument 'D': negative stride -1 in dimension 0");
}

// z as a model's projection split hands it out: one token's row of a wider
// buffer (W elements per token), its own channels dense.
TEST_F(PlanTest, InnerContiguousTakesProjectionViews) {
  const int64_t w = 8 * 64 * 2 + 2 * 2 * 128 + 8; // z, x, B, C, dt
  args["z"] = TensorArg{fakePointer(20), DType::BF16, {2, 300, 8, 64},
                        {300 * w, w, 64, 1}, 0};
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
  args["z"].strides = {300 * w, w, 64, 2};
  EXPECT_EQ(errorOf(), "tensor argument 'z': innermost stride is 2, "
                       "expected 1");
}

TEST_F(PlanTest, InnerContiguousRowsKeepTheAlignment) {
  // 1545 bf16 elements are 3090 bytes: the second token's row would start
  // 2 bytes past a 16-byte boundary, where the dense layout's rows (128
  // bytes per head) all start on one.
  args["z"] = TensorArg{fakePointer(20), DType::BF16, {2, 300, 8, 64},
                        {300 * 1552, 1545, 64, 1}, 0};
  EXPECT_EQ(errorOf(), "tensor argument 'z': stride 1545 of dimension 1 is "
                       "3090 bytes; rows must start at multiples of 16 bytes, "
                       "as in the dense layout");
  // A dimension of size 1 is never stepped over.
  setProblem(1, 300);
  args["z"] = TensorArg{fakePointer(20), DType::BF16, {1, 300, 8, 64},
                        {7, 1544, 64, 1}, 0};
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
}

TEST_F(PlanTest, Misaligned) {
  args["C"].devicePtr = static_cast<char *>(args["C"].devicePtr) + 64;
  EXPECT_EQ(errorOf(), "tensor argument 'C': device pointer 0x7f0040000040 is "
                       "not aligned to 128 bytes");
}

TEST_F(PlanTest, NullPointer) {
  args["y"].devicePtr = nullptr;
  EXPECT_EQ(errorOf(), "tensor argument 'y': null device pointer");
}

TEST_F(PlanTest, EmptyTensorMayBeNull) {
  setProblem(0, 300);
  args["x"].devicePtr = nullptr;
  Expected<LaunchPlan> plan = planLaunch(manifest, args, device);
  EXPECT_TRUE(plan.ok()) << plan.message();
}

TEST_F(PlanTest, WrongDeviceField) {
  args["B"].device = 1;
  EXPECT_EQ(errorOf(), "tensor argument 'B': is on device 1, but the current "
                       "device is 0");
}

TEST_F(PlanTest, HostPointer) {
  void *hostX = args["x"].devicePtr;
  PointerQuery query = [&](const void *p) -> Expected<PointerInfo> {
    return PointerInfo{p != hostX, 0};
  };
  EXPECT_EQ(errorOf(query), "tensor argument 'x': pointer 0x7f0000000000 is "
                            "not CUDA device memory (host memory, or not "
                            "allocated through CUDA)");
}

TEST_F(PlanTest, PointerOnAnotherDevice) {
  void *other = args["dt"].devicePtr;
  PointerQuery query = [&](const void *p) -> Expected<PointerInfo> {
    return PointerInfo{true, p == other ? 1 : 0};
  };
  EXPECT_EQ(errorOf(query), "tensor argument 'dt': pointer 0x7f0010000000 "
                            "belongs to device 1, but the current device is 0");
}

TEST_F(PlanTest, PointerQueryFailure) {
  PointerQuery query = [](const void *) -> Expected<PointerInfo> {
    return Status::error("cuPointerGetAttributes failed: CUDA_ERROR_X");
  };
  EXPECT_EQ(errorOf(query), "tensor argument 'x': cuPointerGetAttributes "
                            "failed: CUDA_ERROR_X");
}

TEST_F(PlanTest, OutputAliasesInput) {
  args["y"].devicePtr = args["x"].devicePtr;
  EXPECT_EQ(errorOf(), "tensor argument 'y': overlaps 'x' in memory; outputs "
                       "must not alias other tensors");
}

TEST_F(PlanTest, OutputOverlapsPartially) {
  // final_states starts inside the last bytes of y.
  args["final_states"].devicePtr =
      static_cast<char *>(args["y"].devicePtr) + 2 * 300 * 8 * 64 * 2 - 16;
  EXPECT_EQ(errorOf(), "tensor argument 'y': overlaps 'final_states' in "
                       "memory; outputs must not alias other tensors");
}

TEST_F(PlanTest, WrongArchitecture) {
  device.computeMajor = 8;
  EXPECT_EQ(errorOf(), "the artifact is compiled for sm_90a, but device 0 has "
                       "compute capability 8.0");
  device.computeMajor = 10;
  EXPECT_EQ(errorOf(), "the artifact is compiled for sm_90a, but device 0 has "
                       "compute capability 10.0");
}

TEST_F(PlanTest, TooLittleSharedMemory) {
  device.maxSharedPerBlockOptin = 101376; // An sm_86 part.
  EXPECT_EQ(errorOf(), "kernel 'ssd_fused' shared_memory: '200000' evaluates "
                       "to 200000, outside [0, 101376]");
}

TEST_F(PlanTest, ClusterMustDivideGrid) {
  device.smCount = 133;
  EXPECT_EQ(errorOf(), "kernel 'ssd_fused': grid.x = 133 is not a multiple of "
                       "the cluster size 2");
}

TEST_F(PlanTest, GridLimits) {
  // grid.y and grid.z hold at most 65535 blocks; grid.x far more.
  setProblem(70000, 1);
  Expected<Manifest> m =
      parseManifest(test::manifestWith("[\"b\", \"nc\", 1]", "[1, \"b\", 1]"));
  ASSERT_TRUE(m.ok()) << m.message();
  manifest = m.take();
  EXPECT_EQ(errorOf(), "kernel 'ssd_chunk_cumsum' grid.y: 'b' evaluates to "
                       "70000, outside [0, 65535]");
}

TEST_F(PlanTest, ScalarOverflowsI32) {
  Expected<Manifest> m = parseManifest(
      test::manifestWith("\"value\": \"L\"", "\"value\": \"L * 10000000\""));
  ASSERT_TRUE(m.ok()) << m.message();
  manifest = m.take();
  EXPECT_EQ(errorOf(), "kernel 'ssd_chunk_cumsum' scalar 'seqlen': 3000000000 "
                       "does not fit in i32");
}

TEST_F(PlanTest, ArgumentChecksAreSeparable) {
  Expected<SymbolTable> symbols = checkArguments(manifest, args, device);
  ASSERT_TRUE(symbols.ok()) << symbols.message();
  EXPECT_EQ(symbols->at("nc"), 3);
  EXPECT_EQ(symbols->at("h"), 8);
  EXPECT_EQ(symbols->at("p_block"), 32);
}

} // namespace
