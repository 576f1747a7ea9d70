//===- ParamsTest.cpp - Parameter packing and TMA descriptor requests -----===//

#include "Params.h"
#include "TensorMap.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace ssd::rt;
using ssd::rt::test::kManifest;

namespace {

template <typename T> T valueAt(const KernelParams &p, size_t i) {
  EXPECT_EQ(p.sizeAt(i), sizeof(T)) << "parameter " << i;
  T v;
  std::memcpy(&v, p.dataAt(i), sizeof(T));
  return v;
}

class ParamsTest : public ::testing::Test {
protected:
  void SetUp() override {
    Expected<Manifest> m = parseManifest(kManifest);
    ASSERT_TRUE(m.ok()) << m.message();
    manifest = m.take();
    auto add = [&](const char *name, uintptr_t address, DType t,
                   std::vector<int64_t> shape) {
      args[name] =
          TensorArg{reinterpret_cast<void *>(address), t, shape, {}, 0};
    };
    add("x", 0x100000, DType::BF16, {2, 300, 8, 64});
    add("dt", 0x200000, DType::F32, {2, 300, 8});
    add("A", 0x300000, DType::F32, {8});
    add("B", 0x400000, DType::BF16, {2, 300, 2, 128});
    add("C", 0x500000, DType::BF16, {2, 300, 2, 128});
    add("D", 0x600000, DType::F32, {8});
    add("y", 0x700000, DType::BF16, {2, 300, 8, 64});
    add("final_states", 0x800000, DType::F32, {2, 8, 64, 128});
    Expected<LaunchPlan> p = planLaunch(manifest, args, DeviceInfo());
    ASSERT_TRUE(p.ok()) << p.message();
    plan = p.take();
  }

  Manifest manifest;
  ArgumentMap args;
  LaunchPlan plan;
  const uint64_t workspaceBase = 0x9000000;
};

TEST_F(ParamsTest, PointersScalarsAndMemrefs) {
  Expected<KernelParams> p = packKernelParams(manifest, plan.kernels[0], args,
                                              plan, workspaceBase, {});
  ASSERT_TRUE(p.ok()) << p.message();
  // dt, A, then dA_cumsum as a rank-4 memref (2 + 1 + 4 + 4), then seqlen.
  ASSERT_EQ(p->count(), 2u + 11u + 1u);
  EXPECT_EQ(packedParamCount(manifest, *plan.kernels[0].spec), p->count());
  EXPECT_EQ(valueAt<uint64_t>(*p, 0), 0x200000u);
  EXPECT_EQ(valueAt<uint64_t>(*p, 1), 0x300000u);
  EXPECT_EQ(valueAt<uint64_t>(*p, 2), workspaceBase);
  EXPECT_EQ(valueAt<uint64_t>(*p, 3), workspaceBase);
  EXPECT_EQ(valueAt<int64_t>(*p, 4), 0);
  std::vector<int64_t> sizes, strides;
  for (size_t i = 5; i < 9; ++i)
    sizes.push_back(valueAt<int64_t>(*p, i));
  for (size_t i = 9; i < 13; ++i)
    strides.push_back(valueAt<int64_t>(*p, i));
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 8, 3, 128}));
  EXPECT_EQ(strides, (std::vector<int64_t>{3072, 384, 128, 1}));
  EXPECT_EQ(valueAt<int32_t>(*p, 13), 300);

  std::vector<void *> pointers = p->pointers();
  ASSERT_EQ(pointers.size(), p->count());
  EXPECT_EQ(pointers[13], p->dataAt(13));
}

TEST_F(ParamsTest, TensorMapsOptionalTensorsAndWorkspaces) {
  const KernelLaunch &fused = plan.kernels[1];
  std::vector<CUtensorMap> maps(fused.spec->params.size());
  std::memset(&maps[0], 0xab, sizeof(CUtensorMap));
  Expected<KernelParams> p =
      packKernelParams(manifest, fused, args, plan, workspaceBase, maps);
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->count(), 8u + 11u + 2u);
  EXPECT_EQ(packedParamCount(manifest, *fused.spec), p->count());
  // By value: the 128-byte descriptor itself, 64-byte aligned.
  EXPECT_EQ(p->sizeAt(0), 128u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p->dataAt(0)) % 64, 0u);
  EXPECT_EQ(std::memcmp(p->dataAt(0), &maps[0], 128), 0);
  // In global memory: a pointer into the workspace.
  EXPECT_EQ(valueAt<uint64_t>(*p, 1), workspaceBase + 24704);
  EXPECT_EQ(valueAt<uint64_t>(*p, 2), 0x500000u); // C
  EXPECT_EQ(valueAt<uint64_t>(*p, 4), 0u);        // z: optional, absent
  EXPECT_EQ(valueAt<uint64_t>(*p, 5), 0x700000u); // y
  // final_states as a memref: pointers, offset, sizes, strides.
  EXPECT_EQ(valueAt<uint64_t>(*p, 6), 0x800000u);
  EXPECT_EQ(valueAt<int64_t>(*p, 9), 2);
  EXPECT_EQ(valueAt<int64_t>(*p, 10), 8);
  EXPECT_EQ(valueAt<int64_t>(*p, 13), 8 * 64 * 128);
  EXPECT_EQ(valueAt<uint64_t>(*p, 17), workspaceBase);         // dA_cumsum
  EXPECT_EQ(valueAt<uint64_t>(*p, 18), workspaceBase + 24576); // counters
  EXPECT_EQ(valueAt<int32_t>(*p, 19), 2);
  EXPECT_EQ(valueAt<int64_t>(*p, 20), 96);
}

