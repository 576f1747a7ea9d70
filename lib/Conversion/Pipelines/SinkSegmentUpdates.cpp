//===- SinkSegmentUpdates.cpp - ssd-cpu-sink-segment-updates --------------===//
//
// A segment's state passing updates the running state in place (its loop
// or generic takes the segment loop's state as destination), while the
// segment's chunk scan, later in the body, still reads that state's old
// value. Bufferization then copies the whole state (2.6 MB at the Mamba-2
// 2.7B layer) into a new buffer per segment before the update. Moving the
// update after the last reader of the old value lets it write in place.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPUSINKSEGMENTUPDATES
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

/// `value` and the tensors that alias it through reshapes, slices and
/// casts.
SetVector<Value> aliasesOf(Value value) {
  SetVector<Value> aliases;
  aliases.insert(value);
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers())
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp>(user))
        aliases.insert(user->getResult(0));
  return aliases;
}

/// Whether `op` may write into its operand `operand` (a destination of a
/// destination-style op, a loop's initial value, an inserted-into tensor).
bool mayWriteInto(Operation *op, OpOperand &operand) {
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.isDpsInit(&operand);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return operand.getOperandNumber() >= loop.getNumControlOperands();
  return isa<tensor::InsertSliceOp, tensor::InsertOp>(op);
}

/// The last op of `block` after `op` that reads `value` or an alias of it,
/// or null.
Operation *lastReaderAfter(Operation *op, Value value, Block *block) {
  Operation *last = nullptr;
  for (Value alias : aliasesOf(value))
    for (Operation *user : alias.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (inBlock && inBlock != op && op->isBeforeInBlock(inBlock) &&
          (!last || last->isBeforeInBlock(inBlock)))
        last = inBlock;
    }
  return last;
}

/// Moves `op` after the last later reader of its destination's old value
/// where that is legal (`op` is pure and its results are first used after
/// that reader) and makes no copy elsewhere (no op it moves past may write
/// into one of its operands, which `op` would then read after the write).
bool sinkPastReaders(Operation *op) {
  Block *block = op->getBlock();
  if (!isMemoryEffectFree(op))
    return false;
  Operation *target = nullptr;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()) &&
        mayWriteInto(op, operand))
      if (Operation *last = lastReaderAfter(op, operand.get(), block))
        if (!target || target->isBeforeInBlock(last))
          target = last;
  if (!target)
    return false;
  for (Operation *user : op->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || !target->isBeforeInBlock(inBlock))
      return false;
  }
  SmallVector<SetVector<Value>> operandAliases;
  for (Value operand : op->getOperands())
    if (isa<RankedTensorType>(operand.getType()))
      operandAliases.push_back(aliasesOf(operand));
  for (Operation *it = op->getNextNode(); it != target->getNextNode();
       it = it->getNextNode()) {
    bool writes = false;
    it->walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands())
        for (const SetVector<Value> &aliases : operandAliases)
          if (aliases.contains(use.get()) && mayWriteInto(nested, use))
            writes = true;
    });
    if (writes)
      return false;
  }
  op->moveAfter(target);
  return true;
}

struct SinkSegmentUpdates
    : ssd::impl::SSDCPUSinkSegmentUpdatesBase<SinkSegmentUpdates> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForOp loop) {
      if (!loop->hasAttr(ssd::kSegmentLoopAttr))
        return;
      // Each op of the body once, in order, as it stood before any move.
      SmallVector<Operation *> ops;
      for (Operation &op : loop.getBody()->without_terminator())
        ops.push_back(&op);
      for (Operation *op : ops)
        sinkPastReaders(op);
    });
  }
};

} // namespace
