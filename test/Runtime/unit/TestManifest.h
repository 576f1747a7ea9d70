//===- TestManifest.h - A manifest shaped like a real SSD artifact --------===//
//
// Two kernels (chunk cumsum, then a fused persistent kernel with TMA and a
// cluster) over h=8, p=64, n=128, g=2, Q=128, bf16. Tests mutate its text to
// make malformed manifests.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_TEST_RUNTIME_TESTMANIFEST_H
#define SSD_TEST_RUNTIME_TESTMANIFEST_H

#include <gtest/gtest.h>

#include <string>

namespace ssd::rt::test {

inline const char *kManifest = R"json({
  "format": "ssd-artifact",
  "format_version": 1,
  "target": "sm_90a",
  "compiler": {"name": "ssd-compile", "version": "0.1.0",
               "options": {"strategy": "fused", "chunk_size": 128}},
  "constants": {"nheads": 8, "headdim": 64, "dstate": 128, "ngroups": 2,
                "chunk_size": 128, "dtype": "bf16", "state_dtype": "f32",
                "features": ["D", "z"], "p_block": 32},
  "x-note": "extension keys are ignored",
  "tensors": [
    {"name": "x", "dtype": "bf16", "shape": ["b", "L", 8, 64]},
    {"name": "dt", "dtype": "f32", "shape": ["b", "L", "nheads"]},
    {"name": "A", "dtype": "f32", "shape": ["h"]},
    {"name": "B", "dtype": "bf16", "shape": ["b", "L", "g", "n"]},
    {"name": "C", "dtype": "bf16", "shape": ["b", "L", "g", "n"], "alignment": 128},
    {"name": "D", "dtype": "f32", "shape": ["h"], "layout": "strided"},
    {"name": "z", "dtype": "bf16", "shape": ["b", "L", 8, 64], "optional": true,
     "layout": "inner_contiguous"},
    {"name": "y", "dtype": "bf16", "shape": ["b", "L", 8, 64], "output": true},
    {"name": "final_states", "dtype": "f32", "shape": ["b", 8, 64, 128], "output": true}
  ],
  "workspaces": [
    {"name": "dA_cumsum", "dtype": "f32", "shape": ["b", "h", "nc", "Q"]},
    {"name": "counters", "size": "4*b*nc", "zero_init": true, "alignment": 128}
  ],
  "kernels": [
    {"name": "ssd_chunk_cumsum", "grid": ["b", "nc", 1], "block": [128],
     "params": [
       {"kind": "tensor", "name": "dt"},
       {"kind": "tensor", "name": "A"},
       {"kind": "workspace", "name": "dA_cumsum", "abi": "memref"},
       {"kind": "scalar", "name": "seqlen", "type": "i32", "value": "L"}]},
    {"name": "ssd_fused", "grid": ["num_sms"], "block": [384],
     "shared_memory": 200000, "cluster": [2],
     "params": [
       {"kind": "tma", "tensor": "x", "box": [1, 64, 1, 64], "swizzle": "128B"},
       {"kind": "tma", "tensor": "B", "box": [1, 64, 1, 64], "swizzle": "128B",
        "l2_promotion": "256B", "pass": "global", "panel_dim": 1},
       {"kind": "tensor", "name": "C"},
       {"kind": "tensor", "name": "D"},
       {"kind": "tensor", "name": "z"},
       {"kind": "tensor", "name": "y"},
       {"kind": "tensor", "name": "final_states", "abi": "memref"},
       {"kind": "workspace", "name": "dA_cumsum"},
       {"kind": "workspace", "name": "counters"},
       {"kind": "scalar", "name": "batch", "type": "i32", "value": "b"},
       {"kind": "scalar", "name": "nchunks", "type": "i64", "value": "nc * p_block"}]}
  ]
})json";

/// kManifest with the first occurrence of `from` replaced by `to`.
inline std::string manifestWith(const std::string &from,
                                const std::string &to) {
  std::string text = kManifest;
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "test bug: '" << from << "' not found";
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

} // namespace ssd::rt::test

#endif // SSD_TEST_RUNTIME_TESTMANIFEST_H