TEST_F(ParamsTest, TensorMapRequestIsInnermostFirst) {
  const ParamSpec &p = manifest.kernels[1].params[0];
  Expected<TensorMapRequest> r =
      makeTensorMapRequest(p.tensorMap, *manifest.findTensor("x"), args["x"]);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->rank, 4u);
  EXPECT_EQ(r->dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(r->address, args["x"].devicePtr);
  EXPECT_EQ(std::vector<cuuint64_t>(r->globalDim, r->globalDim + 4),
            (std::vector<cuuint64_t>{64, 8, 300, 2}));
  EXPECT_EQ(std::vector<cuuint64_t>(r->globalStrides, r->globalStrides + 3),
            (std::vector<cuuint64_t>{128, 1024, 307200}));
  EXPECT_EQ(std::vector<cuuint32_t>(r->boxDim, r->boxDim + 4),
            (std::vector<cuuint32_t>{64, 1, 64, 1}));
  EXPECT_EQ(std::vector<cuuint32_t>(r->elementStrides, r->elementStrides + 4),
            (std::vector<cuuint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(r->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(r->interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(r->l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  EXPECT_EQ(r->oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  const ParamSpec &pb = manifest.kernels[1].params[1];
  Expected<TensorMapRequest> rb =
      makeTensorMapRequest(pb.tensorMap, *manifest.findTensor("B"), args["B"]);
  ASSERT_TRUE(rb.ok()) << rb.message();
  EXPECT_EQ(rb->l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

TEST_F(ParamsTest, TensorMapRequestWithPanelsCopiesEveryPanelAtOnce) {
  // B [2][300][2][128] read as [2][panel][300][2][64]: the two 64-column
  // panels of a box of 64 tokens land one after the other.
  const ParamSpec &p = manifest.kernels[1].params[1];
  ASSERT_EQ(p.tensorMap.panelDim, 1);
  Expected<TensorMapRequest> r =
      makeTensorMapRequest(p.tensorMap, *manifest.findTensor("B"), args["B"]);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->rank, 5u);
  EXPECT_EQ(std::vector<cuuint64_t>(r->globalDim, r->globalDim + 5),
            (std::vector<cuuint64_t>{64, 2, 300, 2, 2}));
  // Group 256 bytes, token 512, panel 128 (64 bf16), batch row 153600.
  EXPECT_EQ(std::vector<cuuint64_t>(r->globalStrides, r->globalStrides + 4),
            (std::vector<cuuint64_t>{256, 512, 128, 153600}));
  EXPECT_EQ(std::vector<cuuint32_t>(r->boxDim, r->boxDim + 5),
            (std::vector<cuuint32_t>{64, 1, 64, 2, 1}));
  EXPECT_EQ(std::vector<cuuint32_t>(r->elementStrides, r->elementStrides + 5),
            (std::vector<cuuint32_t>{1, 1, 1, 1, 1}));

  TensorArg ragged = args["B"];
  ragged.shape = {2, 300, 2, 96};
  r = makeTensorMapRequest(p.tensorMap, *manifest.findTensor("B"), ragged);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "TMA descriptor of 'B': the innermost dimension is "
                         "96; panels of 64 elements need 1 to 256 whole "
                         "panels");
}

TEST_F(ParamsTest, TensorMapRequestChecksTheHardwareRules) {
  const ParamSpec &p = manifest.kernels[1].params[0];
  const TensorSpec &x = *manifest.findTensor("x");
  TensorArg a = args["x"];
  a.devicePtr = reinterpret_cast<void *>(0x100008);
  Expected<TensorMapRequest> r = makeTensorMapRequest(p.tensorMap, x, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "TMA descriptor of 'x': the address must be 16-byte aligned");

  a = args["x"];
  a.strides = {300 * 8 * 68, 8 * 68, 68, 1}; // Rows padded to 68: 136 bytes.
  r = makeTensorMapRequest(p.tensorMap, x, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "TMA descriptor of 'x': the stride of dimension 2 is "
                         "136 bytes; TMA needs a multiple of 16 below 2^40");

  a = args["x"];
  a.strides = {300 * 8 * 64 * 2, 8 * 64 * 2, 64 * 2, 2};
  r = makeTensorMapRequest(p.tensorMap, x, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "TMA descriptor of 'x': the innermost stride must be 1, got 2");

  a = args["x"];
  a.shape = {2, 0, 8, 64};
  r = makeTensorMapRequest(p.tensorMap, x, a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "TMA descriptor of 'x': dimension 1 is 0, TMA needs 1 to 2^32");
}

} // namespace
