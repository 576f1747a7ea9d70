//===- FusedProblem.cpp - what the fused GPU lowering reads off the IR ----===//
//
// The pass accepts one func.func holding one ssd.fused whose operands are
// all function arguments and whose results are what the function returns.
// The tensors keep the unfused lowering's manifest names and symbols; the
// workspaces are the fused kernel's own: the chunk-level intermediates
// (dt_out, dA_cumsum, CB), the state slots and the counters.
//
//===----------------------------------------------------------------------===//
#include "FusedKernel.h"
#include "Profile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

constexpr StringLiteral kPass = "convert-ssd-fused-to-gpu";

/// The manifest expression of a product, numbers folded ("b * 80").
std::string productExpr(ArrayRef<std::string> factors) {
  int64_t number = 1;
  std::string symbols;
  for (const std::string &f : factors) {
    int64_t v;
    if (!StringRef(f).getAsInteger(10, v)) {
      number *= v;
      continue;
    }
    symbols += (symbols.empty() ? "" : " * ") + f;
  }
  if (symbols.empty())
    return std::to_string(number);
  return number == 1 ? symbols : symbols + " * " + std::to_string(number);
}

std::string symbolOf(RankedTensorType type, unsigned d, StringRef role) {
  if (!type.isDynamicDim(d))
    return std::to_string(type.getDimSize(d));
  return role.str();
}

struct FusedAnalyzer {
  func::FuncOp func;
  FusedPlan plan;
  SSDProblem &p = plan.p;

  LogicalResult fail(Operation *op, const Twine &msg) {
    op->emitOpError() << msg;
    return failure();
  }

  LogicalResult addTensor(StringRef name, Value v, ArrayRef<StringRef> roles,
                          bool output = false) {
    if (!v)
      return success();
    if (!output) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &func.getBody().front())
        return fail(plan.op, "operand '" + name +
                                 "' must be an argument of "
                                 "the function for " +
                                 kPass + " (the runtime binds it)");
    }
    BufferSpec spec{
        name.str(), cast<RankedTensorType>(v.getType()), {}, output, false};
    for (int64_t d = 0, e = spec.type.getRank(); d < e; ++d)
      spec.shape.push_back(symbolOf(spec.type, d, roles[d]));
    p.buffers.push_back(spec);
    return success();
  }

  void addWorkspace(StringRef name, ArrayRef<int64_t> shape, Type element,
                    ArrayRef<std::string> symbols, bool zero = false) {
    BufferSpec spec{name.str(), RankedTensorType::get(shape, element),
                    SmallVector<std::string>(symbols), false, true};
    p.buffers.push_back(spec);
    if (zero)
      plan.zeroInit.push_back(name.str());
  }

  LogicalResult findOp();
  LogicalResult collectTensors();
  LogicalResult checkNoOtherOps();
  LogicalResult readSizes(int64_t defaultPBlock);
  void addWorkspaces();
};

LogicalResult FusedAnalyzer::findOp() {
  for (Operation &op : func.getBody().getOps()) {
    if (isa<CombinedOp>(op))
      return fail(&op, Twine("must be fused first: run --ssd-decompose "
                             "--ssd-fuse before ") +
                           kPass);
    if (isa<FusedOp>(op)) {
      if (plan.op)
        return fail(&op, Twine(kPass) + " expects one ssd.fused per "
                                        "function (one persistent kernel)");
      plan.op = cast<FusedOp>(op);
      continue;
    }
    if (isa<SSDDialect>(op.getDialect()))
      return fail(&op, Twine("is not part of an ssd.fused; ") + kPass +
                           " lowers only fused layers (run --ssd-fuse "
                           "with emit-remarks=true to see why this chain "
                           "was not fused, or use convert-ssd-to-gpu)");
  }
  if (!plan.op)
    return func.emitError() << kPass
                            << ": no ssd.fused in the function; run "
                               "--ssd-decompose --ssd-fuse first";
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value v : ret.getOperands())
    if (v.getDefiningOp() != plan.op.getOperation())
      return fail(ret, Twine("may only return the results of ssd.fused "
                             "for ") +
                           kPass);
  return success();
}

