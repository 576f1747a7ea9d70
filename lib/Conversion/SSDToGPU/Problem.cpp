//===- Problem.cpp - what the unfused GPU lowering reads off the IR -------===//
//
// The pass accepts exactly the data flow of ssd-decompose inside one
// function: every user-visible tensor is a function argument, y and
// final_states are returned. Anything else gets a diagnostic here, before
// any IR is built.
//
//===----------------------------------------------------------------------===//
#include "KernelCommon.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

const BufferSpec *SSDProblem::find(StringRef name) const {
  for (const BufferSpec &s : buffers)
    if (s.name == name)
      return &s;
  return nullptr;
}

namespace {

/// Finds the single op of type OpTy in `func`, or reports why not.
template <typename OpTy>
FailureOr<OpTy> uniqueOp(func::FuncOp func, StringRef what, bool required) {
  OpTy found;
  for (Operation &op : func.getBody().getOps()) {
    auto typed = dyn_cast<OpTy>(&op);
    if (!typed)
      continue;
    if (found)
      return typed.emitOpError()
             << "convert-ssd-to-gpu expects one " << what
             << " per function (the data flow of ssd-decompose)";
    found = typed;
  }
  if (!found && required)
    return func.emitError() << "convert-ssd-to-gpu: no " << what
                            << " in the function; run --ssd-decompose first";
  return found;
}

/// Symbol of a dimension: its static size, or the role symbol.
std::string dimSymbol(RankedTensorType type, unsigned d, StringRef role) {
  if (!type.isDynamicDim(d))
    return std::to_string(type.getDimSize(d));
  return role.str();
}

struct Analyzer {
  func::FuncOp func;
  SSDProblem p;

  LogicalResult fail(Operation *op, const Twine &msg) {
    op->emitOpError() << msg;
    return failure();
  }

  /// Records function argument `v` as tensor `name` with dimension roles.
  LogicalResult addTensor(Operation *user, StringRef name, Value v,
                          ArrayRef<StringRef> roles) {
    if (!v)
      return success();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return fail(user, "operand '" + name +
                            "' must be an argument of the function for "
                            "convert-ssd-to-gpu (the runtime binds it)");
    if (const BufferSpec *known = p.find(name)) {
      if (known->type != v.getType())
        return fail(user, "operand '" + name + "' differs between step ops");
      return success();
    }
    BufferSpec spec{name.str(), cast<RankedTensorType>(v.getType()), {}};
    for (int64_t d = 0, e = spec.type.getRank(); d < e; ++d)
      spec.shape.push_back(
          dimSymbol(spec.type, d, d < (int64_t)roles.size() ? roles[d] : ""));
    p.buffers.push_back(spec);
    return success();
  }

  void addBuffer(StringRef name, Value v, ArrayRef<StringRef> roles,
                 bool workspace, bool output = false) {
    BufferSpec spec{name.str(), cast<RankedTensorType>(v.getType()), {},
                    output, workspace};
    for (int64_t d = 0, e = spec.type.getRank(); d < e; ++d)
      spec.shape.push_back(
          dimSymbol(spec.type, d, d < (int64_t)roles.size() ? roles[d] : ""));
    p.buffers.push_back(spec);
  }

