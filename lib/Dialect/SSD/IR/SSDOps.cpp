//===- SSDOps.cpp - ssd dialect operations --------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "ShapeBinder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace ssd;

#define GET_OP_CLASSES
#include "ssd/Dialect/SSD/IR/SSDOps.cpp.inc"

using D = Dim;

static std::pair<double, double>
dtLimitOrDefault(std::optional<ArrayRef<double>> limit) {
  if (limit && limit->size() == 2)
    return {(*limit)[0], (*limit)[1]};
  return {0.0, std::numeric_limits<double>::infinity()};
}

/// Binds the per-head vector D: (h) or (h, p).
static LogicalResult bindD(ShapeBinder &shapes, Operation *op, Value d) {
  if (!d)
    return success();
  auto type = cast<RankedTensorType>(d.getType());
  if (type.getRank() == 1)
    return shapes.bind("operand 'D'", d, {D::Heads});
  if (type.getRank() == 2)
    return shapes.bind("operand 'D'", d, {D::Heads, D::HeadDim});
  return op->emitOpError() << "operand 'D' must be (h) or (h,p), got " << type;
}

/// Binds and type-checks the two packing operands shared by most ops.
static LogicalResult bindPacking(ShapeBinder &shapes, Operation *op,
                                 Value seqIdx, Value cuSeqlens) {
  if (failed(verifyPackingOperands(op, seqIdx, cuSeqlens)))
    return failure();
  if (seqIdx && (failed(shapes.bind("operand 'seq_idx'", seqIdx,
                                    {D::Batch, D::SeqLen})) ||
                 failed(verifyElementKind(op, "operand 'seq_idx'", seqIdx,
                                          ElementKind::I32))))
    return failure();
  if (cuSeqlens && (failed(shapes.bind("operand 'cu_seqlens'", cuSeqlens,
                                       {DimRef(D::NumSeqs, 1)})) ||
                    failed(verifyElementKind(op, "operand 'cu_seqlens'",
                                             cuSeqlens, ElementKind::I32))))
    return failure();
  return success();
}

/// The layout of initial and final states: per batch row, or per sequence.
static SmallVector<DimRef> stateLayout(bool varlen) {
  return {varlen ? D::NumSeqs : D::Batch, D::Heads, D::HeadDim, D::State};
}

static const SmallVector<DimRef> kTokensHeads = {D::Batch, D::SeqLen, D::Heads,
                                                 D::HeadDim};
static const SmallVector<DimRef> kTokensGroups = {D::Batch, D::SeqLen,
                                                  D::Groups, D::State};
static const SmallVector<DimRef> kChunkVector = {D::Batch, D::Heads, D::Chunks,
                                                 D::ChunkSize};
static const SmallVector<DimRef> kChunkMatrix = {D::Batch, D::Heads, D::Chunks,
                                                 D::ChunkSize, D::ChunkSize};
static const SmallVector<DimRef> kChunkStates = {D::Batch, D::Chunks, D::Heads,
                                                 D::HeadDim, D::State};
static const SmallVector<DimRef> kGroupMatrix = {D::Batch, D::Chunks, D::Groups,
                                                 D::ChunkSize, D::ChunkSize};

//===----------------------------------------------------------------------===//
// CombinedOp and FusedOp (the whole layer)
//===----------------------------------------------------------------------===//

template <typename LayerOp> static Type stateElementType(LayerOp op) {
  if (std::optional<Type> type = op.getStateType())
    return *type;
  return Float32Type::get(op.getContext());
}

Type CombinedOp::getStateElementType() { return stateElementType(*this); }
Type FusedOp::getStateElementType() { return stateElementType(*this); }

std::pair<double, double> CombinedOp::getDtLimitOrDefault() {
  return dtLimitOrDefault(getDtLimit());
}
std::pair<double, double> FusedOp::getDtLimitOrDefault() {
  return dtLimitOrDefault(getDtLimit());
}

