//===- Common.cpp - shared pieces of the ssd to linalg lowering -----------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace ssd {
namespace lowering {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return indexConst(b, loc, type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim);
}

OpFoldResult dimFold(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim).getResult();
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                  Type elementType) {
  // Constant sizes become static dimensions.
  SmallVector<OpFoldResult> sizes;
  for (OpFoldResult size : shape)
    sizes.push_back(isa<Value>(size) ? getAsOpFoldResult(cast<Value>(size))
                                     : size);
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value zeroTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                 Type elementType) {
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(elementType)));
  Value empty = emptyTensor(b, loc, shape, elementType);
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  Type f32 = b.getF32Type();
  if (v.getType() == f32 || !isa<FloatType>(v.getType()))
    return v;
  return arith::ExtFOp::create(b, loc, f32, v);
}

Value fromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value decayExp(OpBuilder &b, Location loc, Value x) {
  return math::ExpOp::create(b, loc, x);
}

AffineMap projectedMap(MLIRContext *ctx, unsigned numLoops,
                       ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<utils::IteratorType> iterators(unsigned numLoops,
                                           ArrayRef<unsigned> reductionDims) {
  SmallVector<utils::IteratorType> its(numLoops, utils::IteratorType::parallel);
  for (unsigned d : reductionDims)
    its[d] = utils::IteratorType::reduction;
  return its;
}

/// tile * scale per token, into `init` where given (scale and tile both
/// inputs), else into the tile itself.
static Value tokenRowProduct(OpBuilder &b, Location loc, Value scale,
                             Value tile, Value init) {
  AffineMap identity = b.getMultiDimIdentityMap(6);
  SmallVector<Value> inputs = {scale};
  SmallVector<AffineMap> maps = {
      projectedMap(b.getContext(), 6, {0, 2, 3, 1, 4})};
  if (init) {
    inputs.push_back(tile);
    maps.push_back(identity);
  }
  maps.push_back(identity);
  Value out = init ? init : tile;
  return linalg::GenericOp::create(
             b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps,
             iterators(6),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   arith::MulFOp::create(nb, l, args[0], args[1]).getResult());
             })
      .getResult(0);
}

Value scaleTokenRows(OpBuilder &b, Location loc, Value scale, Value tile) {
  return tokenRowProduct(b, loc, scale, tile, Value());
}

Value scaledTokenRows(OpBuilder &b, Location loc, Value scale, Value tile) {
  auto type = cast<RankedTensorType>(tile.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, tile), type.getElementType());
  return tokenRowProduct(b, loc, scale, tile, init);
}

Value splitHeads(OpBuilder &b, Location loc, Value tensor, int64_t dim,
                 int64_t groups) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t heads = type.getDimSize(dim);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outShape;
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (i == dim) {
      reassoc.push_back({static_cast<int64_t>(shape.size()),
                         static_cast<int64_t>(shape.size()) + 1});
      shape.append({groups, heads / groups});
      outShape.append({b.getIndexAttr(groups), b.getIndexAttr(heads / groups)});
      continue;
    }
    reassoc.push_back({static_cast<int64_t>(shape.size())});
    shape.push_back(type.getDimSize(i));
    outShape.push_back(dimFold(b, loc, tensor, i));
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, tensor, reassoc,
                                       outShape);
}

Value mergeDims(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (i == dim) {
      reassoc.push_back({i, i + 1});
      ++i;
      continue;
    }
    reassoc.push_back({i});
  }
  return tensor::CollapseShapeOp::create(b, loc, tensor, reassoc);
}

Value numChunksOf(OpBuilder &b, Location loc, Value chunkTensor, int64_t dim) {
  return dimValue(b, loc, chunkTensor, dim);
}

