//===- Legality.cpp - what convert-ssd-to-linalg can lower ----------------===//
//
// The patterns specialise on h, p, g, n and the chunk size (they size tiles
// and split heads by them), so those must be static; b, L and the chunk
// count may be dynamic. Anything else is reported here with a diagnostic
// instead of leaving the conversion to fail without a reason.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/SSDToLinalg.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace ssd {
namespace {

struct StaticDims {
  StringRef name;
  Value value;
  SmallVector<int64_t> dims;
};

LogicalResult requireStatic(Operation *op, ArrayRef<StaticDims> checks) {
  for (const StaticDims &check : checks) {
    if (!check.value)
      continue;
    auto type = cast<RankedTensorType>(check.value.getType());
    for (int64_t d : check.dims)
      if (type.isDynamicDim(d))
        return op->emitOpError()
               << "cannot be lowered to linalg: " << check.name
               << " must have a static size in dimension " << d
               << " (h, p, g, n and the chunk size are specialised on), got "
               << type;
  }
  return success();
}

} // namespace

LogicalResult checkSSDToLinalgLowerable(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<CombinedOp>([](CombinedOp op) {
        return op.emitOpError()
               << "cannot be lowered to linalg directly: run --ssd-decompose "
                  "first (the ssd-cpu-pipeline does)";
      })
      .Case<ChunkCumsumOp>([](ChunkCumsumOp op) {
        return requireStatic(
            op, {{"operand 'dt'", op.getDt(), {2}},
                 {"result 'dt_out'", op.getDtOut(), {1, 3}},
                 {"result 'dA_cumsum'", op.getDACumsum(), {1, 3}}});
      })
      .Case<SegsumOp>([](SegsumOp op) {
        return requireStatic(op,
                             {{"operand 'dA_cumsum'", op.getDACumsum(), {1, 3}},
                              {"result 'segsum'", op.getSegsum(), {1, 3, 4}}});
      })
      .Case<BmmOp>([](BmmOp op) {
        return requireStatic(op, {{"operand 'C'", op.getC(), {2, 3}},
                                  {"operand 'B'", op.getB(), {2, 3}},
                                  {"result 'CB'", op.getCB(), {2, 3, 4}}});
      })
      .Case<ChunkStateOp>([](ChunkStateOp op) {
        return requireStatic(op,
                             {{"operand 'x'", op.getX(), {2, 3}},
                              {"operand 'B'", op.getB(), {2, 3}},
                              {"operand 'dt'", op.getDt(), {1, 3}},
                              {"operand 'dA_cumsum'", op.getDACumsum(), {1, 3}},
                              {"result 'states'", op.getStates(), {2, 3, 4}}});
      })
      .Case<StatePassingOp>([](StatePassingOp op) -> LogicalResult {
        // Its per-row state slices are inserted at static offsets, which a
        // static empty batch makes invalid.
        auto states = cast<RankedTensorType>(op.getStates().getType());
        if (states.getDimSize(0) == 0)
          return op.emitOpError()
                 << "cannot be lowered to linalg: a static batch of 0 in "
                    "operand 'states' (nothing to compute) is not supported";
        return requireStatic(
            op,
            {{"operand 'states'", op.getStates(), {2, 3, 4}},
             {"operand 'dA_cumsum'", op.getDACumsum(), {1, 3}},
             {"operand 'initial_states'", op.getInitialStates(), {1, 2, 3}}});
      })
      .Case<ChunkScanOp>([](ChunkScanOp op) {
        return requireStatic(op,
                             {{"operand 'x'", op.getX(), {2, 3}},
                              {"operand 'C'", op.getC(), {2, 3}},
                              {"operand 'dt'", op.getDt(), {1, 3}},
                              {"operand 'dA_cumsum'", op.getDACumsum(), {1, 3}},
                              {"operand 'segsum'", op.getSegsum(), {1, 3, 4}},
                              {"operand 'CB'", op.getCB(), {2, 3, 4}},
                              {"operand 'states'", op.getStates(), {2, 3, 4}}});
      })
      .Default([](Operation *op) {
        if (isa<SSDDialect>(op->getDialect()))
          return LogicalResult(op->emitOpError()
                               << "has no lowering to linalg");
        return success();
      });
}

} // namespace ssd
