//===- RoleBuilder.cpp - the block, its piece and the producer ------------===//
//
// What both kernels' roles share: the block's (piece, row, head, p-block)
// and its piece's chunks, its head's parameters, the producer's copies, a
// chunk's decays from its stage, the state's fragments in and out of
// global memory, and tiles in and out of shared memory by ldmatrix and
// stmatrix.
//
//===----------------------------------------------------------------------===//
#include "RoleBuilder.h"

#include "../Wgmma.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

void RoleBuilder::addPartialLanding(KernelFunc &kernel) {
  if (ops.cuSeqlens)
    partialLanding.emplace(e, kernel, 1, /*consumerThreads=*/1);
}

void RoleBuilder::produce(StageRing &inputs, bool reverse) {
  e.forLoop(e.idx(0), chunkCount, e.idx(1), [&](Value i) {
    auto copyChunk = [&](Value s, Value barrier) {
      Value base = stageBase(s);
      Value token = inRow(e.mul(chunkOf(i, reverse), kChunk));
      auto at = [&](int64_t offset) {
        return elementPointer(e, ring, {e.add(base, offset)}, /*space=*/3);
      };
      // Coordinates innermost first: (column, head or group, token, row);
      // through panel maps (column in the panel, group, token, panel, row).
      if (shape.panelMaps) {
        Value zero = e.idx(0);
        if (layout.c >= 0)
          copyTmaBox(e, ops.cMap, at(layout.c), barrier,
                     {zero, group, token, zero, row});
        copyTmaBox(e, ops.bMap, at(layout.b), barrier,
                   {zero, group, token, zero, row});
      } else {
        for (int64_t panel = 0; panel < 2; ++panel) {
          Value col = e.idx(panel * kSwizzlePanel);
          if (layout.c >= 0)
            copyTmaBox(e, ops.cMap, at(layout.c + panel * kPanelBytes), barrier,
                       {col, group, token, row});
          copyTmaBox(e, ops.bMap, at(layout.b + panel * kPanelBytes), barrier,
                     {col, group, token, row});
        }
      }
      for (int64_t w = 0; w < blockHeads; ++w)
        copyTmaBox(e, ops.xMap, at(layout.x + w * kPanelBytes), barrier,
                   {p0, headOf(w), token, row});
      Value firstHead = e.sub(head, e.rem(head, e.idx(kDtHeads)));
      copyTmaBox(e, ops.dtMap, at(layout.dt), barrier, {firstHead, token, row});
    };
    auto copyWhole = [&] {
      Value s = inputs.acquire(i, layout.copyBytes);
      copyChunk(s, inputs.full(s));
    };
    if (!partialLanding)
      return copyWhole();
    // A sequence's partial last chunk lands on the producer's own barrier
    // first: its rows past the end hold the next sequence's tokens, whose x
    // and B are zeroed before the consumers see the stage, so that a NaN or
    // infinity there never meets a zero weight (0 x inf) in this sequence's
    // products. One such chunk a block at most: use 0 of the landing ring.
    Value rows = e.sub(seqLen, e.mul(chunkOf(i, reverse), kChunk));
    e.ifThenElse(
        e.lt(rows, e.idx(kChunk)),
        [&] {
          Value s = inputs.acquire(i);
          Value use = e.idx(0);
          copyChunk(s, partialLanding->full(
                           partialLanding->acquire(use, layout.copyBytes)));
          partialLanding->waitFull(use);
          zeroRowsFrom(stageBase(s), rows);
          fenceSharedForAsyncProxy(e);
          inputs.publish(i);
        },
        copyWhole);
  });
}

void RoleBuilder::zeroRowsFrom(Value base, Value rows) {
  // Whole 128-byte rows: the swizzle permutes 16-byte pieces within a row.
  Value zero = e.splat(e.f32(0.0), 8);
  Value x = panels(base, layout.x, blockHeads);
  Value b = panels(base, layout.b, 2);
  e.forLoop(e.mul(rows, 8), e.idx(kChunk * 8), e.idx(1), [&](Value k) {
    Value row = e.div(k, e.idx(8));
    Value col = e.mul(e.rem(k, e.idx(8)), 8);
    for (int64_t w = 0; w < blockHeads; ++w)
      e.storeVector(zero, x, {e.idx(w), row, col});
    for (int64_t panel = 0; panel < 2; ++panel)
      e.storeVector(zero, b, {e.idx(panel), row, col});
  });
}

