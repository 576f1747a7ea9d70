//===- FusedKernel.cpp - the ssd_fused kernel and its manifest ------------===//
//
// The persistent loop: thread 0 takes a ticket, the block learns it through
// shared memory, and the ticket range selects the item kind (init, cumsum,
// bmm, chain, final, in that order) until the tickets run out.
//
//===----------------------------------------------------------------------===//
#include "FusedKernel.h"
#include "../Cluster.h"
#include "../TmaCopy.h"
#include "ChainParts.h"
#include "Profile.h"
#include "Sync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

/// The item range of each item kind, in ticket order. In clusters the
/// blocks of a cluster take items in groups of KernelConfig::cluster (one
/// ticket each), and each range is padded to a multiple of that, so that a
/// group never straddles two kinds; the padding's items do nothing.
struct TicketRanges {
  Value initEnd, cumsumEnd, bmmEnd, chainEnd, total;
  /// Items of each kind (in clusters; the ranges' sizes elsewhere).
  SmallVector<Value, 5> counts;
};

TicketRanges ticketRanges(FusedBuild &f) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  Value perRow = e.idx(p.heads * f.plan.pBlocks);
  Value stateItems = e.mul(f.batch, perRow);
  Value chunks = e.mul(f.batch, f.numChunks);
  TicketRanges t;
  Value cumsums = f.config.ownCumsum ? e.idx(0) : e.mul(chunks, cumsumItems(f));
  t.counts = {stateItems, cumsums,
              e.mul(chunks, e.idx(p.groups * cbTileItems(p.chunk))),
              e.mul(e.mul(f.batch, f.chainSteps), perRow), stateItems};
  int64_t cluster = f.config.cluster;
  auto span = [&](int64_t kind) {
    Value n = t.counts[kind];
    if (cluster == 1)
      return n;
    return e.mul(e.div(e.add(n, e.idx(cluster - 1)), e.idx(cluster)),
                 e.idx(cluster));
  };
  t.initEnd = span(0);
  t.cumsumEnd = e.add(t.initEnd, span(1));
  t.bmmEnd = e.add(t.cumsumEnd, span(2));
  t.chainEnd = e.add(t.bmmEnd, span(3));
  t.total = e.add(t.chainEnd, span(4));
  return t;
}

/// Runs the item of index `t`.
void dispatch(FusedBuild &f, const TicketRanges &r, Value t) {
  Emitter &e = f.e;
  struct Kind {
    Value begin, end, count;
    void (*emit)(FusedBuild &, Value);
  } kinds[] = {{e.idx(0), r.initEnd, r.counts[0], emitInitItem},
               {r.initEnd, r.cumsumEnd, r.counts[1], emitCumsumItem},
               {r.cumsumEnd, r.bmmEnd, r.counts[2], emitBmmItem},
               {r.bmmEnd, r.chainEnd, r.counts[3],
                f.config.segmented() ? emitSegmentItem : emitChainItem},
               {r.chainEnd, r.total, r.counts[4], emitFinalItem}};
  // The kinds never run at once in a block (a ticket hand-off, with its
  // barriers, lies between two items), so they share the arena's bytes.
  for (auto [index, kind] : llvm::enumerate(kinds)) {
    // Without cumsum items their range is empty: no code for them.
    if (kind.emit == emitCumsumItem && f.config.ownCumsum)
      continue;
    int64_t mark = f.k.sharedMark();
    e.ifThen(e.andi(e.le(kind.begin, t), e.lt(t, kind.end)), [&] {
      Value local = e.sub(t, kind.begin);
      itemLogStart(f);
      if (!f.config.clustered())
        kind.emit(f, local);
      else
        e.ifThen(e.lt(local, kind.count), [&] { kind.emit(f, local); });
      itemLogFinish(f, t, static_cast<int64_t>(index));
    });
    f.k.sharedRelease(mark);
  }
}

