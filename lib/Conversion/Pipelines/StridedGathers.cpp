//===- StridedGathers.cpp - ssd-cpu-strided-gathers -----------------------===//
//
// linalg's vectorizer turns a tensor.extract whose indices vary irregularly
// across the vector into a vector.gather from the source at [0, ..., 0],
// each lane's index linearized over the source's shape: an offset in
// elements that is right only where the source is laid out densely. Once
// bufferized, a source that is a slice of a larger buffer (a segment's
// window of a (b, L) operand, its rows L elements apart) has other strides,
// and the LLVM lowering, which adds each lane's offset to the address of the
// base element, reads other elements: a silent wrong answer. Each gather
// whose buffer is not known to be dense gets its lanes' offsets again from
// the buffer's own strides.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPUSTRIDEDGATHERS
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

/// Whether a buffer of `type` is laid out row-major and dense, where a
/// linearized index is an offset in elements.
bool isDense(MemRefType type) {
  return type.getLayout().isIdentity() ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

/// Replaces `gather` by a gather from the same buffer at [0, ..., 0] whose
/// lanes' offsets are the element positions the original meant (its base
/// indices and lane offsets, linearized over the buffer's shape: how the
/// vectorizer wrote them) linearized again with the buffer's strides.
void restride(RewriterBase &rewriter, vector::GatherOp gather) {
  Location loc = gather.getLoc();
  rewriter.setInsertionPoint(gather);
  auto meta =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, gather.getBase());
  auto lanesType = VectorType::get(gather.getIndexVectorType().getShape(),
                                   rewriter.getIndexType());
  auto lanes = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(rewriter, loc, lanesType, scalar);
  };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  Value position = gather.getIndices();
  if (!cast<VectorType>(position.getType()).getElementType().isIndex())
    position = arith::IndexCastOp::create(rewriter, loc, lanesType, position);
  // A size of 0 (a lane that is never read) must not divide.
  SmallVector<Value> sizes;
  for (Value size : meta.getSizes())
    sizes.push_back(arith::MaxUIOp::create(rewriter, loc, size, constant(1)));
  ValueRange strides = meta.getStrides();
  int64_t rank = sizes.size();
  Value baseLinear = constant(0), extent = constant(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    baseLinear = arith::AddIOp::create(
        rewriter, loc, baseLinear,
        arith::MulIOp::create(rewriter, loc, gather.getOffsets()[d], extent));
    extent = arith::MulIOp::create(rewriter, loc, extent, sizes[d]);
  }
  position = arith::AddIOp::create(rewriter, loc, position, lanes(baseLinear));
  // Each lane's coordinates, innermost first, weighted by the strides.
  Value offset = lanes(constant(0));
  for (int64_t d = rank - 1; d >= 0; --d) {
    Value coordinate = d == 0 ? position
                              : arith::RemUIOp::create(rewriter, loc, position,
                                                       lanes(sizes[d]))
                                    .getResult();
    offset = arith::AddIOp::create(
        rewriter, loc, offset,
        arith::MulIOp::create(rewriter, loc, coordinate, lanes(strides[d])));
    if (d > 0)
      position =
          arith::DivUIOp::create(rewriter, loc, position, lanes(sizes[d]));
  }
  SmallVector<Value> origin(rank, constant(0));
  rewriter.replaceOpWithNewOp<vector::GatherOp>(
      gather, gather.getVectorType(), gather.getBase(), origin, offset,
      gather.getMask(), gather.getPassThru(), gather.getAlignmentAttr());
}

struct StridedGathersPass
    : ssd::impl::SSDCPUStridedGathersBase<StridedGathersPass> {
  void runOnOperation() override {
    SmallVector<vector::GatherOp> gathers;
    getOperation().walk([&](vector::GatherOp gather) {
      auto type = dyn_cast<MemRefType>(gather.getBase().getType());
      if (type && !isDense(type))
        gathers.push_back(gather);
    });
    IRRewriter rewriter(&getContext());
    for (vector::GatherOp gather : gathers)
      restride(rewriter, gather);
  }
};

} // namespace
