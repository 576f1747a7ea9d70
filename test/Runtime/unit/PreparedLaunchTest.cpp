//===- PreparedLaunchTest.cpp - Launches that reuse their host work -------===//
//
// Artifact::launch end to end against the fake driver (FakeCudaDriver.cpp):
// a repeated argument set must skip the checks, the descriptor encoding and
// the shared-memory opt-in, and every change the prepared work depends on
// (a pointer, a shape, the workspace, the context) must redo it.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"
#include "TestManifest.h"
#include "ssd/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ssd::rt;
using ssd::rt::fake::FakeCudaState;
using ssd::rt::test::kManifest;

namespace {

// Before any test runs: the process-wide driver is the fake.
const bool driverFaked =
    setenv("SSD_RT_CUDA_DRIVER", SSD_RT_FAKE_DRIVER_PATH, 1) == 0;

const char kCubin[] = "\x7f"
                      "ELF-not-really-a-cubin";

ArgumentMap problem(int64_t length) {
  ArgumentMap args;
  auto add = [&](const char *name, uintptr_t address, DType t,
                 std::vector<int64_t> shape) {
    args[name] = TensorArg{reinterpret_cast<void *>(address), t, shape, {}, 0};
  };
  add("x", 0x100000, DType::BF16, {1, length, 8, 64});
  add("dt", 0x200000, DType::F32, {1, length, 8});
  add("A", 0x300000, DType::F32, {8});
  add("B", 0x400000, DType::BF16, {1, length, 2, 128});
  add("C", 0x500000, DType::BF16, {1, length, 2, 128});
  add("D", 0x600000, DType::F32, {8});
  add("y", 0x700000, DType::BF16, {1, length, 8, 64});
  add("final_states", 0x800000, DType::F32, {1, 8, 64, 128});
  return args;
}

class PreparedLaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(driverFaked);
    fake = ssdFakeCudaState();
    *fake = FakeCudaState{};
    fake->paramsToRecord = 2;
    Expected<Artifact> a = Artifact::fromMemory(
        kManifest, std::vector<char>(kCubin, kCubin + sizeof(kCubin)),
        "fake-artifact");
    ASSERT_TRUE(a.ok()) << a.message();
    artifact = std::make_unique<Artifact>(a.take());
  }

  Status launch(const ArgumentMap &args, Workspace workspace = {}) {
    return artifact->launch(args, nullptr, workspace);
  }

  /// Where the fused kernel's by-pointer descriptor of B lives in the
  /// workspace (its parameter 1).
  uint64_t descriptorOffsetOfB(const ArgumentMap &args) {
    Expected<LaunchPlan> plan = artifact->plan(args, DeviceInfo{});
    EXPECT_TRUE(plan.ok()) << plan.message();
    return plan.ok() ? plan->kernels[1].descriptorOffsets[1] : 0;
  }

  FakeCudaState *fake = nullptr;
  std::unique_ptr<Artifact> artifact;
};

TEST_F(PreparedLaunchTest, ARepeatedLaunchOnlyEnqueues) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->moduleLoads, 1);
  EXPECT_EQ(fake->pointerQueries, 8); // One per tensor.
  EXPECT_EQ(fake->tensorMapEncodes, 2);
  EXPECT_EQ(fake->sharedOptIns, 1);
  EXPECT_EQ(fake->lastSharedOptIn, 200000);
  EXPECT_EQ(fake->launches, 2);
  int attributeQueries = fake->deviceAttributeQueries;

  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->pointerQueries, 8);
  EXPECT_EQ(fake->tensorMapEncodes, 2);
  EXPECT_EQ(fake->sharedOptIns, 1);
  EXPECT_EQ(fake->deviceAttributeQueries, attributeQueries);
  // The enqueued work is all still there, every time.
  EXPECT_EQ(fake->launches, 8);
  EXPECT_EQ(fake->memsets, 4);
  EXPECT_EQ(fake->descriptorCopies, 4);
  EXPECT_EQ(fake->lastParams[0], 0x100000u); // x's descriptor, by value.
}

TEST_F(PreparedLaunchTest, ANewPointerIsCheckedAndEncodedAgain) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  ArgumentMap moved = args;
  moved["x"].devicePtr = reinterpret_cast<void *>(0x900000);
  ASSERT_TRUE(launch(moved).ok());
  EXPECT_EQ(fake->pointerQueries, 16);
  EXPECT_EQ(fake->tensorMapEncodes, 4);
  EXPECT_EQ(fake->lastParams[0], 0x900000u);
  // Back to the first set: prepared, and its own descriptor again.
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->tensorMapEncodes, 4);
  EXPECT_EQ(fake->lastParams[0], 0x100000u);
}

TEST_F(PreparedLaunchTest, AMovedWorkspaceRepacksWithoutEncoding) {
  ArgumentMap args = problem(128);
  Expected<uint64_t> bytes = artifact->workspaceSize(args);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  uint64_t offset = descriptorOffsetOfB(args);
  ASSERT_NE(offset, 0u);

  uint64_t first = 0x10000000, second = 0x20000000;
  ASSERT_TRUE(launch(args, {reinterpret_cast<void *>(first), *bytes}).ok());
  EXPECT_EQ(fake->lastParams[1], first + offset);
  ASSERT_TRUE(launch(args, {reinterpret_cast<void *>(second), *bytes}).ok());
  EXPECT_EQ(fake->lastParams[1], second + offset);
  // workspaceSize prepared the launch: one encoding of each map in all.
  EXPECT_EQ(fake->tensorMapEncodes, 2);
  EXPECT_EQ(fake->pointerQueries, 8);

  // An allocated workspace is where the driver put it.
  fake->nextAllocation = 0x30000000;
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->lastParams[1], 0x30000000 + offset);
  EXPECT_EQ(fake->tensorMapEncodes, 2);
}