/// The cluster's next ticket, known to every thread of its blocks: thread 0
/// of the first block takes it and stores it into slot `parity` of `slots`
/// (i64) in every block, then the cluster meets.
Value takeClusterTicket(FusedBuild &f, Value slots, Value parity) {
  Emitter &e = f.e;
  ImplicitLocOpBuilder &b = e.b;
  Value firstBlock = e.eq(f.clusterRank, e.idx(0));
  e.ifThen(e.andi(firstBlock, e.eq(e.threadId(), e.idx(0))), [&] {
    Value t = fetchTicket(e, counterPointer(e, f.arg("ticket"), e.idx(0)));
    Value v = arith::IndexCastOp::create(b, b.getI64Type(), t);
    Value slot = elementPointer(e, slots, {parity}, 3);
    for (int64_t rank = 0; rank < f.config.cluster; ++rank)
      LLVM::StoreOp::create(b, v, peerPointer(e, slot, e.idx(rank)));
  });
  // Only the warp that wrote the ticket releases: a release arrival costs
  // each warp a device-wide memory barrier (its pending stores).
  Value writer = e.andi(firstBlock, e.lt(e.threadId(), e.idx(32)));
  e.ifThen(writer, [&] { clusterBarrier(e); });
  e.ifThen(e.eq(writer, e.i1(false)),
           [&] { clusterBarrier(e, /*release=*/false); });
  return e.toIndex(memref::LoadOp::create(b, slots, ValueRange{parity}));
}

/// while ((t = ticket++) < total) dispatch(t); in clusters,
/// while ((t = ticket++) * cluster < total) dispatch(t * cluster + rank).
void persistentLoop(FusedBuild &f) {
  Emitter &e = f.e;
  ImplicitLocOpBuilder &b = e.b;
  TicketRanges ranges = ticketRanges(f);
  Value slot = f.k.sharedBuffer({1}, b.getI64Type());
  f.broadcastSlot = slot;
  itemLogInit(f);
  Value ticket = f.arg("ticket");
  bool pairs = f.config.clustered();
  // In clusters the ticket goes to every block through two slots used in
  // turns: a block overwrites slot s only after the cluster barrier of the
  // next ticket, which every thread reaches after reading slot s.
  Value ticketSlots;
  if (pairs)
    ticketSlots = f.k.sharedBuffer({2}, b.getI64Type());
  // With TMA operands the loop carries the parity of the mbarriers' next
  // phase: every chain item completes one phase of each. In clusters it
  // carries the ticket slot's index too.
  bool tma = static_cast<bool>(f.tmaBarriers);
  SmallVector<Value> carried;
  if (tma)
    carried.push_back(arith::ConstantIntOp::create(b, 0, 32));
  if (pairs)
    carried.push_back(e.idx(0));
  SmallVector<Type> carriedTypes(ValueRange(carried).getTypes());
  SmallVector<Location> carriedLocs(carried.size(), b.getLoc());
  SmallVector<Type> resultTypes = {b.getIndexType()};
  llvm::append_range(resultTypes, carriedTypes);
  auto loop = scf::WhileOp::create(b, resultTypes, carried);
  Block *before =
      b.createBlock(&loop.getBefore(), {}, carriedTypes, carriedLocs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    Value t, more;
    if (pairs) {
      t = takeClusterTicket(f, ticketSlots, before->getArguments().back());
      more = e.lt(e.mul(t, f.config.cluster), ranges.total);
    } else {
      t = broadcastFromThread0(e, slot, [&] {
        return fetchTicket(e, counterPointer(e, ticket, e.idx(0)));
      });
      more = e.lt(t, ranges.total);
    }
    SmallVector<Value> passed = {t};
    llvm::append_range(passed, before->getArguments());
    scf::ConditionOp::create(b, more, passed);
  }
  SmallVector<Location> resultLocs(resultTypes.size(), b.getLoc());
  Block *after =
      b.createBlock(&loop.getAfter(), {}, resultTypes, resultLocs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(after);
    Value t = after->getArgument(0);
    if (pairs)
      t = e.add(e.mul(t, f.config.cluster), f.clusterRank);
    SmallVector<Value> next;
    if (tma) {
      f.tmaParity = after->getArgument(1);
      Value chain = e.andi(e.le(ranges.bmmEnd, t), e.lt(t, ranges.chainEnd));
      next.push_back(arith::XOrIOp::create(
          b, f.tmaParity, arith::ExtUIOp::create(b, b.getI32Type(), chain)));
    }
    if (pairs)
      next.push_back(e.sub(e.idx(1), after->getArguments().back()));
    dispatch(f, ranges, t);
    scf::YieldOp::create(b, next);
  }
  b.setInsertionPointAfter(loop);
  // No block leaves while a peer may still write into its shared memory.
  if (pairs)
    clusterBarrier(e);
}