Value numChunksFor(OpBuilder &b, Location loc, RankedTensorType type,
                   int64_t dim, Value seqLen, int64_t chunkSize,
                   Value cuSeqlens) {
  if (!type.isDynamicDim(dim))
    return indexConst(b, loc, type.getDimSize(dim));
  Value nc =
      arith::CeilDivUIOp::create(b, loc, seqLen, indexConst(b, loc, chunkSize));
  if (!cuSeqlens)
    return nc;
  // ceil(L/Q) + s - 1 = ceil(L/Q) + (entries - 1) - 1.
  Value extra = arith::SubIOp::create(b, loc, dimValue(b, loc, cuSeqlens, 0),
                                      indexConst(b, loc, 2));
  return arith::AddIOp::create(b, loc, nc, extra);
}

Value castTo(OpBuilder &b, Location loc, Value tensor, Type type) {
  if (tensor.getType() == type)
    return tensor;
  return tensor::CastOp::create(b, loc, type, tensor);
}

Value convertElements(OpBuilder &b, Location loc, Value tensor,
                      Type elementType) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == elementType)
    return tensor;
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    shape.push_back(dimFold(b, loc, tensor, i));
  Value init = emptyTensor(b, loc, shape, elementType);
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{tensor},
             ValueRange{init}, ArrayRef<AffineMap>{id, id}, iterators(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value v = toF32(nb, nloc, args[0]);
               linalg::YieldOp::create(nb, nloc,
                                       fromF32(nb, nloc, v, elementType));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// ChunkMap
//===----------------------------------------------------------------------===//

/// Fills the varlen tables with scf loops: sequence i of length len_i owns
/// ceil(len_i/Q) consecutive chunks; chunk j of it starts at cu[i] + jQ.
/// Chunk counts are clamped to the chunk dimension so that a cu_seqlens
/// inconsistent with L can never write out of bounds.
static void buildVarlenTables(OpBuilder &b, Location loc, ChunkMap &map,
                              Value cuSeqlens) {
  Type indexType = b.getIndexType();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value q = indexConst(b, loc, map.chunkSize);
  Value nc = map.numChunks, len = map.seqLen;
  map.numSeqs =
      arith::SubIOp::create(b, loc, dimValue(b, loc, cuSeqlens, 0), one);
  auto filled = [&](Value size, Value value) {
    Value empty = emptyTensor(b, loc, {OpFoldResult(size)}, indexType);
    return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
        .getResult(0);
  };
  auto cuAt = [&](OpBuilder &nb, Value i) -> Value {
    Value v = tensor::ExtractOp::create(nb, loc, cuSeqlens, ValueRange{i});
    Value idx = arith::IndexCastOp::create(nb, loc, indexType, v);
    // Clamp into [0, L] so malformed offsets stay in bounds.
    idx = arith::MaxSIOp::create(nb, loc, idx, zero);
    return arith::MinSIOp::create(nb, loc, idx, len);
  };

  SmallVector<Value> init = {zero,
                             filled(nc, zero),           // chunkStart
                             filled(nc, zero),           // chunkLen
                             filled(len, zero),          // tokenChunk
                             filled(len, q),             // tokenPos
                             filled(map.numSeqs, zero),  // seqFirstChunk
                             filled(map.numSeqs, zero)}; // seqNumChunks
  auto seqLoop = scf::ForOp::create(
      b, loc, zero, map.numSeqs, one, init,
      [&](OpBuilder &sb, Location, Value i, ValueRange args) {
        Value base = args[0];
        Value lo = cuAt(sb, i);
        Value hi = cuAt(sb, arith::AddIOp::create(sb, loc, i, one));
        hi = arith::MaxSIOp::create(sb, loc, hi, lo);
        Value seqLen = arith::SubIOp::create(sb, loc, hi, lo);
        Value count = arith::CeilDivUIOp::create(sb, loc, seqLen, q);
        Value room = arith::SubIOp::create(sb, loc, nc, base);
        count = arith::MinSIOp::create(
            sb, loc, count, arith::MaxSIOp::create(sb, loc, room, zero));
        Value first = tensor::InsertOp::create(sb, loc, base, args[5], i);
        Value counts = tensor::InsertOp::create(sb, loc, count, args[6], i);

        auto chunkLoop = scf::ForOp::create(
            sb, loc, zero, count, one,
            ValueRange{args[1], args[2], args[3], args[4]},
            [&](OpBuilder &cb, Location, Value j, ValueRange cargs) {
              Value k = arith::AddIOp::create(cb, loc, base, j);
              Value start = arith::AddIOp::create(
                  cb, loc, lo, arith::MulIOp::create(cb, loc, j, q));
              Value valid = arith::MinSIOp::create(
                  cb, loc, q, arith::SubIOp::create(cb, loc, hi, start));
              Value starts =
                  tensor::InsertOp::create(cb, loc, start, cargs[0], k);
              Value lens =
                  tensor::InsertOp::create(cb, loc, valid, cargs[1], k);
              auto tokenLoop = scf::ForOp::create(
                  cb, loc, zero, valid, one, ValueRange{cargs[2], cargs[3]},
                  [&](OpBuilder &tb, Location, Value pos, ValueRange targs) {
                    Value t = arith::AddIOp::create(tb, loc, start, pos);
                    Value chunks =
                        tensor::InsertOp::create(tb, loc, k, targs[0], t);
                    Value poss =
                        tensor::InsertOp::create(tb, loc, pos, targs[1], t);
                    scf::YieldOp::create(tb, loc, ValueRange{chunks, poss});
                  });
              scf::YieldOp::create(cb, loc,
                                   ValueRange{starts, lens,
                                              tokenLoop.getResult(0),
                                              tokenLoop.getResult(1)});
            });
        Value next = arith::AddIOp::create(sb, loc, base, count);
        scf::YieldOp::create(sb, loc,
                             ValueRange{next, chunkLoop.getResult(0),
                                        chunkLoop.getResult(1),
                                        chunkLoop.getResult(2),
                                        chunkLoop.getResult(3), first, counts});
      });
  map.chunkStart = seqLoop.getResult(1);
  map.chunkLen = seqLoop.getResult(2);
  map.tokenChunk = seqLoop.getResult(3);
  map.tokenPos = seqLoop.getResult(4);
  map.seqFirstChunk = seqLoop.getResult(5);
  map.seqNumChunks = seqLoop.getResult(6);
}

ChunkMap ChunkMap::build(OpBuilder &b, Location loc, Value seqLen,
                         Value numChunks, int64_t chunkSize, Value cuSeqlens) {
  ChunkMap map;
  map.chunkSize = chunkSize;
  map.seqLen = seqLen;
  map.numChunks = numChunks;
  if (cuSeqlens)
    buildVarlenTables(b, loc, map, cuSeqlens);
  return map;
}

std::pair<Value, Value> ChunkMap::token(OpBuilder &b, Location loc, Value c,
                                        Value q) const {
  Value zero = indexConst(b, loc, 0);
  Value t, valid;
  if (isVarlen()) {
    Value start = tensor::ExtractOp::create(b, loc, chunkStart, ValueRange{c});
    Value len = tensor::ExtractOp::create(b, loc, chunkLen, ValueRange{c});
    t = arith::AddIOp::create(b, loc, start, q);
    valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, q, len);
  } else {
    Value cq = arith::MulIOp::create(b, loc, c, indexConst(b, loc, chunkSize));
    t = arith::AddIOp::create(b, loc, cq, q);
    valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, seqLen);
  }
  // Padding reads token 0 (always in bounds when there is any chunk) and the
  // value is then discarded by the caller.
  t = arith::SelectOp::create(b, loc, valid, t, zero);
  return {t, valid};
}