TEST_F(PreparedLaunchTest, PreparedLaunchesStillCheckTheWorkspace) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  Status small = launch(args, {reinterpret_cast<void *>(0x10000000), 64});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.message().find("workspace: 64 bytes given, the launch needs"),
            std::string::npos)
      << small.message();
  Status misaligned =
      launch(args, {reinterpret_cast<void *>(0x10000010), uint64_t(1) << 30});
  ASSERT_FALSE(misaligned.ok());
  EXPECT_NE(misaligned.message().find("256-byte aligned"), std::string::npos)
      << misaligned.message();
}

TEST_F(PreparedLaunchTest, ANewShapeIsPlannedAgain) {
  ASSERT_TRUE(launch(problem(128)).ok());
  ASSERT_TRUE(launch(problem(256)).ok());
  EXPECT_EQ(fake->tensorMapEncodes, 4);
  EXPECT_EQ(fake->pointerQueries, 16);
  // The opt-in belongs to the function: asked for once.
  EXPECT_EQ(fake->sharedOptIns, 1);
}

TEST_F(PreparedLaunchTest, BadArgumentsAfterGoodOnesAreStillErrors) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  ArgumentMap bad = args;
  bad["B"].shape[2] = 3;
  Status s = launch(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tensor argument 'B': dimension 2"),
            std::string::npos)
      << s.message();
  ArgumentMap misaligned = args;
  misaligned["C"].devicePtr = reinterpret_cast<void *>(0x500040);
  s = launch(misaligned);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not aligned to 128 bytes"), std::string::npos)
      << s.message();
  EXPECT_EQ(fake->launches, 2); // Only the good launch's kernels.
}

TEST_F(PreparedLaunchTest, AnotherContextLoadsAndPreparesAgain) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  fake->context = 0x2000;
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->moduleLoads, 2);
  EXPECT_EQ(fake->tensorMapEncodes, 4);
  EXPECT_EQ(fake->sharedOptIns, 2); // The new module's function.
  fake->context = 0x1000;
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->moduleLoads, 2);
  EXPECT_EQ(fake->tensorMapEncodes, 4);
}

// A context destroyed and created again may come back at the same handle:
// its id tells it apart, so the module is loaded into it again and nothing
// prepared for the old one is reused.
TEST_F(PreparedLaunchTest, AContextRecreatedAtTheSameHandleLoadsAgain) {
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  EXPECT_GT(fake->contextIdQueries, 0);
  fake->contextId = 2;
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->moduleLoads, 2);
  EXPECT_EQ(fake->tensorMapEncodes, 4);
  EXPECT_EQ(fake->sharedOptIns, 2); // The new module's function.
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->moduleLoads, 2);
  EXPECT_EQ(fake->tensorMapEncodes, 4);
}

TEST_F(PreparedLaunchTest, AFailedEnqueueIsReportedAndLeavesNoTrace) {
  ArgumentMap args = problem(128);
  fake->failLaunches = true;
  Status s = launch(args);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kernel 'ssd_chunk_cumsum' (1 of 2): launch "
                             "failed: CUDA_ERROR_FAKE"),
            std::string::npos)
      << s.message();
  fake->failLaunches = false;
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->tensorMapEncodes, 2);
}

/// The parameter sizes of the test manifest's kernels, as a cubin built
/// from it declares them.
void declareParamSizes(FakeCudaState *fake) {
  std::vector<size_t> cumsum(13, 8); // dt, A, dA_cumsum's 11 memref words
  cumsum.push_back(4);               // seqlen, i32
  std::vector<size_t> fused = {128, 8, 8, 8, 8, 8}; // x's map, B's, C .. y
  fused.insert(fused.end(), 11, 8);                 // final_states, memref
  fused.insert(fused.end(), {8, 8, 4, 8}); // workspaces, batch, nchunks
  fake->paramSizes["ssd_chunk_cumsum"] = cumsum;
  fake->paramSizes["ssd_fused"] = fused;
}

TEST_F(PreparedLaunchTest, AKnownLayoutLaunchesOneBuffer) {
  declareParamSizes(fake);
  ArgumentMap args = problem(128);
  ASSERT_TRUE(launch(args).ok());
  ASSERT_TRUE(launch(args).ok());
  EXPECT_EQ(fake->launches, 4);
  EXPECT_EQ(fake->bufferLaunches, 4);
  EXPECT_EQ(fake->paramQueriesPastTheEnd, 0); // No API error to report.
  EXPECT_EQ(fake->lastParams[0], 0x100000u); // x's descriptor, by value.
  EXPECT_EQ(fake->lastParams[1],
            fake->nextAllocation + descriptorOffsetOfB(args));
}

TEST_F(PreparedLaunchTest, ALayoutUnlikeTheManifestsIsAnError) {
  declareParamSizes(fake);
  fake->paramSizes["ssd_fused"].pop_back();
  Status s = launch(problem(128));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "kernel 'ssd_fused' (2 of 2): the cubin's function "
                         "takes 20 parameters, the manifest lists 21; the "
                         "manifest does not describe this cubin");

  SetUp(); // A fresh artifact, whose module asks for the layout again.
  declareParamSizes(fake);
  fake->paramSizes["ssd_fused"][0] = 8;
  s = launch(problem(128));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "kernel 'ssd_fused' (2 of 2): parameter 0 is 8 bytes "
                         "in the cubin, 128 as the manifest lists it; the "
                         "manifest does not describe this cubin");
  EXPECT_EQ(fake->launches, 0); // Nothing was enqueued.
  EXPECT_EQ(fake->memsets, 0);
}

} // namespace
