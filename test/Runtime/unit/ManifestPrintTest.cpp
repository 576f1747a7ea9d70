//===- ManifestPrintTest.cpp - Writing manifests with the artifact library ===//
//
// The compiler prints manifests with printManifest and the runtime parses
// them with parseManifest: printing a parsed manifest must give back the
// text, byte for byte, and every field must survive the trip.
//
//===----------------------------------------------------------------------===//

#include "TestManifest.h"

#include "ssd/Artifact/Manifest.h"

#include <cmath>

using namespace ssd::artifact;

namespace {

/// A manifest in the layout ssd-compile writes: fixed header order,
/// alphabetical members, defaults left out, dimension lists as given.
const char *kPrinted = R"json({
  "format": "ssd-artifact",
  "format_version": 1,
  "target": "sm_90a",
  "compiler": {
    "name": "ssd-compile",
    "version": "0.1.0",
    "options": {
      "strategy": "unfused",
      "dt_limit": [0.5, null]
    }
  },
  "constants": {
    "nheads": 4,
    "headdim": 64,
    "dstate": 128,
    "ngroups": 1,
    "chunk_size": 128,
    "dtype": "bf16",
    "state_dtype": "f32",
    "features": ["D", "dt_limit"],
    "p_block": 32
  },
  "derived": {
    "nc": "ceildiv(L, Q)",
    "work": "b * nc * h"
  },
  "tensors": [
    {
      "dtype": "bf16",
      "name": "x",
      "shape": ["b", "L", 4, 64]
    },
    {
      "alignment": 128,
      "dtype": "f32",
      "layout": "inner_contiguous",
      "name": "D",
      "optional": true,
      "shape": [4]
    },
    {
      "dtype": "bf16",
      "name": "y",
      "output": true,
      "shape": ["b", "L", 4, 64]
    }
  ],
  "workspaces": [
    {
      "dtype": "f32",
      "name": "dA_cumsum",
      "shape": ["b", "h", "nc", "Q"]
    },
    {
      "alignment": 128,
      "name": "ready",
      "size": "4 * b * nc",
      "zero_init": true
    }
  ],
  "kernels": [
    {
      "block": [128, 1, 1],
      "cluster": [2],
      "grid": ["nc", 1],
      "name": "ssd_scan",
      "params": [
        {
          "abi": "memref",
          "kind": "tensor",
          "name": "x"
        },
        {
          "box": [1, 64, 1, 64],
          "kind": "tma",
          "l2_promotion": "256B",
          "pass": "global",
          "swizzle": "128B",
          "tensor": "y"
        },
        {
          "kind": "workspace",
          "name": "ready"
        },
        {
          "kind": "scalar",
          "name": "seqlen",
          "type": "i64",
          "value": "L"
        }
      ],
      "shared_memory": 0
    }
  ]
}
)json";

TEST(ManifestPrint, GivesBackTheTextItParsed) {
  Expected<Manifest> m = parseManifest(kPrinted);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(printManifest(*m), kPrinted);
}

TEST(ManifestPrint, KeepsEveryFieldOfTheExample) {
  Expected<Manifest> first = parseManifest(ssd::rt::test::kManifest);
  ASSERT_TRUE(first.ok()) << first.message();
  std::string text = printManifest(*first);
  Expected<Manifest> second = parseManifest(text);
  ASSERT_TRUE(second.ok()) << second.message() << "\n" << text;
  EXPECT_EQ(printManifest(*second), text);
  const Manifest &a = *first, &b = *second;
  EXPECT_EQ(b.constants.extra, a.constants.extra);
  EXPECT_EQ(b.compiler.options.serialize(), a.compiler.options.serialize());
  ASSERT_EQ(b.tensors.size(), a.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(b.tensors[i].alignment, a.tensors[i].alignment);
    EXPECT_EQ(b.tensors[i].layout, a.tensors[i].layout);
    EXPECT_EQ(b.tensors[i].optional, a.tensors[i].optional);
  }
  ASSERT_EQ(b.workspaces.size(), 2u);
  EXPECT_EQ(b.workspaces[1].size.text(), "4*b*nc");
  EXPECT_EQ(b.workspaces[1].alignment, 128);
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_EQ(b.kernels[1].cluster[0], 2);
  const TensorMapSpec &tm = b.kernels[1].params[1].tensorMap;
  EXPECT_EQ(tm.l2Promotion, L2Promotion::B256);
  EXPECT_FALSE(tm.byValue);
  EXPECT_EQ(b.kernels[1].params[10].value.text(), "nc * p_block");
}

TEST(ManifestPrint, KeepsALaunchConditionAndLeavesOutTheDefault) {
  Expected<Manifest> m = parseManifest(ssd::rt::test::manifestWith(
      R"("name": "ssd_fused",)", R"("name": "ssd_fused", "when": "b - 1",)"));
  ASSERT_TRUE(m.ok()) << m.message();
  std::string text = printManifest(*m);
  Expected<Manifest> again = parseManifest(text);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->kernels[1].when.text(), "b - 1");
  // The other kernel always runs, and says nothing about it.
  EXPECT_EQ(again->kernels[0].when.asConstant(), std::optional<int64_t>(1));
  EXPECT_EQ(text.find("\"when\""), text.rfind("\"when\""));
}

TEST(ManifestPrint, LeavesOutTheImpliedChunkCount) {
  Expected<Manifest> m = parseManifest(ssd::rt::test::kManifest);
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_TRUE(m->ncImplied);
  ASSERT_EQ(m->derived.front().first, "nc");
  EXPECT_EQ(printManifest(*m).find("\"derived\""), std::string::npos);
}

TEST(ManifestPrint, SizeFromShapeIsNotWritten) {
  Expected<Manifest> m = parseManifest(kPrinted);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_FALSE(m->workspaces[0].sizeGiven);
  EXPECT_TRUE(m->workspaces[1].sizeGiven);
}

TEST(JsonPrint, LaysOutForPeople) {
  JsonValue doc = JsonValue::makeObject();
  doc.add("empty", JsonValue::makeObject());
  doc.add("none", JsonValue::makeArray());
  doc.add("dims", JsonValue::makeArray(
                      {JsonValue::makeInteger(1), JsonValue::makeString("b")}));
  JsonValue nested = JsonValue::makeArray({JsonValue::makeArray()});
  doc.add("nested", nested);
  EXPECT_EQ(printJson(doc), "{\n"
                            "  \"empty\": {},\n"
                            "  \"none\": [],\n"
                            "  \"dims\": [1, \"b\"],\n"
                            "  \"nested\": [\n"
                            "    []\n"
                            "  ]\n"
                            "}");
}

TEST(JsonPrint, NonFiniteNumbersAreNull) {
  EXPECT_EQ(JsonValue::makeNumber(INFINITY).serialize(), "null");
  EXPECT_EQ(JsonValue::makeNumber(NAN).serialize(), "null");
  EXPECT_EQ(JsonValue::makeNumber(0.25).serialize(), "0.25");
  EXPECT_EQ(JsonValue::makeNumber(0.0).serialize(), "0");
}

} // namespace