  LogicalResult checkDataFlow();
  LogicalResult collectTensors();
  void describeSymbols();
  LogicalResult run();
};

LogicalResult Analyzer::checkDataFlow() {
  ChunkScanOp scan = p.chunkScan;
  auto expect = [&](Operation *op, StringRef operand, Value got,
                    Value want) -> LogicalResult {
    if (got == want)
      return success();
    return fail(op, "operand '" + operand +
                        "' must come from the ssd-decompose data flow "
                        "(convert-ssd-to-gpu launches one kernel per step)");
  };
  if (failed(expect(p.chunkState, "dt", p.chunkState.getDt(),
                    p.cumsum.getDtOut())) ||
      failed(expect(p.chunkState, "dA_cumsum", p.chunkState.getDACumsum(),
                    p.cumsum.getDACumsum())) ||
      failed(expect(p.statePassing, "states", p.statePassing.getStates(),
                    p.chunkState.getStates())) ||
      failed(expect(p.statePassing, "dA_cumsum",
                    p.statePassing.getDACumsum(), p.cumsum.getDACumsum())) ||
      failed(expect(scan, "dt", scan.getDt(), p.cumsum.getDtOut())) ||
      failed(expect(scan, "dA_cumsum", scan.getDACumsum(),
                    p.cumsum.getDACumsum())) ||
      failed(expect(scan, "CB", scan.getCB(), p.bmm.getCB())) ||
      failed(expect(scan, "states", scan.getStates(),
                    p.statePassing.getOut())))
    return failure();
  auto segsum = scan.getSegsum().getDefiningOp<SegsumOp>();
  if (!segsum || segsum.getDACumsum() != p.cumsum.getDACumsum())
    return fail(scan, "operand 'segsum' must be ssd.segsum of the chunk "
                      "cumsum (chunk_scan derives the decays from dA_cumsum)");
  // The function returns y and final_states, nothing computed elsewhere.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value v : ret.getOperands())
    if (v != scan.getY() && v != p.statePassing.getFinalStates())
      return fail(ret, "may only return the chunk_scan result (y) and the "
                       "state_passing final_states for convert-ssd-to-gpu");
  for (Operation &op : func.getBody().getOps())
    if (!isa<SSDDialect>(op.getDialect()) && !isa<func::ReturnOp>(op))
      return fail(&op, "is not supported by convert-ssd-to-gpu (the "
                       "function may hold only the ssd step ops)");
  return success();
}

LogicalResult Analyzer::collectTensors() {
  ChunkScanOp scan = p.chunkScan;
  StatePassingOp sp = p.statePassing;
  bool varlen = static_cast<bool>(p.cumsum.getCuSeqlens());
  StringRef seqDim = varlen ? "s" : "b";
  if (failed(addTensor(scan, "x", scan.getX(), {"b", "L", "h", "p"})) ||
      failed(addTensor(p.cumsum, "dt", p.cumsum.getDt(), {"b", "L", "h"})) ||
      failed(addTensor(p.cumsum, "A", p.cumsum.getA(), {"h"})) ||
      failed(addTensor(p.bmm, "B", p.bmm.getB(), {"b", "L", "g", "n"})) ||
      failed(addTensor(p.chunkState, "B", p.chunkState.getB(),
                       {"b", "L", "g", "n"})) ||
      failed(addTensor(p.bmm, "C", p.bmm.getC(), {"b", "L", "g", "n"})) ||
      failed(addTensor(scan, "C", scan.getC(), {"b", "L", "g", "n"})) ||
      failed(addTensor(p.chunkState, "x", p.chunkState.getX(),
                       {"b", "L", "h", "p"})) ||
      failed(addTensor(scan, "D", scan.getD(), {"h", "p"})) ||
      failed(addTensor(scan, "z", scan.getZ(), {"b", "L", "h", "p"})) ||
      failed(addTensor(p.cumsum, "dt_bias", p.cumsum.getDtBias(), {"h"})) ||
      failed(addTensor(sp, "initial_states", sp.getInitialStates(),
                       {seqDim, "h", "p", "n"})) ||
      failed(addTensor(scan, "seq_idx", scan.getSeqIdx(), {"b", "L"})))
    return failure();
  for (Operation *op : {p.bmm.getOperation(), p.chunkState.getOperation(),
                        sp.getOperation()}) {
    Value seqIdx = TypeSwitch<Operation *, Value>(op)
                       .Case<BmmOp, ChunkStateOp, StatePassingOp>(
                           [](auto o) { return o.getSeqIdx(); });
    if (static_cast<bool>(seqIdx) != static_cast<bool>(scan.getSeqIdx()))
      return fail(op, "uses seq_idx differently from chunk_scan");
    if (failed(addTensor(op, "seq_idx", seqIdx, {"b", "L"})))
      return failure();
  }
  // cu_seqlens: "s + 1" when initial_states binds s, else its own symbol.
  bool sBound = p.has("initial_states") &&
                p.find("initial_states")->type.isDynamicDim(0);
  if (Value cu = p.cumsum.getCuSeqlens()) {
    if (failed(addTensor(p.cumsum, "cu_seqlens", cu, {"s1"})))
      return failure();
    if (sBound && p.buffers.back().shape[0] == "s1")
      p.buffers.back().shape[0] = "s + 1";
  }
  for (Operation *op : {p.bmm.getOperation(), p.chunkState.getOperation(),
                        sp.getOperation(), scan.getOperation()}) {
    Value cu = TypeSwitch<Operation *, Value>(op)
                   .Case<BmmOp, ChunkStateOp, StatePassingOp, ChunkScanOp>(
                       [](auto o) { return o.getCuSeqlens(); });
    if (static_cast<bool>(cu) != varlen)
      return fail(op, "uses cu_seqlens differently from chunk_cumsum");
    if (cu && cu != p.cumsum.getCuSeqlens())
      return fail(op, "operand 'cu_seqlens' differs between step ops");
  }
  // Outputs, then the workspaces between the kernels.
  addBuffer("y", scan.getY(), {"b", "L", "h", "p"}, false, true);
  addBuffer("final_states", sp.getFinalStates(), {seqDim, "h", "p", "n"},
            false, true);
  addBuffer("dt_out", p.cumsum.getDtOut(), {"b", "h", "nc", "Q"}, true);
  addBuffer("dA_cumsum", p.cumsum.getDACumsum(), {"b", "h", "nc", "Q"}, true);
  addBuffer("CB", p.bmm.getCB(), {"b", "nc", "g", "Q", "Q"}, true);
  addBuffer("states", p.chunkState.getStates(), {"b", "nc", "h", "p", "n"},
            true);
  addBuffer("prev_states", sp.getOut(), {"b", "nc", "h", "p", "n"}, true);
  // Varlen final states without initial states: their rows from
  // cu_seqlens, as an expression (a bare "s" in an output's shape would bind
  // it, so it cannot also be derived).
  if (varlen && !sBound)
    for (BufferSpec &s : p.buffers)
      if (s.name == "final_states" && s.shape[0] == "s")
        s.shape[0] = "s1 - 1";
  return success();
}

void Analyzer::describeSymbols() {
  auto x = p.find("x")->type;
  p.batchExpr = dimSymbol(x, 0, "b");
  auto dA = cast<RankedTensorType>(p.cumsum.getDACumsum().getType());
  p.chunksExpr = dimSymbol(dA, 2, "nc");
  if (!p.isVarlen() || !dA.isDynamicDim(2))
    return;
  // nc = ceil(L/Q) + s - 1, written over symbols bound by shapes only, so
  // that the order of the derived definitions does not matter.
  const BufferSpec *cu = p.find("cu_seqlens");
  std::string seqs = cu->shape[0] == "s + 1" ? "s"
                     : cu->shape[0] == "s1" ? "(s1 - 1)"
                                            : std::to_string(
                                                  cu->type.getDimSize(0) - 1);
  p.derived.push_back({"nc", "ceildiv(L, Q) + " + seqs + " - 1"});
}

LogicalResult Analyzer::run() {
  for (Operation &op : func.getBody().getOps())
    if (auto combined = dyn_cast<CombinedOp>(op))
      return fail(combined, "must be decomposed first (--ssd-decompose) "
                            "before convert-ssd-to-gpu");
  auto cumsum = uniqueOp<ChunkCumsumOp>(func, "ssd.chunk_cumsum", true);
  if (failed(cumsum))
    return failure();
  auto bmm = uniqueOp<BmmOp>(func, "ssd.bmm", true);
  if (failed(bmm))
    return failure();
  auto state = uniqueOp<ChunkStateOp>(func, "ssd.chunk_state", true);
  if (failed(state))
    return failure();
  auto passing = uniqueOp<StatePassingOp>(func, "ssd.state_passing", true);
  if (failed(passing))
    return failure();
  auto scan = uniqueOp<ChunkScanOp>(func, "ssd.chunk_scan", true);
  if (failed(scan) || failed(uniqueOp<SegsumOp>(func, "ssd.segsum", false)))
    return failure();
  p.func = func;
  p.cumsum = *cumsum;
  p.bmm = *bmm;
  p.chunkState = *state;
  p.statePassing = *passing;
  p.chunkScan = *scan;
  if (failed(checkDataFlow()) || failed(collectTensors()))
    return failure();

  auto xType = p.find("x")->type;
  auto cbType = cast<RankedTensorType>(p.bmm.getCB().getType());
  auto statesType = cast<RankedTensorType>(p.chunkState.getStates().getType());
  for (auto [name, type, dims] :
       {std::tuple{"x", xType, SmallVector<int64_t>{2, 3}},
        std::tuple{"CB", cbType, SmallVector<int64_t>{2, 3, 4}},
        std::tuple{"states", statesType, SmallVector<int64_t>{2, 3, 4}}})
    for (int64_t d : dims)
      if (type.isDynamicDim(d))
        return fail(p.chunkScan, std::string("cannot be lowered to the GPU: ") +
                                     name + " must have static h, p, g, n "
                                     "and chunk size (kernels specialise on "
                                     "them)");
  p.heads = xType.getDimSize(2);
  p.headDim = xType.getDimSize(3);
  p.groups = cbType.getDimSize(2);
  p.chunk = cbType.getDimSize(3);
  p.state = statesType.getDimSize(4);
  p.elementType = xType.getElementType();
  p.stateType =
      cast<RankedTensorType>(p.statePassing.getOut().getType()).getElementType();
  p.chunkStateType = statesType.getElementType();
  p.softplus = p.cumsum.getDtSoftplus();
  auto [lo, hi] = p.cumsum.getDtLimitOrDefault();
  p.dtLow = lo;
  p.dtHigh = hi;
  if (const BufferSpec *d = p.find("D"))
    p.perChannelD = d->type.getRank() == 2;
  if (std::string why = unsupportedSizes(p); !why.empty())
    return fail(p.chunkScan, "cannot be lowered to the GPU: " + why);
  describeSymbols();
  return success();
}

} // namespace

