//===- CBTile.cpp - one tile of a chunk's CB = C B^T ----------------------===//
#include "CBTile.h"
#include "KernelCommon.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

TileOperand cbRows(Emitter &e, const CBTile &t, Value mat, Value first,
                   bool vectors) {
  TileOperand op{[&e, &t, mat, first](Value kk, Value row) {
                   Value pos = e.add(first, row);
                   Value v = e.loadF32(
                       mat, {t.batch, tokenAt(e, t.r, pos), t.group, kk});
                   return e.select(e.lt(pos, t.r.len), v, e.f32(0.0));
                 },
                 /*kContiguous=*/true};
  if (!vectors)
    return op;
  op.loadVector = [&e, &t, mat, first](Value kk, Value row) {
    return e.loadVector(
        mat, {t.batch, tokenAt(e, t.r, e.add(first, row)), t.group, kk},
        kVectorWidth);
  };
  op.convertVector = [&e, &t, first](Value raw, Value, Value row) {
    Value zero = e.splat(e.f32(0.0), kVectorWidth);
    return e.select(e.lt(e.add(first, row), t.r.len), e.toF32Vector(raw),
                    zero);
  };
  return op;
}

void storeCB(Emitter &e, const KernelFunc &k, const CBTile &t, Value i,
             Value j, Value v) {
  if (k.has("seq_idx")) {
    Value si = k.arg("seq_idx");
    Value same = e.eq(e.load(si, {t.batch, tokenAt(e, t.r, i)}),
                      e.load(si, {t.batch, tokenAt(e, t.r, j)}));
    v = e.select(same, v, e.f32(0.0));
  }
  e.store(v, k.arg("CB"), {t.batch, t.c, t.group, i, j});
}

} // namespace gpu_lowering
} // namespace ssd
