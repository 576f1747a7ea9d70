// The artifact library alone (no MLIR, no runtime): build a manifest's text
// with the typed model, read it back, and check the two agree.
#include "ssd/Artifact/Manifest.h"

#include <cstdio>

using namespace ssd::artifact;

int main() {
  Manifest m;
  m.target = "sm_90a";
  m.compiler.name = "consumer";
  m.compiler.version = "1";
  m.constants = {4, 64, 128, 1, 128, DType::BF16, DType::F32, {}, {}};
  TensorSpec x;
  x.name = "x";
  x.dtype = DType::BF16;
  x.shape = {*Expr::parse("b"), *Expr::parse("L"), Expr::constant(4),
             Expr::constant(64)};
  m.tensors.push_back(x);
  KernelSpec k;
  k.name = "ssd_kernel";
  k.grid[0] = *Expr::parse("b * ceildiv(L, Q)");
  k.gridRank = 1;
  k.blockRank = 1;
  ParamSpec p;
  p.name = "x";
  k.params.push_back(p);
  m.kernels.push_back(k);

  std::string text = printManifest(m);
  Expected<Manifest> back = parseManifest(text);
  if (!back.ok()) {
    std::fprintf(stderr, "consumer-artifact: %s\n%s", back.message().c_str(),
                 text.c_str());
    return 1;
  }
  if (printManifest(*back) != text) {
    std::fprintf(stderr, "consumer-artifact: the round trip changed:\n%s",
                 text.c_str());
    return 1;
  }
  std::printf("%s", text.c_str());
  return 0;
}