/// The checks shared by every whole-layer op.
template <typename LayerOp> static LogicalResult verifyLayerOp(LayerOp layer) {
  Operation *op = layer.getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(layer.getCuSeqlens());
  if (failed(shapes.bindSize(D::ChunkSize, layer.getChunkSize(),
                             "attribute 'chunk_size'")) ||
      failed(shapes.bind("operand 'x'", layer.getX(), kTokensHeads)) ||
      failed(shapes.bind("operand 'dt'", layer.getDt(),
                         {D::Batch, D::SeqLen, D::Heads})) ||
      failed(shapes.bind("operand 'A'", layer.getA(), {D::Heads})) ||
      failed(shapes.bind("operand 'B'", layer.getB(), kTokensGroups)) ||
      failed(shapes.bind("operand 'C'", layer.getC(), kTokensGroups)) ||
      failed(bindD(shapes, op, layer.getD())) ||
      (layer.getZ() &&
       failed(shapes.bind("operand 'z'", layer.getZ(), kTokensHeads))) ||
      (layer.getDtBias() &&
       failed(
           shapes.bind("operand 'dt_bias'", layer.getDtBias(), {D::Heads}))) ||
      failed(
          bindPacking(shapes, op, layer.getSeqIdx(), layer.getCuSeqlens())) ||
      (layer.getInitialStates() &&
       failed(shapes.bind("operand 'initial_states'", layer.getInitialStates(),
                          stateLayout(varlen)))) ||
      failed(shapes.bind("result 'y'", layer.getY(), kTokensHeads)) ||
      failed(shapes.bind("result 'final_states'", layer.getFinalStates(),
                         stateLayout(varlen))) ||
      failed(shapes.verifyRelations(varlen)))
    return failure();

  // Element types.
  Value x = layer.getX();
  if (failed(verifyElementKind(op, "operand 'x'", x, ElementKind::Activation)))
    return failure();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"operand 'B'", layer.getB()},
        {"operand 'C'", layer.getC()},
        {"operand 'z'", layer.getZ()},
        {"result 'y'", layer.getY()}})
    if (value &&
        failed(verifySameElementType(op, name, value, "operand 'x'", x)))
      return failure();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"operand 'dt'", layer.getDt()},
        {"operand 'A'", layer.getA()},
        {"operand 'D'", layer.getD()},
        {"operand 'dt_bias'", layer.getDtBias()}})
    if (value && failed(verifyElementKind(op, name, value, ElementKind::F32)))
      return failure();

  Type stateType = layer.getStateElementType();
  if (!stateType.isF32() && !stateType.isF16())
    return layer.emitOpError()
           << "attribute 'state_type' must be f32 or f16, got " << stateType;
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"result 'final_states'",
                                    layer.getFinalStates()},
        {"operand 'initial_states'", layer.getInitialStates()}}) {
    if (!value)
      continue;
    Type actual = getElementTypeOrSelf(value.getType());
    if (actual != stateType)
      return layer.emitOpError()
             << name << " element type must be the state type " << stateType
             << ", got " << actual;
  }
  return verifyDtLimit(op, layer.getDtLimit());
}

LogicalResult CombinedOp::verify() { return verifyLayerOp(*this); }

LogicalResult FusedOp::verify() {
  if (failed(verifyLayerOp(*this)))
    return failure();
  std::optional<uint64_t> pBlock = getPBlock();
  if (!pBlock)
    return success();
  int64_t headDim = cast<RankedTensorType>(getX().getType()).getDimSize(3);
  if (*pBlock == 0 || !llvm::isPowerOf2_64(*pBlock) ||
      static_cast<int64_t>(*pBlock) > headDim || headDim % *pBlock != 0)
    return emitOpError() << "attribute 'p_block' must be a power of two "
                            "dividing headdim ("
                         << headDim << "), got " << *pBlock;
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkCumsumOp
//===----------------------------------------------------------------------===//

std::pair<double, double> ChunkCumsumOp::getDtLimitOrDefault() {
  return dtLimitOrDefault(getDtLimit());
}

LogicalResult ChunkCumsumOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(getCuSeqlens());
  if (failed(shapes.bind("operand 'dt'", getDt(),
                         {D::Batch, D::SeqLen, D::Heads})) ||
      failed(shapes.bind("operand 'A'", getA(), {D::Heads})) ||
      (getDtBias() &&
       failed(shapes.bind("operand 'dt_bias'", getDtBias(), {D::Heads}))) ||
      failed(bindPacking(shapes, op, Value(), getCuSeqlens())) ||
      failed(shapes.bind("result 'dt_out'", getDtOut(), kChunkVector)) ||
      failed(shapes.bind("result 'dA_cumsum'", getDACumsum(), kChunkVector)) ||
      failed(shapes.verifyRelations(varlen)))
    return failure();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"operand 'dt'", getDt()},
        {"operand 'A'", getA()},
        {"operand 'dt_bias'", getDtBias()},
        {"result 'dt_out'", getDtOut()},
        {"result 'dA_cumsum'", getDACumsum()}})
    if (value && failed(verifyElementKind(op, name, value, ElementKind::F32)))
      return failure();
  return verifyDtLimit(op, getDtLimit());
}

//===----------------------------------------------------------------------===//
// SegsumOp
//===----------------------------------------------------------------------===//

