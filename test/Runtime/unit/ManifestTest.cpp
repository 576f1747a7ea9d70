//===- ManifestTest.cpp - Reading and validating manifests ----------------===//

#include "ssd/Runtime/Manifest.h"
#include "TestManifest.h"

#include <gtest/gtest.h>

using namespace ssd::rt;
using ssd::rt::test::kManifest;
using ssd::rt::test::manifestWith;

namespace {

TEST(Manifest, ReadsTheExample) {
  Expected<Manifest> m = parseManifest(kManifest);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->target, "sm_90a");
  EXPECT_EQ(m->compiler.name, "ssd-compile");
  EXPECT_EQ(m->compiler.version, "0.1.0");
  EXPECT_EQ(m->compiler.options.serialize(),
            R"({"strategy":"fused","chunk_size":128})");

  const Constants &c = m->constants;
  EXPECT_EQ(c.nheads, 8);
  EXPECT_EQ(c.headdim, 64);
  EXPECT_EQ(c.dstate, 128);
  EXPECT_EQ(c.ngroups, 2);
  EXPECT_EQ(c.chunkSize, 128);
  EXPECT_EQ(c.dtype, DType::BF16);
  EXPECT_EQ(c.stateDtype, DType::F32);
  EXPECT_EQ(c.features, (std::vector<std::string>{"D", "z"}));
  ASSERT_EQ(c.extra.size(), 1u);
  EXPECT_EQ(c.extra[0].first, "p_block");
  EXPECT_EQ(m->constantSymbols().at("Q"), 128);

  // nc is defined as the chunk count when the manifest does not define it.
  ASSERT_EQ(m->derived.size(), 1u);
  EXPECT_EQ(m->derived[0].first, "nc");
  EXPECT_EQ(m->derived[0].second.text(), "ceildiv(L, Q)");

  ASSERT_EQ(m->tensors.size(), 9u);
  const TensorSpec *x = m->findTensor("x");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->dtype, DType::BF16);
  EXPECT_EQ(x->shape.size(), 4u);
  EXPECT_EQ(x->alignment, 16);
  EXPECT_EQ(x->layout, Layout::Contiguous);
  EXPECT_FALSE(x->optional);
  EXPECT_TRUE(m->findTensor("z")->optional);
  EXPECT_EQ(m->findTensor("z")->layout, Layout::InnerContiguous);
  EXPECT_TRUE(m->findTensor("y")->output);
  EXPECT_EQ(m->findTensor("C")->alignment, 128);
  EXPECT_EQ(m->findTensor("D")->layout, Layout::Strided);

  ASSERT_EQ(m->workspaces.size(), 2u);
  EXPECT_EQ(m->workspaces[0].size.text(), "4*(b)*(h)*(nc)*(Q)");
  EXPECT_TRUE(m->workspaces[1].zeroInit);
  EXPECT_EQ(m->workspaces[1].alignment, 128);

  ASSERT_EQ(m->kernels.size(), 2u);
  const KernelSpec &cumsum = m->kernels[0];
  EXPECT_EQ(cumsum.name, "ssd_chunk_cumsum");
  EXPECT_EQ(cumsum.grid[1].text(), "nc");
  EXPECT_EQ(cumsum.block[0].asConstant(), std::optional<int64_t>(128));
  EXPECT_EQ(cumsum.block[1].asConstant(), std::optional<int64_t>(1));
  EXPECT_EQ(cumsum.params[2].abi, Abi::Memref);
  EXPECT_EQ(cumsum.params[3].kind, ParamKind::Scalar);
  EXPECT_EQ(cumsum.params[3].scalarType, ScalarType::I32);

  const KernelSpec &fused = m->kernels[1];
  EXPECT_EQ(fused.cluster, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(fused.sharedMemory.asConstant(), std::optional<int64_t>(200000));
  const ParamSpec &tmaX = fused.params[0];
  EXPECT_EQ(tmaX.kind, ParamKind::TensorMap);
  EXPECT_EQ(tmaX.name, "x");
  EXPECT_EQ(tmaX.tensorMap.box, (std::vector<int64_t>{1, 64, 1, 64}));
  EXPECT_EQ(tmaX.tensorMap.elementStrides, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(tmaX.tensorMap.swizzle, Swizzle::B128);
  EXPECT_TRUE(tmaX.tensorMap.byValue);
  EXPECT_EQ(tmaX.tensorMap.panelDim, -1);
  EXPECT_FALSE(fused.params[1].tensorMap.byValue);
  EXPECT_EQ(fused.params[1].tensorMap.panelDim, 1);
  EXPECT_EQ(fused.params[1].tensorMap.l2Promotion, L2Promotion::B256);
}

struct Malformed {
  const char *what;
  std::string text;
  const char *error;
};

class MalformedManifest : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedManifest, FailsNamingTheKey) {
  const Malformed &c = GetParam();
  Expected<Manifest> m = parseManifest(c.text);
  ASSERT_FALSE(m.ok()) << c.what << ": parsed";
  EXPECT_EQ(m.message(), c.error) << c.what;
}

