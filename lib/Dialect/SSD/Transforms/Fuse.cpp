//===- Fuse.cpp - a chain of SSD step ops into ssd.fused ------------------===//
//
// The match starts at ssd.chunk_scan and walks the chain back through its
// operands. It succeeds only when the chain is exactly one layer's
// computation and no intermediate escapes it, because the fused kernel keeps
// every intermediate to itself.
//
//===----------------------------------------------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <variant>

namespace ssd {
#define GEN_PASS_DEF_SSDFUSE
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd;

namespace {

/// The six ops of one layer, as found from its chunk_scan.
struct StepChain {
  ChunkCumsumOp cumsum;
  SegsumOp segsum;
  BmmOp bmm;
  ChunkStateOp state;
  StatePassingOp passing;
  ChunkScanOp scan;
};

/// Why a chain is not fusable, or success with the chain.
using ChainOrReason = std::variant<StepChain, std::string>;

/// True when every user of `value` is one of `allowed`.
static bool usedOnlyBy(Value value, ArrayRef<Operation *> allowed) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    return llvm::is_contained(allowed, user);
  });
}

template <typename OpTy> static OpTy producer(Value value) {
  return value.getDefiningOp<OpTy>();
}

static ChainOrReason matchChain(ChunkScanOp scan) {
  StepChain c;
  c.scan = scan;
  if (!(c.cumsum = producer<ChunkCumsumOp>(scan.getDACumsum())))
    return std::string("chunk_scan's dA_cumsum is not produced by "
                       "ssd.chunk_cumsum");
  if (scan.getDt() != c.cumsum.getDtOut())
    return std::string("chunk_scan's dt is not the dt of its chunk_cumsum");
  if (!(c.segsum = producer<SegsumOp>(scan.getSegsum())))
    return std::string("chunk_scan's segsum is not produced by ssd.segsum");
  if (c.segsum.getDACumsum() != c.cumsum.getDACumsum())
    return std::string("segsum reads another dA_cumsum than chunk_scan");
  if (!(c.bmm = producer<BmmOp>(scan.getCB())))
    return std::string("chunk_scan's CB is not produced by ssd.bmm");
  if (!(c.passing = producer<StatePassingOp>(scan.getStates())) ||
      scan.getStates() != c.passing.getOut())
    return std::string("chunk_scan's states are not the passed states of "
                       "ssd.state_passing");
  if (!(c.state = producer<ChunkStateOp>(c.passing.getStates())))
    return std::string("state_passing's states are not produced by "
                       "ssd.chunk_state");

  // Every step must read the same layer inputs.
  if (c.bmm.getC() != scan.getC())
    return std::string("bmm and chunk_scan read different C");
  if (c.state.getB() != c.bmm.getB())
    return std::string("chunk_state and bmm read different B");
  if (c.state.getX() != scan.getX())
    return std::string("chunk_state and chunk_scan read different x");
  if (c.state.getDt() != c.cumsum.getDtOut() ||
      c.state.getDACumsum() != c.cumsum.getDACumsum() ||
      c.passing.getDACumsum() != c.cumsum.getDACumsum())
    return std::string("chunk_state or state_passing read another "
                       "chunk_cumsum's results");
  Value seqIdx = scan.getSeqIdx(), cu = scan.getCuSeqlens();
  if (c.bmm.getSeqIdx() != seqIdx || c.state.getSeqIdx() != seqIdx ||
      c.passing.getSeqIdx() != seqIdx)
    return std::string("the steps do not share one seq_idx");
  if (c.cumsum.getCuSeqlens() != cu || c.bmm.getCuSeqlens() != cu ||
      c.state.getCuSeqlens() != cu || c.passing.getCuSeqlens() != cu)
    return std::string("the steps do not share one cu_seqlens");
  if (!getElementTypeOrSelf(c.state.getStates().getType()).isF32())
    return std::string("chunk_state accumulates in f16; the fused kernel "
                       "accumulates chunk states in f32");

  // No intermediate may escape the chain.
  SmallVector<Operation *> chain = {c.cumsum, c.segsum,  c.bmm,
                                    c.state,  c.passing, c.scan};
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"dt", c.cumsum.getDtOut()},
        {"dA_cumsum", c.cumsum.getDACumsum()},
        {"segsum", c.segsum.getSegsum()},
        {"CB", c.bmm.getCB()},
        {"chunk states", c.state.getStates()},
        {"passed states", c.passing.getOut()}})
    if (!usedOnlyBy(value, chain))
      return ("the " + name + " intermediate has a user outside the chain")
          .str();
  return c;
}

struct FuseChain : OpRewritePattern<ChunkScanOp> {
  FuseChain(MLIRContext *ctx, bool emitRemarks, int64_t pBlock)
      : OpRewritePattern(ctx), emitRemarks(emitRemarks), pBlock(pBlock) {}