LogicalResult SegsumOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  if (failed(shapes.bind("operand 'dA_cumsum'", getDACumsum(), kChunkVector)) ||
      failed(shapes.bind("result 'segsum'", getSegsum(), kChunkMatrix)) ||
      failed(shapes.verifyRelations(/*varlen=*/false)) ||
      failed(verifyElementKind(op, "operand 'dA_cumsum'", getDACumsum(),
                               ElementKind::F32)) ||
      failed(verifyElementKind(op, "result 'segsum'", getSegsum(),
                               ElementKind::F32)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// BmmOp
//===----------------------------------------------------------------------===//

LogicalResult BmmOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(getCuSeqlens());
  if (failed(shapes.bind("operand 'C'", getC(), kTokensGroups)) ||
      failed(shapes.bind("operand 'B'", getB(), kTokensGroups)) ||
      failed(bindPacking(shapes, op, getSeqIdx(), getCuSeqlens())) ||
      failed(shapes.bind("result 'CB'", getCB(), kGroupMatrix)) ||
      failed(shapes.verifyRelations(varlen)) ||
      failed(verifyElementKind(op, "operand 'C'", getC(),
                               ElementKind::Activation)) ||
      failed(verifySameElementType(op, "operand 'B'", getB(), "operand 'C'",
                                   getC())) ||
      failed(verifyElementKind(op, "result 'CB'", getCB(), ElementKind::F32)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkStateOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkStateOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(getCuSeqlens());
  if (failed(shapes.bind("operand 'x'", getX(), kTokensHeads)) ||
      failed(shapes.bind("operand 'B'", getB(), kTokensGroups)) ||
      failed(shapes.bind("operand 'dt'", getDt(), kChunkVector)) ||
      failed(shapes.bind("operand 'dA_cumsum'", getDACumsum(), kChunkVector)) ||
      failed(bindPacking(shapes, op, getSeqIdx(), getCuSeqlens())) ||
      failed(shapes.bind("result 'states'", getStates(), kChunkStates)) ||
      failed(shapes.verifyRelations(varlen)) ||
      failed(verifyElementKind(op, "operand 'x'", getX(),
                               ElementKind::Activation)) ||
      failed(verifySameElementType(op, "operand 'B'", getB(), "operand 'x'",
                                   getX())) ||
      failed(
          verifyElementKind(op, "operand 'dt'", getDt(), ElementKind::F32)) ||
      failed(verifyElementKind(op, "operand 'dA_cumsum'", getDACumsum(),
                               ElementKind::F32)) ||
      failed(verifyElementKind(op, "result 'states'", getStates(),
                               ElementKind::State)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// StatePassingOp
//===----------------------------------------------------------------------===//

LogicalResult StatePassingOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(getCuSeqlens());
  if (failed(shapes.bind("operand 'states'", getStates(), kChunkStates)) ||
      failed(shapes.bind("operand 'dA_cumsum'", getDACumsum(), kChunkVector)) ||
      (getInitialStates() &&
       failed(shapes.bind("operand 'initial_states'", getInitialStates(),
                          stateLayout(varlen)))) ||
      failed(bindPacking(shapes, op, getSeqIdx(), getCuSeqlens())) ||
      failed(shapes.bind("result 'out'", getOut(), kChunkStates)) ||
      failed(shapes.bind("result 'final_states'", getFinalStates(),
                         stateLayout(varlen))) ||
      failed(shapes.verifyRelations(varlen)) ||
      failed(verifyElementKind(op, "operand 'states'", getStates(),
                               ElementKind::State)) ||
      failed(verifyElementKind(op, "operand 'dA_cumsum'", getDACumsum(),
                               ElementKind::F32)) ||
      failed(verifyElementKind(op, "result 'out'", getOut(),
                               ElementKind::State)) ||
      failed(verifySameElementType(op, "result 'final_states'",
                                   getFinalStates(), "result 'out'",
                                   getOut())) ||
      (getInitialStates() &&
       failed(verifySameElementType(op, "operand 'initial_states'",
                                    getInitialStates(), "result 'out'",
                                    getOut()))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkScanOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkScanOp::verify() {
  Operation *op = getOperation();
  ShapeBinder shapes(op);
  bool varlen = static_cast<bool>(getCuSeqlens());
  if (failed(shapes.bind("operand 'x'", getX(), kTokensHeads)) ||
      failed(shapes.bind("operand 'dt'", getDt(), kChunkVector)) ||
      failed(shapes.bind("operand 'dA_cumsum'", getDACumsum(), kChunkVector)) ||
      failed(shapes.bind("operand 'segsum'", getSegsum(), kChunkMatrix)) ||
      failed(shapes.bind("operand 'C'", getC(), kTokensGroups)) ||
      failed(shapes.bind("operand 'CB'", getCB(), kGroupMatrix)) ||
      failed(shapes.bind("operand 'states'", getStates(), kChunkStates)) ||
      failed(bindD(shapes, op, getD())) ||
      (getZ() && failed(shapes.bind("operand 'z'", getZ(), kTokensHeads))) ||
      failed(bindPacking(shapes, op, getSeqIdx(), getCuSeqlens())) ||
      failed(shapes.bind("result 'y'", getY(), kTokensHeads)) ||
      failed(shapes.verifyRelations(varlen)))
    return failure();
  Value x = getX();
  if (failed(verifyElementKind(op, "operand 'x'", x, ElementKind::Activation)))
    return failure();
  for (auto [name, value] : {std::pair<StringRef, Value>{"operand 'C'", getC()},
                             {"operand 'z'", getZ()},
                             {"result 'y'", getY()}})
    if (value &&
        failed(verifySameElementType(op, name, value, "operand 'x'", x)))
      return failure();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"operand 'dt'", getDt()},
        {"operand 'dA_cumsum'", getDACumsum()},
        {"operand 'segsum'", getSegsum()},
        {"operand 'CB'", getCB()},
        {"operand 'D'", getD()}})
    if (value && failed(verifyElementKind(op, name, value, ElementKind::F32)))
      return failure();
  return verifyElementKind(op, "operand 'states'", getStates(),
                           ElementKind::State);
}