std::tuple<Value, Value, Value> ChunkMap::chunkOf(OpBuilder &b, Location loc,
                                                  Value t) const {
  Value q = indexConst(b, loc, chunkSize);
  if (isVarlen()) {
    Value c = tensor::ExtractOp::create(b, loc, tokenChunk, ValueRange{t});
    Value pos = tensor::ExtractOp::create(b, loc, tokenPos, ValueRange{t});
    Value valid =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, pos, q);
    pos = arith::SelectOp::create(b, loc, valid, pos, indexConst(b, loc, 0));
    return {c, pos, valid};
  }
  Value c = arith::DivUIOp::create(b, loc, t, q);
  Value pos = arith::RemUIOp::create(b, loc, t, q);
  Value valid = arith::ConstantIntOp::create(b, loc, 1, 1);
  return {c, pos, valid};
}

Value ChunkMap::lastToken(OpBuilder &b, Location loc, Value c) const {
  Value q = indexConst(b, loc, chunkSize);
  Value end = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, c, indexConst(b, loc, 1)), q);
  end = arith::MinSIOp::create(b, loc, end, seqLen);
  return arith::SubIOp::create(b, loc, end, indexConst(b, loc, 1));
}

Value ChunkMap::tokenBefore(OpBuilder &b, Location loc, Value c) const {
  Value zero = indexConst(b, loc, 0);
  Value start = arith::MulIOp::create(b, loc, c, indexConst(b, loc, chunkSize));
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c, zero);
  Value before = arith::SubIOp::create(b, loc, start, indexConst(b, loc, 1));
  return arith::SelectOp::create(b, loc, isFirst, zero, before);
}