std::string unsupportedChunkSize(int64_t chunk) {
  // A smaller chunk would leave the kernels' grids (Q / 16 tiles) empty.
  if (chunk < 16)
    return "chunk size " + std::to_string(chunk) + " is below 16";
  if (chunk > 1024)
    return "chunk size " + std::to_string(chunk) + " is above 1024";
  return "";
}

std::string unsupportedSizes(const SSDProblem &p) {
  if (std::string why = unsupportedChunkSize(p.chunk); !why.empty())
    return why;
  // The kernels unroll their tiles over headdim and dstate at compile time:
  // past these the code (and ptxas's time) grows without bound.
  auto above = [](const char *name, int64_t size, int64_t limit) {
    return std::string(name) + " " + std::to_string(size) + " is above " +
           std::to_string(limit);
  };
  if (p.headDim > kMaxHeadDim)
    return above("headdim", p.headDim, kMaxHeadDim);
  if (p.state > kMaxDState)
    return above("dstate", p.state, kMaxDState);
  if (p.heads > kMaxHeads)
    return above("nheads", p.heads, kMaxHeads);
  return "";
}

FailureOr<SSDProblem> analyzeProblem(ModuleOp module) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (funcs.size() != 1) {
    module.emitError() << "convert-ssd-to-gpu expects exactly one func.func "
                          "in the module, found "
                       << funcs.size();
    return failure();
  }
  Analyzer analyzer;
  analyzer.func = funcs.front();
  if (failed(analyzer.run()))
    return failure();
  return analyzer.p;
}