// A key is dropped by renaming it to an "x-" extension key, which the
// reader ignores.
INSTANTIATE_TEST_SUITE_P(
    Manifest, MalformedManifest,
    ::testing::Values(
        Malformed{"not json", "{\"format\": ",
                  "line 1, column 12: unexpected "
                  "end of input, expected a value"},
        Malformed{"not an object", "[1]",
                  "manifest: expected an object, got an array"},
        Malformed{"format", manifestWith("\"ssd-artifact\"", "\"ssd\""),
                  "format: expected \"ssd-artifact\", got \"ssd\""},
        Malformed{
            "version",
            manifestWith("\"format_version\": 1", "\"format_version\": 2"),
            "format_version: this runtime reads version 1, the artifact is "
            "version 2"},
        Malformed{"no target", manifestWith("\"target\":", "\"x-target\":"),
                  "manifest: missing required key \"target\""},
        Malformed{"bad target", manifestWith("\"sm_90a\"", "\"gfx90a\""),
                  "target: expected an sm_XY[a] target, got \"gfx90a\""},
        Malformed{"unknown top-level key",
                  manifestWith("\"x-note\"", "\"note\""), "note: unknown key"},
        Malformed{"compiler version",
                  manifestWith("\"version\": \"0.1.0\",", ""),
                  "compiler: missing required key \"version\""},
        Malformed{
            "compiler options",
            manifestWith(
                "\"options\": {\"strategy\": \"fused\", \"chunk_size\": 128}",
                "\"options\": \"fused\""),
            "compiler.options: expected an object, got the string \"fused\""},
        Malformed{
            "nheads type", manifestWith("\"nheads\": 8", "\"nheads\": \"8\""),
            "constants.nheads: expected an integer, got the string \"8\""},
        Malformed{"nheads zero", manifestWith("\"nheads\": 8", "\"nheads\": 0"),
                  "constants.nheads: expected an integer >= 1, got 0"},
        Malformed{
            "chunk size fraction",
            manifestWith("\"chunk_size\": 128, \"dtype\"",
                         "\"chunk_size\": 128.5, \"dtype\""),
            "constants.chunk_size: expected an integer, got the number 128.5"},
        Malformed{"ngroups", manifestWith("\"ngroups\": 2", "\"ngroups\": 3"),
                  "constants.ngroups: 3 does not divide nheads = 8"},
        Malformed{"no dstate", manifestWith("\"dstate\": 128,", ""),
                  "constants: missing required key \"dstate\""},
        Malformed{"dtype",
                  manifestWith("\"dtype\": \"bf16\", \"state",
                               "\"dtype\": \"fp8\", \"state"),
                  "constants.dtype: expected a dtype (f32, bf16, f16), got the "
                  "string \"fp8\""},
        Malformed{"state dtype",
                  manifestWith("\"state_dtype\": \"f32\"",
                               "\"state_dtype\": \"bf16\""),
                  "constants.state_dtype: expected a dtype (f32, f16), got the "
                  "string \"bf16\""},
        Malformed{
            "feature", manifestWith("[\"D\", \"z\"]", "[\"D\", \"E\"]"),
            "constants.features[1]: expected a feature (D, Dhp, z, dt_bias, "
            "softplus, "
            "dt_limit, initial_states, seq_idx, varlen), got the string \"E\""},
        Malformed{"duplicate feature",
                  manifestWith("[\"D\", \"z\"]", "[\"z\", \"z\"]"),
                  "constants.features[1]: duplicate feature \"z\""},
        Malformed{
            "extra constant",
            manifestWith("\"p_block\": 32", "\"p_block\": \"32\""),
            "constants.p_block: expected an integer, got the string \"32\""},
        Malformed{"reserved constant",
                  manifestWith("\"p_block\": 32", "\"L\": 32"),
                  "constants.L: not usable as a constant name"},
        Malformed{
            "unknown tensor",
            manifestWith("{\"name\": \"dt\"", "{\"name\": \"delta\""),
            "tensors[1].name: unknown tensor \"delta\" (known: x, dt, A, B, C, "
            "D, z, "
            "dt_bias, initial_states, seq_idx, cu_seqlens, y, final_states)"},
        Malformed{"duplicate tensor",
                  manifestWith("{\"name\": \"dt\"", "{\"name\": \"x\""),
                  "tensors[1].name: duplicate tensor \"x\""},
        Malformed{"tensor dtype",
                  manifestWith("\"dtype\": \"f32\", \"shape\": [\"h\"]",
                               "\"dtype\": \"float\", \"shape\": [\"h\"]"),
                  "tensors[2].dtype: expected a dtype (f32, f16, bf16, f64, "
                  "i8, u8, i32, i64), "
                  "got the string \"float\""},
        Malformed{"tensor shape type",
                  manifestWith("\"shape\": [\"h\"]", "\"shape\": \"h\""),
                  "tensors[2].shape: expected an array, got the string \"h\""},
        Malformed{"shape expression",
                  manifestWith("[\"b\", \"L\", \"nheads\"]",
                               "[\"b\", \"L\", \"nheads +\"]"),
                  "tensors[1].shape[2]: in expression 'nheads +': unexpected "
                  "end, expected a "
                  "number, a name or '(' at column 9"},
        Malformed{
            "shape element",
            manifestWith("[\"b\", \"L\", \"nheads\"]", "[\"b\", \"L\", true]"),
            "tensors[1].shape[2]: expected an integer or an expression string, "
            "got true"},
        Malformed{
            "shape symbol",
            manifestWith("[\"b\", 8, 64, 128]",
                         "[\"b\", \"h\", 64, \"N + 1\"]"),
            "tensors[8].shape[3]: unknown symbol 'N' in expression 'N + 1'"},
        Malformed{"tensor key typo",
                  manifestWith("\"optional\": true", "\"optinal\": true"),
                  "tensors[6].optinal: unknown key"},
        Malformed{"alignment",
                  manifestWith("\"alignment\": 128}", "\"alignment\": 96}"),
                  "tensors[4].alignment: expected a power of two, got 96"},
        Malformed{
            "layout",
            manifestWith("\"layout\": \"strided\"", "\"layout\": \"any\""),
            "tensors[5].layout: expected one of contiguous, inner_contiguous, "
            "strided, "
            "got the string \"any\""},
        Malformed{
            "output flag", manifestWith("\"output\": true", "\"output\": 1"),
            "tensors[7].output: expected true or false, got the number 1"},
        Malformed{"no tensors", manifestWith("\"tensors\":", "\"x-tensors\":"),
                  "manifest: missing required key \"tensors\""},
        Malformed{
            "workspace size", manifestWith("\"size\": \"4*b*nc\",", ""),
            "workspaces[1]: needs \"size\" (bytes) or \"shape\" and \"dtype\""},
        Malformed{"workspace dtype",
                  manifestWith("\"dtype\": \"f32\", \"shape\": [\"b\", \"h\"",
                               "\"shape\": [\"b\", \"h\""),
                  "workspaces[0]: missing required key \"dtype\""},
        Malformed{"workspace name",
                  manifestWith("\"name\": \"counters\"", "\"name\": \"2x\""),
                  "workspaces[1].name: \"2x\" is not an identifier"},
        Malformed{"workspace size symbol",
                  manifestWith("\"4*b*nc\"", "\"4*b*chunks\""),
                  "workspaces[1].size: unknown symbol 'chunks' in expression "
                  "'4*b*chunks'"},
        Malformed{"no kernels",
                  manifestWith("\"kernels\": [", "\"kernels\": [], \"x-k\": ["),
                  "kernels: expected 1 to 64 elements, got 0"},
        Malformed{"kernel name",
                  manifestWith("\"name\": \"ssd_fused\"", "\"name\": 7"),
                  "kernels[1].name: expected a string, got the number 7"},
        Malformed{"no grid", manifestWith("\"grid\": [\"num_sms\"], ", ""),
                  "kernels[1]: missing required key \"grid\""},
        Malformed{"grid rank",
                  manifestWith("[\"b\", \"nc\", 1]", "[\"b\", \"nc\", 1, 1]"),
                  "kernels[0].grid: expected 1 to 3 elements, got 4"},
        Malformed{
            "grid symbol",
            manifestWith("[\"b\", \"nc\", 1]", "[\"b\", \"ncc\", 1]"),
            "kernels[0].grid[1]: unknown symbol 'ncc' in expression 'ncc'"},
        Malformed{
            "grid expression",
            manifestWith("[\"b\", \"nc\", 1]", "[\"b\", \"ceildiv(L)\", 1]"),
            "kernels[0].grid[1]: in expression 'ceildiv(L)': ceildiv takes 2 "
            "arguments, got 1 at column 11"},
        Malformed{"shared memory",
                  manifestWith("\"shared_memory\": 200000",
                               "\"shared_memory\": \"smem\""),
                  "kernels[1].shared_memory: unknown symbol 'smem' in "
                  "expression 'smem'"},
        Malformed{"launch condition symbol",
                  manifestWith("\"shared_memory\": 200000",
                               "\"shared_memory\": 200000, \"when\": \"lb\""),
                  "kernels[1].when: unknown symbol 'lb' in expression 'lb'"},
        Malformed{"launch condition type",
                  manifestWith("\"shared_memory\": 200000",
                               "\"shared_memory\": 200000, \"when\": true"),
                  "kernels[1].when: expected an integer or an expression "
                  "string, got true"},
        Malformed{"cluster zero",
                  manifestWith("\"cluster\": [2]", "\"cluster\": [0]"),
                  "kernels[1].cluster[0]: expected an integer >= 1, got 0"},
        Malformed{
            "cluster size",
            manifestWith("\"cluster\": [2]", "\"cluster\": [4, 4, 2]"),
            "kernels[1].cluster: a cluster holds at most 16 blocks, got 32"},
        Malformed{"param kind",
                  manifestWith("{\"kind\": \"tensor\", \"name\": \"dt\"}",
                               "{\"kind\": \"tensr\", \"name\": \"dt\"}"),
                  "kernels[0].params[0].kind: expected one of tensor, "
                  "workspace, scalar, tma, "
                  "got the string \"tensr\""},
        Malformed{
            "param tensor",
            manifestWith("{\"kind\": \"tensor\", \"name\": \"C\"}",
                         "{\"kind\": \"tensor\", \"name\": \"cu_seqlens\"}"),
            "kernels[1].params[2].name: no tensor named \"cu_seqlens\" in "
            "\"tensors\""},
        Malformed{
            "param workspace",
            manifestWith("\"name\": \"counters\"}", "\"name\": \"flags\"}"),
            "kernels[1].params[8].name: no workspace named \"flags\" in "
            "\"workspaces\""},
        Malformed{"param abi",
                  manifestWith("\"final_states\", \"abi\": \"memref\"",
                               "\"final_states\", \"abi\": \"bare\""),
                  "kernels[1].params[6].abi: expected one of ptr, memref, got "
                  "the string \"bare\""},
        Malformed{
            "memref workspace",
            manifestWith("{\"kind\": \"workspace\", \"name\": \"counters\"}",
                         "{\"kind\": \"workspace\", \"name\": \"counters\", "
                         "\"abi\": \"memref\"}"),
            "kernels[1].params[8].abi: a memref workspace needs \"shape\" on "
            "workspace "
            "\"counters\""},
        Malformed{"param key",
                  manifestWith("\"name\": \"dt\"}",
                               "\"name\": \"dt\", \"box\": [1]}"),
                  "kernels[0].params[0].box: unknown key"},
        Malformed{"scalar type",
                  manifestWith("\"type\": \"i32\", \"value\": \"L\"",
                               "\"type\": \"u32\", \"value\": \"L\""),
                  "kernels[0].params[3].type: expected one of i32, i64, got "
                  "the string \"u32\""},
        Malformed{"scalar value",
                  manifestWith("\"value\": \"L\"", "\"value\": \"Lx\""),
                  "kernels[0].params[3].value: unknown symbol 'Lx' in "
                  "expression 'Lx'"},
        Malformed{"scalar missing value",
                  manifestWith(", \"value\": \"L\"", ""),
                  "kernels[0].params[3]: missing required key \"value\""},
        Malformed{"tma tensor",
                  manifestWith("\"tensor\": \"x\"", "\"tensor\": \"q\""),
                  "kernels[1].params[0].tensor: no tensor named \"q\" in "
                  "\"tensors\""},
        Malformed{
            "tma box rank",
            manifestWith("\"box\": [1, 64, 1, 64], \"swizzle\": \"128B\"}",
                         "\"box\": [64, 1, 64], \"swizzle\": \"128B\"}"),
            "kernels[1].params[0].box: expected 4 elements, got 3"},
        Malformed{
            "tma box size",
            manifestWith("\"box\": [1, 64, 1, 64]", "\"box\": [1, 512, 1, 64]"),
            "kernels[1].params[0].box[1]: TMA box sizes are at most 256, got "
            "512"},
        Malformed{
            "tma swizzle span",
            manifestWith("\"box\": [1, 64, 1, 64]", "\"box\": [1, 64, 1, 128]"),
            "kernels[1].params[0].box: the innermost box row is 256 bytes, "
            "more than "
            "the 128-byte swizzle span"},
        Malformed{
            "tma 16 bytes",
            manifestWith("\"box\": [1, 64, 1, 64]", "\"box\": [1, 64, 1, 4]"),
            "kernels[1].params[0].box: the innermost box row is 8 bytes; TMA "
            "needs a "
            "multiple of 16"},
        Malformed{
            "tma swizzle",
            manifestWith("\"swizzle\": \"128B\"", "\"swizzle\": \"256B\""),
            "kernels[1].params[0].swizzle: expected one of none, 32B, 64B, "
            "128B, got the "
            "string \"256B\""},
        Malformed{"tma pass",
                  manifestWith("\"pass\": \"global\"", "\"pass\": \"param\""),
                  "kernels[1].params[1].pass: expected one of value, global, "
                  "got the string "
                  "\"param\""},
        Malformed{"tma element strides",
                  manifestWith("\"swizzle\": \"128B\"}",
                               "\"swizzle\": \"128B\", "
                               "\"element_strides\": [1, 1, 1, 9]}"),
                  "kernels[1].params[0].element_strides[3]: TMA element "
                  "strides are at most 8"},
        Malformed{"tma panel dimension",
                  manifestWith("\"panel_dim\": 1", "\"panel_dim\": 3"),
                  "kernels[1].params[1].panel_dim: expected a dimension from "
                  "0 to 2 (not the innermost), got 3"},
        Malformed{"tma panel dimension rank",
                  manifestWith("{\"kind\": \"tensor\", \"name\": \"C\"}",
                               "{\"kind\": \"tma\", \"tensor\": \"A\", "
                               "\"box\": [8], \"panel_dim\": 0}"),
                  "kernels[1].params[2].panel_dim: a panel dimension needs a "
                  "tensor of rank 2 to 4; \"A\" has rank 1"},
        Malformed{"tma strided tensor",
                  manifestWith("{\"kind\": \"tensor\", \"name\": \"C\"}",
                               "{\"kind\": \"tma\", \"tensor\": \"D\", "
                               "\"box\": [8]}"),
                  "kernels[1].params[2].tensor: TMA needs an innermost stride "
                  "of 1; tensor "
                  "\"D\" is declared strided"},
        Malformed{
            "derived redefinition",
            manifestWith("\"x-note\"", "\"derived\": {\"b\": 1}, \"x-n\""),
            "derived.b: 'b' is already defined"},
        Malformed{"derived symbol",
                  manifestWith("\"x-note\"",
                               "\"derived\": {\"s\": \"q + 1\"}, \"x-n\""),
                  "derived.s: unknown symbol 'q' in expression 'q + 1'"},
        Malformed{
            "duplicate key",
            manifestWith("\"target\": \"sm_90a\",",
                         "\"target\": \"sm_90a\", \"target\": \"sm_90\","),
            "line 4, column 23: duplicate key \"target\""}));

TEST(Manifest, DerivedSymbolsMayOverrideNc) {
  Expected<Manifest> m = parseManifest(
      manifestWith("\"x-note\"", "\"derived\": {\"nc\": \"ceildiv(L, Q) + 1\", "
                                 "\"work\": \"b * nc\"}, \"x-n\""));
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->derived.size(), 2u);
  EXPECT_EQ(m->derived[0].first, "nc");
  EXPECT_EQ(m->derived[1].first, "work");
}

TEST(Manifest, WorkspaceSizeFromShape) {
  Expected<Manifest> m = parseManifest(kManifest);
  ASSERT_TRUE(m.ok());
  Expected<int64_t> bytes = m->workspaces[0].size.evaluate(
      {{"b", 2}, {"h", 8}, {"nc", 3}, {"Q", 128}});
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(*bytes, 4 * 2 * 8 * 3 * 128);
}

} // namespace