/// Chunks per segment, at run time: enough segment items for about four
/// per block of the grid (so that the last wave is short), at most
/// KernelConfig::maxSegmentChunks; the chain then has ceil(nc / S) steps.
void chooseSegments(FusedBuild &f) {
  Emitter &e = f.e;
  constexpr int64_t kItemsPerBlock = 4;
  Value grid = gpu::GridDimOp::create(e.b, gpu::Dimension::x);
  Value chunkItems = e.mul(e.mul(f.batch, f.numChunks),
                           f.p.heads * f.plan.pBlocks);
  Value s = e.div(chunkItems, e.mul(grid, kItemsPerBlock));
  s = e.max(e.min(s, e.idx(f.config.maxSegmentChunks)), e.idx(1));
  f.segmentChunks = s;
  f.chainSteps = e.div(e.add(f.numChunks, e.sub(s, e.idx(1))), s);
}

/// Batch rows whose chains interleave. A chain step waits about 3 us for
/// the previous one (measured: 8 heads at b1 128K take 2.99 ms for 1024
/// steps), so where one step of a row holds few items the blocks of the
/// grid wait on each other's steps, and rows taken in turns overlap those
/// waits: 3.6x at b8 16K with 8 heads. Interleaving also puts a row's
/// steps further apart in ticket order, so the slot one step writes for
/// the next is more often read back from HBM than from L2: with 80 heads
/// (a step fills 80 of the 264 blocks) 4 rows in turns were 3.2% slower at
/// b8 16K than one row at a time (three rounds, one process). So rows
/// interleave only where a step holds at most half the grid: as many rows
/// as half the grid holds steps of, at least 1 and at most b.
void chooseChainRows(FusedBuild &f) {
  Emitter &e = f.e;
  Value grid = gpu::GridDimOp::create(e.b, gpu::Dimension::x);
  int64_t perStep = f.p.heads * f.plan.pBlocks;
  Value rows = e.div(grid, e.idx(2 * perStep));
  f.chainRows = e.max(e.min(rows, f.batch), e.idx(1));
}

/// Whether the cumsum items of a chunk are split into slices of heads: only
/// where the grid's first wave holds every init, cumsum and bmm item split
/// so. There the chain items of the first wave wait for 16 heads' cumsum
/// each at once instead of one block's pass over all heads (at b1 2K,
/// 80 + 16 x (5 + 3) items of the 264 blocks); where the first wave is
/// full, more items would only add hand-offs (fixed splits measured
/// 2.7-3.9% slower at the Mamba-2 2.7B layer's long shapes,
/// bench/NOTES-fused-gpu.md).
void chooseFirstWaveSplit(FusedBuild &f) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t cumsumSplit = cumsumSliceItems(p.heads);
  int64_t bmmSplit = cbTileItems(p.chunk);
  Value grid = gpu::GridDimOp::create(e.b, gpu::Dimension::x);
  Value stateItems = e.mul(f.batch, e.idx(p.heads * f.plan.pBlocks));
  Value splitItems = e.mul(e.mul(f.batch, f.numChunks),
                           e.idx(cumsumSplit + p.groups * bmmSplit));
  f.firstWaveSplit = e.le(e.add(stateItems, splitItems), grid);
}

} // namespace