//===----------------------------------------------------------------------===//
// Kernel functions
//===----------------------------------------------------------------------===//

void KernelFunc::useSharedArena() {
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&func.getBody().front());
  auto space = gpu::AddressSpaceAttr::get(func.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                               MemRefLayoutAttrInterface(), space);
  // The arena must be the kernel's only shared variable (sharedBuffer).
  assert(func.getNumWorkgroupAttributions() == 0 &&
         "no static shared buffer beside the arena");
  arenaBase = gpu::DynamicSharedMemoryOp::create(b, func.getLoc(), bytes);
}

Value KernelFunc::sharedBufferAligned(int64_t bytes, int64_t align) {
  assert(arenaBase && align > 16 && (align & (align - 1)) == 0 &&
         "an aligned buffer of the arena");
  Location loc = func.getLoc();
  OpBuilder b(func.getContext());
  b.setInsertionPointAfter(arenaBase.getDefiningOp());
  int64_t offset = arenaOffset;
  arenaOffset = roundUp(offset + bytes + align - 16, 16);
  arenaPeak = std::max(arenaPeak, arenaOffset);
  // shift = offset + (-(base + offset) mod align), base the arena's address.
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, arenaBase);
  Value at = arith::AddIOp::create(
      b, loc, base, arith::ConstantIndexOp::create(b, loc, offset));
  Value mask = arith::ConstantIndexOp::create(b, loc, align - 1);
  Value pad = arith::AndIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc,
                            arith::ConstantIndexOp::create(b, loc, align), at),
      mask);
  Value shift = arith::AddIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, offset), pad);
  auto type = MemRefType::get({bytes}, b.getI8Type(),
                              MemRefLayoutAttrInterface(),
                              cast<MemRefType>(arenaBase.getType())
                                  .getMemorySpace());
  return memref::ViewOp::create(b, loc, type, arenaBase, shift, ValueRange{});
}