SmallVector<Value> RoleBuilder::loadStateFragments(Value states,
                                                   ValueRange outer) {
  AccumulatorLane at = accumulatorLane(e);
  SmallVector<Value> frags;
  for (int64_t j = 0; j < kState / 8; ++j) {
    SmallVector<Value> elements;
    for (int64_t r = 0; r < 2; ++r) {
      SmallVector<Value> idx(outer);
      idx.push_back(e.add(p0, e.add(at.row, e.idx(8 * r))));
      idx.push_back(e.add(at.col, e.idx(8 * j)));
      Value pair = e.loadVector(states, idx, 2);
      // f16 states (the layer's state_type) widen to the accumulators'.
      if (auto type = cast<VectorType>(pair.getType());
          !type.getElementType().isF32())
        pair = arith::ExtFOp::create(e.b, type.clone(e.b.getF32Type()), pair);
      for (int64_t i = 0; i < 2; ++i)
        elements.push_back(
            vector::ExtractOp::create(e.b, pair, ArrayRef<int64_t>{i}));
    }
    frags.push_back(vector::FromElementsOp::create(
        e.b, VectorType::get({2, 2}, e.b.getF32Type()), elements));
  }
  return frags;
}

void RoleBuilder::storeStateFragments(ArrayRef<Value> frags, Value states,
                                      ValueRange outer) {
  AccumulatorLane at = accumulatorLane(e);
  for (int64_t j = 0; j < kState / 8; ++j)
    for (int64_t r = 0; r < 2; ++r) {
      Value pair =
          vector::ExtractOp::create(e.b, frags[j], ArrayRef<int64_t>{r});
      SmallVector<Value> idx(outer);
      idx.push_back(e.add(p0, e.add(at.row, e.idx(8 * r))));
      idx.push_back(e.add(at.col, e.idx(8 * j)));
      e.storeVector(pair, states, idx);
    }
}

RoleBuilder::MatrixLanes RoleBuilder::matrixLanes() {
  // ldmatrix/stmatrix .x4: a warp moves four 8 x 8 bf16 matrices, each
  // lane's register of matrix m the bf16 pair at (row lane / 4, columns
  // 2 (lane % 4) ..): the accumulator fragments' layout. Matrices (rows
  // + 8 r, n8 fragment j + k) for m = 2 k + r; lane l gives the address
  // of row l % 8 of matrix l / 8 (16 bytes, whole in the swizzle).
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  Value matrix = e.div(lane, e.idx(8));
  return {e.add(e.add(e.mul(warp, 16), e.mul(e.rem(matrix, e.idx(2)), 8)),
                e.rem(lane, e.idx(8))),
          e.mul(e.div(matrix, e.idx(2)), 8)};
}

void RoleBuilder::storeMatrices(Value view, Value buffer,
                                ArrayRef<Value> pairs) {
  MatrixLanes lanes = matrixLanes();
  auto word = [&](Value pair) {
    Value bits = vector::BitCastOp::create(
        e.b, VectorType::get({1}, e.b.getI32Type()), pair);
    return vector::ExtractOp::create(e.b, bits, ArrayRef<int64_t>{0});
  };
  MLIRContext *ctx = e.b.getContext();
  for (int64_t j = 0; 2 * j < static_cast<int64_t>(pairs.size()); j += 2) {
    SmallVector<Value> idx =
        swizzled128At(e, lanes.row, e.add(lanes.col, e.idx(8 * j)));
    Value at = elementPointer(e, view, {buffer, idx[0], idx[1], idx[2]},
                              /*space=*/3);
    NVVM::StMatrixOp::create(
        e.b, at,
        ValueRange{word(pairs[2 * j]), word(pairs[2 * j + 1]),
                   word(pairs[2 * j + 2]), word(pairs[2 * j + 3])},
        NVVM::MMALayout::row, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltType::B16);
  }
}