KernelInfo buildFusedKernel(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                            const FusedPlan &plan, StringRef name,
                            StringRef when) {
  const SSDProblem &p = plan.p;
  KernelConfig config = chooseKernelConfig(plan);
  assert(!config.adaptive() && "state-chain=auto builds one kernel per chain "
                               "(buildFusedKernels)");
  KernelInfo info;
  info.name = name.str();
  info.when = when.str();
  info.grid = {"num_sms * " + std::to_string(config.blocksPerSM)};
  info.block = config.blockThreads;
  info.cluster = config.cluster;
  addParams(info, p,
            {"x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states",
             "seq_idx", "cu_seqlens", "y", "final_states"},
            /*workspace=*/false);
  addParams(info, p,
            {"dt_out", "dA_cumsum", "CB", "passed_states", "ticket",
             "cumsum_ready", "cb_ready", "state_turn"},
            /*workspace=*/true);
  if (config.lookBack())
    addParams(info, p, {"chunk_states", "chain_status"}, /*workspace=*/true);
  if (config.profile)
    addParams(info, p, {"chain_profile", "item_log"}, /*workspace=*/true);

  KernelFunc k = createKernel(b, module, p, info);
  k.useSharedArena();
  // ptxas keeps the registers within what blocksPerSM blocks per SM allow.
  k.func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(config.blocksPerSM));
  Emitter e(b);
  Value x = k.arg("x");
  FusedBuild f{plan,
               p,
               k,
               e,
               config,
               e.dim(x, 0),
               e.dim(x, 1),
               e.dim(k.arg("CB"), 1),
               p.isVarlen() ? e.sub(e.dim(k.arg("cu_seqlens"), 0), e.idx(1))
                            : e.idx(1)};
  if (config.segmented())
    chooseSegments(f);
  else
    f.chainSteps = f.numChunks;
  chooseChainRows(f);
  if (!config.ownCumsum)
    chooseFirstWaveSplit(f);
  if (config.clustered()) {
    k.func.setKnownClusterSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(config.cluster), 1, 1}));
    f.clusterRank = clusterRank(e);
  }
  if (config.tmaOperands()) {
    addTmaParams(f, info);
    initTmaBarriers(f);
  }
  k.func->setAttr("ssd.state_chain",
                  b.getStringAttr(stateChainName(config.chain)));
  k.func->setAttr("ssd.mma", b.getStringAttr(config.mmaName()));
  persistentLoop(f);
  info.sharedMemory = k.sharedBytes();
  k.func->setAttr("ssd.kernel_config",
                  config.toAttr(b.getContext(), info.sharedMemory));
  return info;
}

SmallVector<KernelInfo> buildFusedKernels(ImplicitLocOpBuilder &b,
                                          gpu::GPUModuleOp module,
                                          const FusedPlan &plan) {
  if (!chooseKernelConfig(plan).adaptive())
    return {buildFusedKernel(b, module, plan, "ssd_fused")};
  // Two kernels rather than one holding both chain steps: that one spilled
  // (17 stores against 6) and was 1.6-7.7% slower where it took the turns.
  FusedPlan turns = plan, lookBack = plan;
  turns.chain = StateChain::Chunk;
  lookBack.chain = StateChain::LookBack;
  // The turn kernel runs only where the manifest's slots are the ring
  // (look_back = 0): its memref says so statically, as the plain turn-chain
  // kernel's does. A dynamic slot count cost it registers (24 -> 32 bytes
  // of stack) and 4-9% at 24 heads on the H200.
  BufferSpec &slots = *turns.p.find("passed_states");
  SmallVector<int64_t> ring(slots.type.getShape());
  ring[1] = kStateRingSlots;
  slots.type = RankedTensorType::get(ring, slots.type.getElementType());
  return {buildFusedKernel(b, module, turns, "ssd_fused", "1 - look_back"),
          buildFusedKernel(b, module, lookBack, "ssd_fused_lookback",
                           "look_back")};
}

namespace {

/// `dict` with `key` set to `value`.
DictionaryAttr withEntry(DictionaryAttr dict, StringRef key, Attribute value) {
  NamedAttrList list(dict);
  list.set(key, value);
  return list.getDictionary(dict.getContext());
}

} // namespace

DictionaryAttr buildFusedLaunchAttr(MLIRContext *ctx, const FusedPlan &plan,
                                    ArrayRef<KernelInfo> kernels) {
  Builder b(ctx);
  DictionaryAttr launch = buildLaunchAttr(ctx, plan.p, kernels);
  SmallVector<Attribute> workspaces;
  for (Attribute a : launch.getAs<ArrayAttr>("workspaces")) {
    auto ws = cast<DictionaryAttr>(a);
    StringRef name = ws.getAs<StringAttr>("name").getValue();
    if (llvm::is_contained(plan.zeroInit, name))
      ws = withEntry(ws, "zero_init", b.getBoolAttr(true));
    workspaces.push_back(ws);
  }
  launch = withEntry(launch, "workspaces", b.getArrayAttr(workspaces));
  auto constants = launch.getAs<DictionaryAttr>("constants");
  return withEntry(
      launch, "constants",
      withEntry(constants, "p_block", b.getI64IntegerAttr(plan.pBlock)));
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