Value ChunkMap::keepSameSequence(
    OpBuilder &b, Location loc, Value seqIdx, Value value,
    llvm::function_ref<Value(Value c)> refToken) const {
  Value batch = linalg::IndexOp::create(b, loc, 0);
  Value c = linalg::IndexOp::create(b, loc, 2);
  Value pos = linalg::IndexOp::create(b, loc, 3);
  Value mine = tensor::ExtractOp::create(
      b, loc, seqIdx, ValueRange{batch, token(b, loc, c, pos).first});
  Value ref =
      tensor::ExtractOp::create(b, loc, seqIdx, ValueRange{batch, refToken(c)});
  Value same =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mine, ref);
  return arith::SelectOp::create(b, loc, same, value, f32Const(b, loc, 0.0));
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

Value gatherChunks(OpBuilder &b, Location loc, const ChunkMap &map, Value src,
                   ArrayRef<int64_t> resultDims) {
  auto srcType = cast<RankedTensorType>(src.getType());
  Type srcElement = srcType.getElementType();
  Type element = isa<FloatType>(srcElement) ? b.getF32Type() : srcElement;

  SmallVector<OpFoldResult> shape;
  for (int64_t d : resultDims) {
    if (d == kBatch)
      shape.push_back(dimFold(b, loc, src, 0));
    else if (d == kChunk)
      shape.push_back(map.numChunks);
    else if (d == kPos)
      shape.push_back(b.getIndexAttr(map.chunkSize));
    else
      shape.push_back(dimFold(b, loc, src, d));
  }
  Value init = emptyTensor(b, loc, shape, element);
  unsigned rank = resultDims.size();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> srcIdx(srcType.getRank());
        Value c, q;
        for (unsigned i = 0; i < rank; ++i) {
          Value idx = linalg::IndexOp::create(nb, nloc, i);
          if (resultDims[i] == kBatch)
            srcIdx[0] = idx;
          else if (resultDims[i] == kChunk)
            c = idx;
          else if (resultDims[i] == kPos)
            q = idx;
          else
            srcIdx[resultDims[i]] = idx;
        }
        auto [t, valid] = map.token(nb, nloc, c, q);
        srcIdx[1] = t;
        Value v = tensor::ExtractOp::create(nb, nloc, src, srcIdx);
        v = toF32(nb, nloc, v);
        Value zero = arith::ConstantOp::create(
            nb, nloc, cast<TypedAttr>(nb.getZeroAttr(element)));
        v = arith::SelectOp::create(nb, nloc, valid, v, zero);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

} // namespace lowering
} // namespace ssd