/// After the operands are known to be arguments: nothing else may run.
LogicalResult FusedAnalyzer::checkNoOtherOps() {
  for (Operation &op : func.getBody().getOps())
    if (!isa<FusedOp, func::ReturnOp>(op))
      return fail(&op, Twine("is not supported by ") + kPass +
                           " (the function may hold only ssd.fused)");
  return success();
}

LogicalResult FusedAnalyzer::collectTensors() {
  FusedOp op = plan.op;
  bool varlen = static_cast<bool>(op.getCuSeqlens());
  if (varlen && op.getSeqIdx())
    return fail(op, Twine(kPass) + " does not support seq_idx together "
                                   "with cu_seqlens");
  StringRef seqDim = varlen ? "s" : "b";
  Value d = op.getD();
  SmallVector<StringRef> dRoles = {"h", "p"};
  if (failed(addTensor("x", op.getX(), {"b", "L", "h", "p"})) ||
      failed(addTensor("dt", op.getDt(), {"b", "L", "h"})) ||
      failed(addTensor("A", op.getA(), {"h"})) ||
      failed(addTensor("B", op.getB(), {"b", "L", "g", "n"})) ||
      failed(addTensor("C", op.getC(), {"b", "L", "g", "n"})) ||
      failed(addTensor("D", d, dRoles)) ||
      failed(addTensor("z", op.getZ(), {"b", "L", "h", "p"})) ||
      failed(addTensor("dt_bias", op.getDtBias(), {"h"})) ||
      failed(addTensor("initial_states", op.getInitialStates(),
                       {seqDim, "h", "p", "n"})) ||
      failed(addTensor("seq_idx", op.getSeqIdx(), {"b", "L"})) ||
      failed(addTensor("cu_seqlens", op.getCuSeqlens(), {"s1"})) ||
      failed(addTensor("y", op.getY(), {"b", "L", "h", "p"}, true)) ||
      failed(addTensor("final_states", op.getFinalStates(),
                       {seqDim, "h", "p", "n"}, true)))
    return failure();
  bool sBound =
      p.has("initial_states") && p.find("initial_states")->type.isDynamicDim(0);
  for (BufferSpec &s : p.buffers)
    if (s.name == "cu_seqlens" && sBound && s.shape[0] == "s1")
      s.shape[0] = "s + 1";
  // Without initial_states nothing but cu_seqlens binds the sequence count:
  // final_states' rows are the expression (a bare "s" in an output's shape
  // would bind it, so it cannot also be derived).
  if (varlen && !sBound)
    for (BufferSpec &s : p.buffers)
      if (s.name == "final_states" && s.shape[0] == "s")
        s.shape[0] = "s1 - 1";
  return success();
}