SmallVector<Value> RoleBuilder::xFragments(Value base) {
  MatrixLanes lanes = matrixLanes();
  Value xView = panels(base, layout.x, 1);
  auto fragType = VectorType::get({4, 2}, e.b.getBF16Type());
  SmallVector<Value> pairs;
  for (int64_t j = 0; j < kHeadDim / 8; j += 2) {
    SmallVector<Value> idx =
        swizzled128At(e, lanes.row, e.add(lanes.col, e.idx(8 * j)));
    Value frag = nvgpu::LdMatrixOp::create(e.b, fragType, xView, idx,
                                           /*transpose=*/false, 4);
    for (int64_t m = 0; m < 4; ++m)
      pairs.push_back(
          vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{m}));
  }
  return pairs;
}

ChunkDecays RoleBuilder::decays(Value c, Value base, const HeadParams &params) {
  Value valid = e.sub(seqLen, e.mul(c, kChunk));
  return chunkDecays(e, shape.dtRule, dtView(base), params, valid);
}

void RoleBuilder::locateBlock() {
  // Block (piece, row, head, p-block), the p-blocks of a head adjacent so
  // that they read its B and C rows close in time, and the pieces
  // outermost so that the blocks running at once read the same tokens'
  // B and C (shared by a group's heads). A block of `blockHeads` heads
  // takes a group's heads h .. h + blockHeads - 1 (h a multiple of it).
  int64_t pBlocks = shape.headDim / kPBlock;
  int64_t headBlocks = shape.heads / blockHeads;
  Value block = e.blockId(gpu::Dimension::x);
  Value inPiece = block;
  Value sequences = ops.cuSeqlens ? e.sub(e.dim(ops.cuSeqlens, 0), e.idx(1))
                                  : e.dim(ops.y, 0);
  if (ops.pieceDecays) {
    Value chains = e.mul(sequences, headBlocks * pBlocks);
    piece = e.div(block, chains);
    inPiece = e.rem(block, chains);
  }
  Value chain = e.div(inPiece, e.idx(pBlocks));
  p0 = e.mul(e.rem(inPiece, e.idx(pBlocks)), kPBlock);
  sequence = e.div(chain, e.idx(headBlocks));
  head = e.rem(chain, e.idx(headBlocks));
  if (blockHeads > 1)
    head = e.mul(head, blockHeads);
  group = e.div(head, e.idx(shape.heads / shape.groups));
  if (ops.cuSeqlens) {
    // The sequence's tokens in y's one row, its bounds clamped to the row
    // and to each other: offsets the host could not check (under stream
    // capture) never walk out of the row or make a negative length.
    row = e.idx(0);
    Value rowLen = e.dim(ops.y, 1);
    auto bound = [&](Value at, Value least) {
      return e.min(e.max(e.toIndex(e.load(ops.cuSeqlens, {at})), least),
                   rowLen);
    };
    tokenBase = bound(sequence, e.idx(0));
    seqLen = e.sub(bound(e.add(sequence, e.idx(1)), tokenBase), tokenBase);
  } else {
    row = sequence;
    seqLen = e.dim(ops.y, 1);
  }
  Value numChunks = e.div(e.add(seqLen, e.idx(kChunk - 1)), e.idx(kChunk));
  if (!ops.pieceDecays) {
    firstChunk = e.idx(0);
    chunkCount = numChunks;
    return;
  }
  // Pieces of ceil(chunks / pieces) chunks; the last ones may be short or
  // empty.
  pieces = e.dim(ops.pieceDecays, 2);
  Value perPiece = e.div(e.add(numChunks, e.sub(pieces, e.idx(1))), pieces);
  firstChunk = e.min(e.mul(piece, perPiece), numChunks);
  chunkCount = e.sub(e.min(e.add(firstChunk, perPiece), numChunks), firstChunk);
}

HeadParams RoleBuilder::headParams(Value ofHead) {
  return {e.load(ops.a, {ofHead}),
          ops.dtBias ? e.load(ops.dtBias, {ofHead}) : Value(),
          ops.d ? e.load(ops.d, {ofHead}) : Value(),
          e.rem(ofHead, e.idx(kDtHeads))};
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