// Every buffer is 16-byte aligned: ldmatrix rows and vector accesses need it.
Value KernelFunc::sharedBuffer(ArrayRef<int64_t> shape, Type element) {
  auto space = gpu::AddressSpaceAttr::get(func.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                              space);
  // A kernel with an arena has no other shared variable: the NVPTX backend
  // demotes the arena's zero-sized symbol to a one-byte variable that
  // ptxas lays out beside the others, so a static buffer would share bytes
  // with the arena's first buffers (the ticket slot did, with x's rows).
  if (arenaBase) {
    assert(!element.isIndex() && "the arena holds sized elements only");
    int64_t bytes = type.getNumElements() *
                    std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t offset = arenaOffset;
    arenaOffset = roundUp(offset + bytes, 16);
    arenaPeak = std::max(arenaPeak, arenaOffset);
    OpBuilder b(func.getContext());
    b.setInsertionPointAfter(arenaBase.getDefiningOp());
    Value at = arith::ConstantIndexOp::create(b, func.getLoc(), offset);
    return memref::ViewOp::create(b, func.getLoc(), type, arenaBase, at,
                                  ValueRange{});
  }
  Value buffer = func.addWorkgroupAttribution(type, func.getLoc());
  func.setWorkgroupAttributionAttr(
      func.getNumWorkgroupAttributions() - 1, "llvm.align",
      IntegerAttr::get(IntegerType::get(func.getContext(), 64), 16));
  return buffer;
}

MemRefType BufferSpec::memrefType() const {
  if (!acceptsViews())
    return MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), /*offset=*/0, strides));
}

void recordTmaDescriptorPositions(gpu::GPUFuncOp func) {
  // Lowered, a memref argument becomes (allocated, aligned, offset,
  // sizes..., strides...); a descriptor pointer stays one argument.
  SmallVector<int64_t> descriptors;
  int64_t lowered = 0;
  for (Type type : func.getArgumentTypes()) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      lowered += 3 + 2 * memref.getRank();
      continue;
    }
    assert(isa<LLVM::LLVMPointerType>(type) && "a kernel argument is a "
                                               "memref or a TMA descriptor");
    descriptors.push_back(lowered++);
  }
  if (descriptors.empty())
    return;
  Builder b(func.getContext());
  func->setAttr(kTmaDescriptorsAttrName, b.getDenseI64ArrayAttr(descriptors));
  func->setAttr(kLoweredArgCountAttrName, b.getI64IntegerAttr(lowered));
}

gpu::GPUModuleOp createKernelModule(ImplicitLocOpBuilder &b, ModuleOp module,
                                    StringRef chip, StringRef features) {
  b.setInsertionPointToEnd(module.getBody());
  auto target = NVVM::NVVMTargetAttr::get(
      b.getContext(), /*optLevel=*/3, "nvptx64-nvidia-cuda", chip, features);
  auto gpuModule =
      gpu::GPUModuleOp::create(b, "ssd_kernels", b.getArrayAttr({target}));
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  b.setInsertionPointToEnd(module.getBody());
  return gpuModule;
}