LogicalResult FusedAnalyzer::readSizes(int64_t defaultPBlock) {
  FusedOp op = plan.op;
  auto x = cast<RankedTensorType>(op.getX().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  auto fs = cast<RankedTensorType>(op.getFinalStates().getType());
  if (x.isDynamicDim(2) || x.isDynamicDim(3) || bType.isDynamicDim(2) ||
      bType.isDynamicDim(3) || fs.isDynamicDim(3))
    return fail(op, Twine("cannot be lowered by ") + kPass +
                        ": nheads, headdim, ngroups and dstate must be "
                        "static (the kernel specialises on them)");
  p.heads = x.getDimSize(2);
  p.headDim = x.getDimSize(3);
  p.groups = bType.getDimSize(2);
  p.state = bType.getDimSize(3);
  p.chunk = static_cast<int64_t>(op.getChunkSize());
  if (std::string why = unsupportedSizes(p); !why.empty())
    return fail(op, Twine("cannot be lowered by ") + kPass + ": " + why);
  p.elementType = x.getElementType();
  p.stateType = op.getStateElementType();
  p.chunkStateType = Float32Type::get(op.getContext());
  p.softplus = op.getDtSoftplus();
  auto [lo, hi] = op.getDtLimitOrDefault();
  p.dtLow = lo;
  p.dtHigh = hi;
  p.perChannelD = p.has("D") && p.find("D")->type.getRank() == 2;

  std::optional<uint64_t> attr = op.getPBlock();
  plan.pBlock = attr ? static_cast<int64_t>(*attr) : 0;
  if (!plan.pBlock) {
    // The largest power of two up to the default that divides headdim.
    plan.pBlock = 1;
    while (plan.pBlock * 2 <= defaultPBlock &&
           p.headDim % (plan.pBlock * 2) == 0)
      plan.pBlock *= 2;
  }
  plan.pBlocks = p.headDim / plan.pBlock;
  return success();
}

void FusedAnalyzer::addWorkspaces() {
  auto x = p.find("x")->type;
  int64_t dyn = ShapedType::kDynamic;
  bool varlen = p.isVarlen();
  int64_t b = x.getDimSize(0), len = x.getDimSize(1);
  p.batchExpr = symbolOf(x, 0, "b");
  // nc: static when L (and with cu_seqlens, s) is.
  int64_t nc = dyn;
  std::string seqs = "1";
  int64_t numSeqs = 1;
  if (varlen) {
    const BufferSpec *cu = p.find("cu_seqlens");
    seqs = cu->shape[0] == "s + 1" ? "s"
           : cu->shape[0] == "s1"  ? "(s1 - 1)"
                                   : std::to_string(cu->type.getDimSize(0) - 1);
    numSeqs = cu->type.isDynamicDim(0) ? dyn : cu->type.getDimSize(0) - 1;
  }
  if (len != dyn && numSeqs != dyn)
    nc = (len + p.chunk - 1) / p.chunk + (varlen ? numSeqs - 1 : 0);
  p.chunksExpr = nc == dyn ? "nc" : std::to_string(nc);
  if (varlen && nc == dyn)
    p.derived.push_back({"nc", "ceildiv(L, Q) + " + seqs + " - 1"});
  int64_t slots = nc == dyn || numSeqs == dyn ? dyn : nc + numSeqs;
  std::string slotsExpr =
      slots == dyn ? p.chunksExpr + " + " + seqs : std::to_string(slots);
  std::string bx = p.batchExpr, ncx = p.chunksExpr;
  auto num = [](int64_t v) { return std::to_string(v); };
  auto product = [&](std::initializer_list<int64_t> dims) {
    int64_t r = 1;
    for (int64_t v : dims) {
      if (v == dyn)
        return dyn;
      r *= v;
    }
    return r;
  };
  Type f32 = Float32Type::get(func.getContext());
  Type i32 = IntegerType::get(func.getContext(), 32);
  int64_t h = p.heads, q = p.chunk, g = p.groups;
  addWorkspace("dt_out", {b, h, nc, q}, f32, {bx, num(h), ncx, num(q)});
  addWorkspace("dA_cumsum", {b, h, nc, q}, f32, {bx, num(h), ncx, num(q)});
  addWorkspace("CB", {b, nc, g, q, q}, f32, {bx, ncx, num(g), num(q), num(q)});
  addWorkspace("passed_states", {b, slots, h, p.headDim, p.state}, p.stateType,
               {bx, slotsExpr, num(h), num(p.headDim), num(p.state)});
  addWorkspace("ticket", {1}, i32, {"1"}, true);
  addWorkspace("cumsum_ready", {product({b, nc})}, i32,
               {productExpr({bx, ncx})}, true);
  addWorkspace("cb_ready", {product({b, nc, g})}, i32,
               {productExpr({bx, ncx, num(g)})}, true);
  addWorkspace("state_turn", {product({b, h, plan.pBlocks})}, i32,
               {productExpr({bx, num(h * plan.pBlocks)})}, true);
}

} // namespace

