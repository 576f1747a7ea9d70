//===- Bmm.cpp - the ssd_bmm kernel ----------------------------------------===//
//
// CB[b,c,g,i,j] = C_i . B_j. Grid (tiles^2, nc, b*g), one T x T CBTile of
// the chunk's Q x Q matrix per block, T = min(Q, 64). Only tiles on or below
// the diagonal are computed: chunk_scan reads j <= i only.
//
//===----------------------------------------------------------------------===//
#include "CBTile.h"
#include "KernelCommon.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

KernelInfo buildBmmKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                          const SSDProblem &p) {
  int64_t edge = tileEdge(p.chunk), tiles = p.chunk / edge;
  KernelInfo info;
  info.name = "ssd_bmm";
  info.grid = {std::to_string(tiles * tiles), p.chunksExpr,
               p.batchExpr + " * " + std::to_string(p.groups)};
  addParams(info, p, {"C", "B", "seq_idx", "cu_seqlens"}, false);
  info.params.push_back({"CB", true});

  KernelFunc k = createKernel(b, module, p, info);
  Emitter e(b);
  Value cMat = k.arg("C"), bMat = k.arg("B"), cb = k.arg("CB");
  TileMatmul mm(e, k, edge, edge, tileDepth(p.state), mmaElementType(p));
  Value tile = e.blockId(gpu::Dimension::x);
  Value c = e.blockId(gpu::Dimension::y);
  Value bg = e.blockId(gpu::Dimension::z);
  Value batch = e.div(bg, e.idx(p.groups)), group = e.rem(bg, e.idx(p.groups));
  Value ti = e.div(tile, e.idx(tiles)), tj = e.rem(tile, e.idx(tiles));
  Value i0 = e.mul(ti, edge), j0 = e.mul(tj, edge);
  e.ifThen(e.le(tj, ti), [&] {
    CBTile t{batch, group, c, blockChunk(e, p, k, c, cMat, cb, 1)};
    bool vectors = mm.usesMma() && p.state % kVectorWidth == 0;
    TileOperand cRows = cbRows(e, t, cMat, i0, vectors);
    TileOperand bRows = cbRows(e, t, bMat, j0, vectors);
    SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0),
                                           e.idx(p.state), cRows, bRows);
    if (vectors && !k.has("seq_idx") && edge % kVectorWidth == 0) {
      mm.epilogueVector(acc, [&](Value row, Value col, Value v) {
        e.storeVector(v, cb, {batch, c, group, e.add(i0, row), e.add(j0, col)});
      });
      return;
    }
    mm.epilogue(acc, [&](Value row, Value col, Value v) {
      Value i = e.add(i0, row), j = e.add(j0, col);
      storeCB(e, k, t, i, j, v);
    });
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