  LogicalResult matchAndRewrite(ChunkScanOp scan,
                                PatternRewriter &rewriter) const override {
    ChainOrReason match = matchChain(scan);
    if (auto *reason = std::get_if<std::string>(&match)) {
      if (emitRemarks)
        scan.emitRemark() << "ssd-fuse: not fused: " << *reason;
      return rewriter.notifyMatchFailure(scan, *reason);
    }
    StepChain &c = std::get<StepChain>(match);
    SmallVector<Value> inputs = {
        scan.getX(),      c.cumsum.getDt(),     c.cumsum.getA(),
        c.bmm.getB(),     scan.getC(),          scan.getD(),
        scan.getZ(),      c.cumsum.getDtBias(), c.passing.getInitialStates(),
        scan.getSeqIdx(), scan.getCuSeqlens()};
    // The fused op goes right after its last input is defined; every use of
    // final_states must come after that point.
    Operation *anchor = insertionAnchor(c, inputs);
    for (Operation *user : c.passing.getFinalStates().getUsers()) {
      Operation *inBlock = anchor->getBlock()->findAncestorOpInBlock(*user);
      if (!inBlock || inBlock->isBeforeInBlock(anchor) || inBlock == anchor) {
        StringRef reason = "final_states is used before every input of the "
                           "layer is defined";
        if (emitRemarks)
          scan.emitRemark() << "ssd-fuse: not fused: " << reason;
        return rewriter.notifyMatchFailure(scan, reason);
      }
    }
    rewriter.setInsertionPoint(anchor);

    int64_t chunkSize =
        cast<RankedTensorType>(c.cumsum.getDACumsum().getType()).getDimSize(3);
    // A p-block that does not divide this layer's headdim is not recorded;
    // the lowering then picks its own.
    int64_t headDim =
        cast<RankedTensorType>(scan.getX().getType()).getDimSize(3);
    bool recordPBlock =
        pBlock > 0 && pBlock <= headDim && headDim % pBlock == 0;
    if (pBlock > 0 && !recordPBlock && emitRemarks)
      scan.emitRemark() << "ssd-fuse: p-block " << static_cast<int64_t>(pBlock)
                        << " does not divide headdim " << headDim
                        << "; not recorded";
    Type stateType = getElementTypeOrSelf(c.passing.getOut().getType());
    auto fused = FusedOp::create(
        rewriter, scan.getLoc(), scan.getY().getType(),
        c.passing.getFinalStates().getType(), inputs[0], inputs[1], inputs[2],
        inputs[3], inputs[4], inputs[5], inputs[6], inputs[7], inputs[8],
        inputs[9], inputs[10], rewriter.getI64IntegerAttr(chunkSize),
        c.cumsum.getDtSoftplusAttr(), c.cumsum.getDtLimitAttr(),
        stateType.isF32() ? TypeAttr() : TypeAttr::get(stateType),
        recordPBlock ? rewriter.getI64IntegerAttr(pBlock) : IntegerAttr());
    rewriter.replaceAllUsesWith(c.passing.getFinalStates(),
                                fused.getFinalStates());
    rewriter.replaceOp(scan, fused.getY());
    for (Operation *op : {c.passing.getOperation(), c.state.getOperation(),
                          c.bmm.getOperation(), c.segsum.getOperation(),
                          c.cumsum.getOperation()})
      rewriter.eraseOp(op);
    return success();
  }

  /// The op before which the fused op is created: right after the last
  /// input defined in the chain's block, or at the chain's first op when
  /// every input comes from outside it.
  static Operation *insertionAnchor(StepChain &c, ArrayRef<Value> inputs) {
    Block *block = c.scan->getBlock();
    Operation *first = c.cumsum;
    for (Operation *op : {c.segsum.getOperation(), c.bmm.getOperation(),
                          c.state.getOperation(), c.passing.getOperation()})
      if (op->isBeforeInBlock(first))
        first = op;
    Operation *lastDef = nullptr;
    for (Value input : inputs) {
      Operation *def = input ? input.getDefiningOp() : nullptr;
      if (!def || def->getBlock() != block)
        continue;
      if (!lastDef || lastDef->isBeforeInBlock(def))
        lastDef = def;
    }
    if (!lastDef || lastDef->isBeforeInBlock(first))
      return first;
    return lastDef->getNextNode();
  }

  bool emitRemarks;
  int64_t pBlock;
};

struct SSDFusePass : ssd::impl::SSDFuseBase<SSDFusePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t p = pBlock;
    if (p < 0 || (p > 0 && !llvm::isPowerOf2_64(static_cast<uint64_t>(p)))) {
      emitError(getOperation()->getLoc())
          << "ssd-fuse: p-block must be a power of two or 0, got " << p;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateSSDFusePatterns(patterns, emitRemarks, p);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void ssd::populateSSDFusePatterns(RewritePatternSet &patterns, bool emitRemarks,
                                  int64_t pBlock) {
  patterns.add<FuseChain>(patterns.getContext(), emitRemarks, pBlock);
}