FailureOr<FusedPlan> analyzeFused(ModuleOp module, int64_t defaultPBlock) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (funcs.size() != 1) {
    module.emitError() << kPass
                       << " expects exactly one func.func in the module, "
                          "found "
                       << funcs.size();
    return failure();
  }
  FusedAnalyzer a;
  a.func = funcs.front();
  if (failed(a.findOp()) || failed(a.collectTensors()) ||
      failed(a.checkNoOtherOps()) || failed(a.readSizes(defaultPBlock)))
    return failure();
  a.addWorkspaces();
  a.plan.p.func = a.func;
  return a.plan;
}

void addProfileWorkspace(FusedPlan &plan) {
  plan.profile = true;
  // dA_cumsum is [b, heads, nc, Q]: the same batch and chunk dimensions.
  const BufferSpec *dA = plan.p.find("dA_cumsum");
  assert(dA && "the fused workspaces are declared");
  // Copies: the pushes below may move the buffers.
  SmallVector<int64_t> dims(dA->type.getShape());
  std::string bx = dA->shape[0], ncx = dA->shape[2];
  MLIRContext *ctx = dA->type.getContext();
  int64_t h = plan.p.heads, pb = plan.pBlocks;
  BufferSpec spec{
      "chain_profile",
      RankedTensorType::get({dims[0], dims[2], h, pb, kProfileFields},
                            IntegerType::get(ctx, 64)),
      {bx, ncx, std::to_string(h), std::to_string(pb),
       std::to_string(kProfileFields)},
      false,
      true};
  plan.p.buffers.push_back(spec);
  // One record per ticket: init and final items per (row, head, p-block),
  // per chunk at most a cumsum item per slice of heads, a bmm item per tile
  // and group, and the chain items, and in clusters each kind's range padded to
  // whole groups. Zeroed per launch: a record no item wrote (spare ones, where
  // clusters pad fewer tickets than allowed for) stays all zero.
  int64_t padding = kItemKinds * (chooseKernelConfig(plan).cluster - 1);
  int64_t perRow = 2 * h * pb;
  int64_t perChunk =
      cumsumSliceItems(h) + plan.p.groups * cbTileItems(plan.p.chunk) + h * pb;
  std::string tickets = productExpr({bx, std::to_string(perRow)}) + " + " +
                        productExpr({bx, ncx, std::to_string(perChunk)});
  if (padding)
    tickets += " + " + std::to_string(padding);
  int64_t dyn = ShapedType::kDynamic;
  int64_t b = dims[0], nc = dims[2];
  int64_t count =
      b == dyn || nc == dyn ? dyn : b * perRow + b * nc * perChunk + padding;
  plan.zeroInit.push_back("item_log");
  plan.p.buffers.push_back(BufferSpec{
      "item_log",
      RankedTensorType::get({count, kItemLogFields}, IntegerType::get(ctx, 64)),
      {tickets, std::to_string(kItemLogFields)},
      false,
      true});
}