gpu::GPUFuncOp createTestKernel(ImplicitLocOpBuilder &b,
                                gpu::GPUModuleOp module, StringRef name,
                                TypeRange argTypes, int64_t threads,
                                bool setsMaxRegisters) {
  b.setInsertionPointToStart(module.getBody());
  auto func = gpu::GPUFuncOp::create(b, name, b.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  if (setsMaxRegisters)
    func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  b.setInsertionPointToStart(&func.getBody().front());
  gpu::ReturnOp::create(b);
  b.setInsertionPointToStart(&func.getBody().front());
  return func;
}

KernelFunc createKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                        const SSDProblem &p, const KernelInfo &info) {
  SmallVector<Type> types;
  for (const KernelParam &param : info.params) {
    if (!param.tmaBox.empty()) {
      types.push_back(LLVM::LLVMPointerType::get(b.getContext()));
      continue;
    }
    const BufferSpec *spec = p.find(param.name);
    assert(spec && "kernel parameter names a known buffer");
    types.push_back(spec->memrefType());
  }
  b.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(b, info.name,
                                     b.getFunctionType(types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(info.block), 1, 1}));
  recordTmaDescriptorPositions(func);
  KernelFunc kernel;
  kernel.func = func;
  for (auto [param, arg] : llvm::zip(info.params, func.getArguments()))
    kernel.args[param.tmaBox.empty() ? param.name : tmaArgName(param.name)] =
        arg;
  Block &entry = func.getBody().front();
  b.setInsertionPointToEnd(&entry);
  auto ret = gpu::ReturnOp::create(b);
  b.setInsertionPoint(ret);
  return kernel;
}

//===----------------------------------------------------------------------===//
// Chunking on the device
//===----------------------------------------------------------------------===//

ChunkRange chunkRange(Emitter &e, const SSDProblem &p, Value c, Value seqLen,
                      Value numChunks, Value cu) {
  Value q = e.idx(p.chunk), zero = e.idx(0), one = e.idx(1);
  if (!cu) {
    Value start = e.mul(c, q);
    Value len = e.max(e.min(q, e.sub(seqLen, start)), zero);
    return {start, len};
  }
  // Walk the sequences: sequence i owns chunks [base, base + ceil(len_i/Q)),
  // clamped to the chunk dimension; offsets are clamped into [0, L].
  Value numSeqs = e.sub(e.dim(cu, 0), one);
  auto cuAt = [&](Value i) {
    Value v = e.toIndex(e.load(cu, {i}));
    return e.min(e.max(v, zero), seqLen);
  };
  SmallVector<Value> r = e.forLoop(
      zero, numSeqs, one, ValueRange{zero, zero, zero},
      [&](Value i, ValueRange args) -> SmallVector<Value> {
        Value base = args[0];
        Value lo = cuAt(i);
        Value hi = e.max(cuAt(e.add(i, one)), lo);
        Value count = e.div(e.add(e.sub(hi, lo), e.idx(p.chunk - 1)), q);
        count = e.min(count, e.max(e.sub(numChunks, base), zero));
        Value k = e.sub(c, base);
        Value mine = e.andi(e.le(base, c), e.lt(k, count));
        Value start = e.add(lo, e.mul(k, q));
        Value len = e.min(q, e.sub(hi, start));
        return {e.add(base, count), e.select(mine, start, args[1]),
                e.select(mine, len, args[2])};
      });
  return {r[1], r[2]};
}

Value lastTokenOf(Emitter &e, const SSDProblem &p, Value c, Value seqLen) {
  Value end = e.min(e.mul(e.add(c, 1), p.chunk), seqLen);
  return e.max(e.sub(end, e.idx(1)), e.idx(0));
}

Value tokenBefore(Emitter &e, const SSDProblem &p, Value c) {
  Value start = e.mul(c, p.chunk);
  return e.select(e.eq(c, e.idx(0)), e.idx(0), e.sub(start, e.idx(1)));
}

} // namespace gpu_lowering
} // namespace ssd