void addLookBackWorkspaces(FusedPlan &plan) {
  // Shaped after dA_cumsum [b, heads, nc, Q] and passed_states, in the
  // state precision (LookBack.cpp rounds an item's own chunk state the
  // same way where it does not publish it).
  const BufferSpec *dA = plan.p.find("dA_cumsum");
  const BufferSpec *slots = plan.p.find("passed_states");
  assert(dA && slots && "the fused workspaces are declared");
  int64_t b = dA->type.getDimSize(0), nc = dA->type.getDimSize(2);
  const std::string &bx = dA->shape[0], &ncx = dA->shape[2];
  int64_t perRow = plan.p.heads * plan.pBlocks;
  SmallVector<int64_t> shape(slots->type.getShape());
  shape[1] = nc;
  SmallVector<std::string> symbols(slots->shape);
  symbols[1] = ncx;
  BufferSpec chunkStates{
      "chunk_states",
      RankedTensorType::get(shape, slots->type.getElementType()), symbols,
      false, true};
  int64_t dyn = ShapedType::kDynamic;
  int64_t statuses = b == dyn || nc == dyn ? dyn : b * nc * perRow;
  BufferSpec status{
      "chain_status",
      RankedTensorType::get({statuses},
                            IntegerType::get(dA->type.getContext(), 32)),
      {productExpr({bx, ncx, std::to_string(perRow)})},
      false,
      true};
  if (chooseKernelConfig(plan).adaptive()) {
    // state-chain=auto: the look-back kernel runs where the grid (num_sms
    // x kBlocksPerSM blocks) holds at least kLookBackBlocksPerChain blocks
    // per chain; the manifest launches it under `look_back`, with a slot
    // per chunk boundary and the chunk states, and the turn-chain kernel
    // under `1 - look_back`, with the ring, one unused chunk state and one
    // unused status.
    int64_t blocksPerRow = perRow * kLookBackBlocksPerChain;
    plan.p.derived.push_back(
        {"look_back", "1 - min(1, (" + bx + " * " +
                          std::to_string(blocksPerRow) + " - 1) / (num_sms * " +
                          std::to_string(kBlocksPerSM) + "))"});
    BufferSpec &passed = *plan.p.find("passed_states");
    SmallVector<int64_t> passedShape(passed.type.getShape());
    passedShape[1] = dyn;
    passed.type =
        RankedTensorType::get(passedShape, passed.type.getElementType());
    passed.shape[1] = std::to_string(kStateRingSlots) + " + look_back * (" +
                      ncx + " + 1 - " + std::to_string(kStateRingSlots) + ")";
    shape[0] = shape[1] = dyn;
    chunkStates.type =
        RankedTensorType::get(shape, chunkStates.type.getElementType());
    chunkStates.shape[0] = "max(1, look_back * " + bx + ")";
    chunkStates.shape[1] = "max(1, look_back * " + ncx + ")";
    status.type = RankedTensorType::get({dyn}, status.type.getElementType());
    status.shape[0] = "max(1, look_back * " + status.shape[0] + ")";
  }
  // The statuses beside the counters (the runtime zeroes adjacent
  // zero-initialised workspaces with one memset), the chunk states last:
  // with state-chain=auto a launch that takes the turns then has the turn
  // chain's own workspace layout, and a few bytes more at its end (with
  // the chunk states between the slots and the counters, and every status
  // zeroed, the same kernel was 2% slower at 24 heads, b 2 to 8, 2K).
  auto after = [&](StringRef name) {
    return plan.p.buffers.begin() +
           (plan.p.find(name) - plan.p.buffers.data()) + 1;
  };
  plan.p.buffers.insert(after("state_turn"), status);
  plan.p.buffers.insert(after("chain_status"), chunkStates);
  plan.zeroInit.push_back("chain_status");
}

void sizeStateSlots(FusedPlan &plan) {
  int64_t ring = chooseKernelConfig(plan).stateRing;
  if (!ring)
    return;
  for (BufferSpec &spec : plan.p.buffers) {
    if (spec.name != "passed_states")
      continue;
    SmallVector<int64_t> shape(spec.type.getShape());
    shape[1] = ring;
    spec.type = RankedTensorType::get(shape, spec.type.getElementType());
    spec.shape[1] = std::to_string(ring);
  }
}

void dropUnreadCumsums(FusedPlan &plan) {
  KernelConfig config = chooseKernelConfig(plan);
  if (!config.ownCumsum || config.adaptive())
    return;
  auto unread = [](StringRef name) {
    return name == "dt_out" || name == "dA_cumsum" || name == "cumsum_ready";
  };
  llvm::erase_if(plan.p.buffers,
                 [&](const BufferSpec &spec) { return unread(spec.name); });
  llvm::erase_if(plan.zeroInit,
                 [&](const std::string &name) { return unread(name); });
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
