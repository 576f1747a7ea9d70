//===- ChainParts.cpp - the steps the state-chain items are built from ----===//
//
// On tensor cores the products take TileMatmul's vector path (16-byte
// fills one K slice ahead into two shared stages, 16-byte stores through
// shared memory), as the unfused chunk_state and chunk_scan do; the chunk
// state is then one pBlock x dstate tile, whole in registers before it is
// folded, so that a fold under a turn wait runs only the fold.
//
//===----------------------------------------------------------------------===//
#include "ChainParts.h"
#include "../AsyncCopy.h"
#include "../Cluster.h"
#include "../ScanTile.h"
#include "../TmaCopy.h"
#include "Profile.h"
#include "Sync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

Value decodeChainIndex(FusedBuild &f, Value index, ChainItem &it) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  it.pb = e.rem(index, e.idx(f.plan.pBlocks));
  Value rest = e.div(index, e.idx(f.plan.pBlocks));
  it.head = e.rem(rest, e.idx(p.heads));
  rest = e.div(rest, e.idx(p.heads));
  // Groups of chainRows rows (the last one may hold fewer), each step-major
  // (FusedKernel.cpp: chooseChainRows).
  Value groupItems = e.mul(f.chainSteps, f.chainRows);
  Value group = e.div(rest, groupItems);
  Value first = e.mul(group, f.chainRows);
  Value rows = e.min(f.chainRows, e.sub(f.batch, first));
  Value local = e.sub(rest, e.mul(group, groupItems));
  it.row = e.add(first, e.rem(local, rows));
  Value step = e.div(local, rows);
  it.group = e.div(it.head, e.idx(p.heads / p.groups));
  it.p0 = e.mul(it.pb, f.plan.pBlock);
  return step;
}

TileMatmul stateProduct(FusedBuild &f) {
  const KernelConfig &c = f.config;
  return TileMatmul(f.e, f.k, c.pBlock, f.p.state, c.stateDepth, c.mmaType,
                    c.stateMma);
}

TileMatmul scanProduct(FusedBuild &f) {
  const KernelConfig &c = f.config;
  return TileMatmul(f.e, f.k, c.scanRows, roundUp(c.pBlock, 16), c.scanDepth,
                    c.mmaType, c.scanMma);
}

Value allocateResidentState(FusedBuild &f) {
  return f.k.sharedBuffer(
      scanProduct(f).residentShape(f.config.pBlock, f.p.state),
      f.config.mmaType);
}

SmallVector<Value> residentStateAt(FusedBuild &f, Value rr, Value nn) {
  return scanProduct(f).residentAt(rr, nn);
}

namespace {
/// Rows of the chunk's tokens from `src` at (row, token, head, column 0).
AsyncRows chunkRows(FusedBuild &f, const ChainItem &it, Value dst,
                    int64_t width, Value src, Value head, Value col0) {
  Emitter &e = f.e;
  const ChunkRange &r = it.place.range;
  AsyncRows rows;
  rows.dst = dst;
  rows.rows = f.p.chunk;
  rows.width = width;
  rows.src = src;
  rows.valid = r.len;
  rows.srcAt = [&e, &r, &it, head, col0](Value l) -> SmallVector<Value> {
    return {it.row, tokenAt(e, r, l), head, col0};
  };
  return rows;
}
} // namespace

void addTmaParams(FusedBuild &f, KernelInfo &info) {
  auto ptr = LLVM::LLVMPointerType::get(f.e.b.getContext());
  for (StringRef name : {"x", "B", "C"}) {
    // (b, L, heads or groups, columns): one chunk of rows of one panel.
    info.params.push_back({name.str(), /*isWorkspace=*/false,
                           {1, f.p.chunk, 1, kSwizzlePanel}});
    unsigned index = f.k.func.getNumArguments();
    (void)f.k.func.insertArgument(index, ptr, DictionaryAttr(),
                                  f.k.func.getLoc());
    f.k.args[tmaArgName(name)] = f.k.func.getArgument(index);
  }
  recordTmaDescriptorPositions(f.k.func);
}

void initTmaBarriers(FusedBuild &f) {
  Emitter &e = f.e;
  bool pairs = f.config.clustered();
  int64_t count = pairs ? kRowsFreeBarrier + 1 : 2;
  f.tmaBarriers = f.k.sharedBuffer({count}, e.b.getI64Type());
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    for (int64_t i = 0; i < count; ++i)
      initTmaBarrier(e, elementPointer(e, f.tmaBarriers, {e.idx(i)}, 3),
                     i == kRowsFreeBarrier ? f.config.cluster : 1);
    if (pairs)
      fenceBarrierInit(e);
  });
  // The peer's multicasts complete on this block's barriers.
  if (pairs)
    clusterBarrier(e);
  else
    e.barrier();
}

namespace {
/// Thread 0 copies rows [start, start + Q) of `tensor` at (row, *, slice,
/// panel columns from col0) into `dst`, [panels][Q][64], on mbarrier `bar`.
/// Rows the cluster's pair of items shares (`pairShares`, B and C) are
/// split: the block of rank r copies panels r, r + 2, ... into both blocks.
void copyPanelsTma(FusedBuild &f, const ChainItem &it, StringRef tensor,
                   Value dst, Value slice, Value col0, Value bar,
                   bool pairShares = false) {
  Emitter &e = f.e;
  int64_t panels = cast<MemRefType>(dst.getType()).getDimSize(0);
  bool multicast = pairShares && f.config.clustered();
  for (int64_t panel = 0; panel < panels; ++panel) {
    auto copy = [&] {
      Value mask;
      if (multicast)
        mask = arith::ConstantIntOp::create(
            e.b, (int64_t{1} << f.config.cluster) - 1, 16);
      copyTmaBox(e, f.arg(tmaArgName(tensor)),
                 elementPointer(e, dst, {e.idx(panel), e.idx(0), e.idx(0)}, 3),
                 bar,
                 {e.add(col0, e.idx(panel * kSwizzlePanel)), slice,
                  it.place.range.start, it.row},
                 mask);
    };
    if (multicast)
      e.ifThen(e.eq(f.clusterRank, e.idx(panel % f.config.cluster)), copy);
    else
      copy();
  }
}

int64_t panelBytes(FusedBuild &f) {
  return f.p.chunk * kSwizzlePanel *
         mmaElementType(f.p).getIntOrFloatBitWidth() / 8;
}

Value tmaBarrier(FusedBuild &f, int64_t i) {
  return elementPointer(f.e, f.tmaBarriers, {f.e.idx(i)}, 3);
}

/// Thread 0, in clusters: this block has read its B rows (a barrier
/// precedes); tells every block of the cluster so, and waits until every
/// block has, before C's panels overwrite B's in all of them.
void awaitPairRowsFree(FusedBuild &f) {
  Emitter &e = f.e;
  Value bar = tmaBarrier(f, kRowsFreeBarrier);
  for (int64_t rank = 0; rank < f.config.cluster; ++rank)
    arriveOnClusterBarrier(e, peerPointer(e, bar, e.idx(rank)));
  waitTmaBarrier(e, bar, f.tmaParity);
}

/// TMA: x's and B's panels on barrier 0 (one arrival, their bytes).
void copyChunkXBTma(FusedBuild &f, ChainItem &it) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  Type mma = mmaElementType(p);
  int64_t xPanels = f.plan.pBlock / kSwizzlePanel;
  int64_t bPanels = p.state / kSwizzlePanel;
  int64_t xBytes = xPanels * panelBytes(f);
  Value rows = f.k.sharedBufferAligned(xBytes + bPanels * panelBytes(f),
                                       kSwizzleAlign);
  auto view = [&](int64_t offset, int64_t panels) {
    auto type = MemRefType::get(
        {panels, p.chunk, kSwizzlePanel}, mma, MemRefLayoutAttrInterface(),
        cast<MemRefType>(rows.getType()).getMemorySpace());
    return memref::ViewOp::create(e.b, type, rows, e.idx(offset),
                                  ValueRange{})
        .getResult();
  };
  it.sX = view(0, xPanels);
  it.sBC = view(xBytes, bPanels);
  it.swizzled = true;
  // The previous item's reads of these rows (in clusters, the peer's too)
  // are behind the ticket's barrier.
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    fenceSharedForAsyncProxy(e);
    Value bar = tmaBarrier(f, 0);
    expectTmaBytes(e, bar, (xPanels + bPanels) * panelBytes(f));
    copyPanelsTma(f, it, "x", it.sX, it.head, it.p0, bar);
    copyPanelsTma(f, it, "B", it.sBC, it.group, e.idx(0), bar,
                  /*pairShares=*/true);
  });
}
} // namespace

void copyChunkXB(FusedBuild &f, ChainItem &it) {
  if (f.config.tmaOperands())
    return copyChunkXBTma(f, it);
  const SSDProblem &p = f.p;
  Type mma = mmaElementType(p);
  it.sX = f.k.sharedBuffer({1, p.chunk, f.plan.pBlock + kResidentPad}, mma);
  it.sBC = f.k.sharedBuffer({1, p.chunk, p.state + kResidentPad}, mma);
  copyRowsAsync(f.e,
                chunkRows(f, it, it.sX, f.plan.pBlock, f.arg("x"), it.head,
                          it.p0),
                kThreads);
  copyRowsAsync(f.e,
                chunkRows(f, it, it.sBC, p.state, f.arg("B"), it.group,
                          f.e.idx(0)),
                kThreads);
}

void copyChunkC(FusedBuild &f, ChainItem &it) {
  Emitter &e = f.e;
  e.barrier();
  if (it.swizzled) {
    e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
      if (f.config.clustered())
        awaitPairRowsFree(f);
      fenceSharedForAsyncProxy(e); // the product's reads of B, then C's writes
      Value bar = tmaBarrier(f, 1);
      expectTmaBytes(e, bar, f.p.state / kSwizzlePanel * panelBytes(f));
      copyPanelsTma(f, it, "C", it.sBC, it.group, e.idx(0), bar,
                    /*pairShares=*/true);
    });
    return;
  }
  copyRowsAsync(f.e,
                chunkRows(f, it, it.sBC, f.p.state, f.arg("C"), it.group,
                          f.e.idx(0)),
                kThreads);
}

void waitChunkRows(FusedBuild &f, const ChainItem &it, bool xb,
                   bool barrierFollows) {
  Emitter &e = f.e;
  if (it.swizzled) {
    // The mbarrier's phase completes when the bytes have landed; each
    // waiting thread then sees them, no block barrier needed.
    waitTmaBarrier(e, tmaBarrier(f, xb ? 0 : 1), f.tmaParity);
    return;
  }
  // This thread's cp.async copies; a barrier makes all threads' visible.
  waitAsyncCopies(e);
  if (!barrierFollows)
    e.barrier();
}

/// The `cb_ready` counter of chunk `c` of `row`, group `group`.
static Value cbCounter(FusedBuild &f, Value row, Value c, Value group) {
  Emitter &e = f.e;
  Value chunkIndex = e.add(e.mul(row, f.numChunks), c);
  return counterPointer(e, f.arg("cb_ready"),
                        e.add(e.mul(chunkIndex, f.p.groups), group));
}

void waitForChunks(FusedBuild &f, Value row, Value cBegin, Value cEnd,
                   bool cumsum, Value cbGroup) {
  Emitter &e = f.e;
  auto chunkIndex = [&](Value c) { return e.add(e.mul(row, f.numChunks), c); };
  // The cumsums' counters in thread 0, the CBs' in thread 32: two warps, so
  // that the two round trips to L2 overlap instead of following each other.
  auto spinIn = [&](int64_t thread, int64_t target,
                    function_ref<Value(Value c)> counter) {
    e.ifThen(e.eq(e.threadId(), e.idx(thread)), [&] {
      e.forLoop(cBegin, cEnd, e.idx(1), [&](Value c) {
        spinUntilAtLeast(e, counter(c), e.idx(target));
      });
    });
  };
  // A chunk's cumsum is complete once its items have published every head.
  if (cumsum)
    spinIn(0, f.p.heads, [&](Value c) {
      return counterPointer(e, f.arg("cumsum_ready"), chunkIndex(c));
    });
  // A chunk's CB is complete once each of its tile items has published.
  if (cbGroup)
    spinIn(32, cbTileItems(f.p.chunk),
           [&](Value c) { return cbCounter(f, row, c, cbGroup); });
  // Each acquire, then the barrier: as blockAcquire (Sync.h).
  e.barrier();
}

Value peekChunkCB(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  Value flag = f.k.sharedBuffer({1}, e.b.getI32Type());
  e.ifThen(e.eq(e.threadId(), e.idx(32)), [&] {
    Value seen = e.le(e.idx(cbTileItems(f.p.chunk)),
                      loadAcquire(e, cbCounter(f, it.row, it.c, it.group)));
    e.store(arith::ExtUIOp::create(e.b, e.b.getI32Type(), seen), flag,
            {e.idx(0)});
  });
  return flag;
}

void readChunkCBFlag(FusedBuild &f, ChainItem &it, Value flag) {
  Emitter &e = f.e;
  Type i32 = e.b.getI32Type();
  Value zero = arith::ConstantOp::create(e.b, e.b.getIntegerAttr(i32, 0));
  it.cbSeen = e.ne(e.load(flag, {e.idx(0)}), zero);
}

void awaitChunkCB(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  // Uniform over the block: the barrier sits inside the branch.
  e.ifThen(e.eq(it.cbSeen, e.i1(false)), [&] {
    e.ifThen(e.eq(e.threadId(), e.idx(32)), [&] {
      spinUntilAtLeast(e, cbCounter(f, it.row, it.c, it.group),
                       e.idx(cbTileItems(f.p.chunk)));
    });
    e.barrier();
  });
}

namespace {

/// Token l of chunk it.c, this thread's (a position past the chunk's tokens
/// takes a zero dt and reads token 0's address, as tokenAt places it): its
/// dt, its dA_cumsum and the chunk's last dA_cumsum, as the
/// cumsum item computes them (KernelConfig::ownCumsum). Each warp scans its
/// 32 tokens; the warps' totals, added in warp order, carry the scans on as
/// the cumsum item carries its 32-token segments, so the sums are the same
/// bitwise. One barrier.
struct TokenCumsum {
  Value dt, dA, last;
};
TokenCumsum chunkCumsumOfToken(FusedBuild &f, const ChainItem &it, Value l) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  const ChunkRange &r = it.place.range;
  int64_t warps = (p.chunk + 31) / 32;
  Value totals = f.k.sharedBuffer({warps}, e.b.getF32Type());
  Value bias =
      f.has("dt_bias") ? e.loadF32(f.arg("dt_bias"), {it.head}) : Value();
  Value a = e.loadF32(f.arg("A"), {it.head});
  Value raw = e.loadF32(f.arg("dt"), {it.row, tokenAt(e, r, l), it.head});
  Value dt = e.select(e.lt(l, r.len), processDt(e, p, raw, bias), e.f32(0.0));
  Value scan = e.warpInclusiveScan(e.mulf(a, dt));
  Value warp = e.div(e.threadId(), e.idx(32));
  e.ifThen(e.andi(e.eq(e.laneId(), e.idx(31)), e.lt(warp, e.idx(warps))),
           [&] { e.store(scan, totals, {warp}); });
  e.barrier();
  Value running = e.f32(0.0), carry = e.f32(0.0);
  for (int64_t w = 0; w < warps; ++w) {
    carry = e.select(e.eq(warp, e.idx(w)), running, carry);
    running = e.addf(running, e.load(totals, {e.idx(w)}));
  }
  return {dt, e.addf(carry, scan), running};
}

} // namespace

void stageChunk(FusedBuild &f, ChainItem &it) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  Type f32 = e.b.getF32Type();
  if (!it.sDA) {
    it.sDA = f.k.sharedBuffer({p.chunk}, f32);
    it.sDt = f.k.sharedBuffer({p.chunk}, f32);
    it.sW = f.k.sharedBuffer({p.chunk}, f32);
  }
  Value lastId;
  if (f.has("seq_idx"))
    lastId =
        e.load(f.arg("seq_idx"), {it.row, lastTokenOf(e, p, it.c, f.seqLen)});
  const ChunkRange &r = it.place.range;
  // w_l = exp(dA[Q-1] - dA[l]) dt_l, zero past the chunk and (with
  // seq_idx) for tokens of a sequence other than the chunk's last one.
  auto stageToken = [&](Value l, Value dAl, Value dtl, Value last) {
    e.store(dAl, it.sDA, {l});
    e.store(dtl, it.sDt, {l});
    Value w = e.mulf(e.decay(e.subf(last, dAl)), dtl);
    Value keep = e.lt(l, r.len);
    if (lastId)
      keep = e.andi(
          keep,
          e.eq(e.load(f.arg("seq_idx"), {it.row, tokenAt(e, r, l)}), lastId));
    e.store(e.select(keep, w, e.f32(0.0)), it.sW, {l});
  };
  if (f.config.ownCumsum) {
    Value l = e.threadId();
    // Below 32 tokens the chunk shares its warp with threads past it, which
    // must add zero to the warp's scan and total: they keep their own
    // position (past the chunk). From 32 on they fill warps of their own,
    // whose totals are never added, and take the chunk's last position (the
    // form measured on the H200; either gives the same sums).
    Value token = p.chunk < 32 ? l : e.min(l, e.idx(p.chunk - 1));
    TokenCumsum t = chunkCumsumOfToken(f, it, token);
    e.ifThen(e.lt(l, e.idx(p.chunk)),
             [&] { stageToken(l, t.dA, t.dt, t.last); });
    e.barrier();
    return;
  }
  // From the cumsum items' dt_out and dA_cumsum. One pass, one barrier:
  // every thread loads dA[Q-1] itself (one broadcast load per warp) and
  // weighs the tokens it stages from its registers.
  Value dA = f.arg("dA_cumsum"), dt = f.arg("dt_out");
  Value last = e.loadF32(dA, {it.row, it.head, it.c, e.idx(p.chunk - 1)});
  e.forLoop(e.threadId(), e.idx(p.chunk), e.idx(kThreads), [&](Value l) {
    stageToken(l, e.loadF32(dA, {it.row, it.head, it.c, l}),
               e.loadF32(dt, {it.row, it.head, it.c, l}), last);
  });
  e.barrier();
}

Value carryAcross(FusedBuild &f, Value row, Value c, Value lastDA) {
  Emitter &e = f.e;
  Value carry = e.decay(lastDA);
  if (!f.has("seq_idx"))
    return carry;
  Value si = f.arg("seq_idx");
  Value reset = e.ne(e.load(si, {row, lastTokenOf(e, f.p, c, f.seqLen)}),
                     e.load(si, {row, tokenBefore(e, f.p, c)}));
  return e.select(reset, e.f32(0.0), carry);
}

Value stateCarry(FusedBuild &f, const ChainItem &it) {
  return carryAcross(f, it.row, it.c,
                     f.e.load(it.sDA, {f.e.idx(f.p.chunk - 1)}));
}

TileMatmul stagedChunkState(FusedBuild &f, const ChainItem &it,
                            Value shared) {
  Emitter &e = f.e;
  TileMatmul mm = stateProduct(f);
  mm.shareVectorBuffer(shared);
  const ChunkRange &r = it.place.range;
  Value x = f.arg("x"), bMat = f.arg("B");

  // A(l, pp) = x[l, p0 + pp] w_l,  B(l, nn) = B[l, nn]; token-major both.
  TileOperand xw{[&](Value l, Value rr) {
                   Value v = e.loadF32(x, {it.row, tokenAt(e, r, l), it.head,
                                           e.add(it.p0, rr)});
                   return e.mulf(v, e.load(it.sW, {l}));
                 },
                 /*kContiguous=*/false};
  xw.loadVector = [&](Value l, Value rr) {
    // With raw operands the chunk's x rows are already in shared memory.
    if (it.sX)
      return e.loadVector(it.sX,
                          it.swizzled ? swizzled128At(e, l, rr)
                                      : SmallVector<Value>{e.idx(0), l, rr},
                          kVectorWidth);
    return e.loadVector(
        x, {it.row, tokenAt(e, r, l), it.head, e.add(it.p0, rr)}, kVectorWidth);
  };
  xw.convertVector = [&](Value raw, Value l, Value) {
    return e.mulf(e.toF32Vector(raw),
                  e.splat(e.load(it.sW, {l}), kVectorWidth));
  };
  TileOperand bl{
      [&](Value l, Value nn) {
        return e.loadF32(bMat, {it.row, tokenAt(e, r, l), it.group, nn});
      },
      /*kContiguous=*/false};
  bl.loadVector = [&](Value l, Value nn) {
    return e.loadVector(bMat, {it.row, tokenAt(e, r, l), it.group, nn},
                        kVectorWidth);
  };
  if (it.sBC) {
    // B's rows copied whole (zero past the chunk): wait, then read them in
    // place.
    bl.resident = it.sBC;
    bl.residentSwizzled = it.swizzled;
    waitChunkRows(f, it, /*xb=*/true);
  }
  SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), r.len, xw, bl);
  mm.stageOutput(acc);
  return mm;
}

FoldPlaces threadFoldPlaces(FusedBuild &f, TileMatmul &mm) {
  if (!f.config.foldPieces) {
    SmallVector<std::pair<Value, Value>> owned = mm.threadOutputVectors();
    int64_t count = static_cast<int64_t>(owned.size());
    return {kVectorWidth, count,
            [owned = std::move(owned)](int64_t j) { return owned[j]; }};
  }
  return slotOrderPlaces(f.e, foldPieceWidth(f.p.stateType), mm.outputRows(),
                         mm.outputCols());
}

FoldPlaces slotOrderPlaces(Emitter &e, int64_t width, int64_t rows,
                           int64_t cols) {
  int64_t count = rows * cols / width / kThreads;
  return {
      width, count, [&e, width, cols](int64_t j) {
        Value first = e.mul(e.add(e.threadId(), e.idx(j * kThreads)), width);
        return std::pair{e.div(first, e.idx(cols)), e.rem(first, e.idx(cols))};
      }};
}

namespace {

/// The vector path: one pBlock x dstate tile, x rows and B rows as whole
/// 16-byte vectors. The tile goes to shared memory before `before` (a chain
/// item's turn wait), so that only the fold follows the wait: 1.5-3% at b1
/// L=16K-128K.
void chunkStateProductVector(FusedBuild &f, const ChainItem &it, Value shared,
                             function_ref<void()> before,
                             function_ref<void(Value, Value, Value)> fold) {
  TileMatmul mm = stagedChunkState(f, it, shared);
  before();
  mm.readOutput(fold);
}

/// The scalar-fill path: dstate in tiles of up to 64 columns.
void chunkStateProductScalar(FusedBuild &f, const ChainItem &it,
                             function_ref<void()> before,
                             function_ref<void(Value, Value, Value)> fold) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  int64_t tileP = roundUp(pBlock, 16), tileN = tileEdge(p.state);
  int64_t tilesN = (p.state + tileN - 1) / tileN;
  TileMatmul mm(e, f.k, tileP, tileN, f.config.stateScalarDepth,
                mmaElementType(p));
  const ChunkRange &r = it.place.range;
  Value x = f.arg("x"), bMat = f.arg("B");

  // A(l, pp) = x[l, p0 + pp] w_l,  B(l, nn) = B[l, n0 + nn].
  TileOperand xw{
      [&](Value l, Value rr) {
        Value in = e.lt(rr, e.idx(pBlock));
        Value col = e.add(it.p0, e.min(rr, e.idx(pBlock - 1)));
        Value v = e.loadF32(x, {it.row, tokenAt(e, r, l), it.head, col});
        return e.select(in, e.mulf(v, e.load(it.sW, {l})), e.f32(0.0));
      },
      /*kContiguous=*/false};
  for (int64_t nt = 0; nt < tilesN; ++nt) {
    int64_t n0 = nt * tileN;
    TileOperand bl{[&](Value l, Value cc) {
                     Value nn = e.add(e.idx(n0), cc);
                     Value in = e.lt(nn, e.idx(p.state));
                     Value v =
                         e.loadF32(bMat, {it.row, tokenAt(e, r, l), it.group,
                                          e.min(nn, e.idx(p.state - 1))});
                     return e.select(in, v, e.f32(0.0));
                   },
                   /*kContiguous=*/false};
    SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), r.len, xw, bl);
    if (nt == 0)
      before();
    mm.epilogue(acc, [&](Value rr, Value cc, Value v) {
      Value nn = e.add(e.idx(n0), cc);
      e.ifThen(e.andi(e.lt(rr, e.idx(pBlock)), e.lt(nn, e.idx(p.state))),
               [&] { fold(rr, nn, v); });
    });
  }
}

} // namespace

void chunkStateProduct(FusedBuild &f, const ChainItem &it, Value shared,
                       function_ref<void()> before,
                       function_ref<void(Value, Value, Value)> fold) {
  if (f.config.stateVectors)
    chunkStateProductVector(f, it, shared, before, fold);
  else
    chunkStateProductScalar(f, it, before, fold);
}

void chunkScan(FusedBuild &f, const ChainItem &it, Value shared) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  bool raw = f.config.rawOperands();
  assert(raw == static_cast<bool>(it.sBC) && "raw operands are copied first");
  int64_t rows = f.config.scanRows, cols = roundUp(pBlock, 16);
  TileMatmul mm = scanProduct(f);
  bool vectors = f.config.scanVectors && cols == pBlock;
  if (vectors)
    mm.shareVectorBuffer(shared);
  // With TMA rows and the whole chunk in one tile, whose output runs from
  // the fragments, each thread computes the scales of its own rows: no
  // shared row scales and no block barrier before the products, so that
  // warp 0's release (thread 0's device fence) overlaps the other warps'
  // products instead of holding them at a barrier.
  bool scalesInRegisters = raw && it.swizzled &&
                           f.config.scanFromFragments && !mm.usesWgmma();
  Value sScale;
  if (!scalesInRegisters)
    sScale = f.k.sharedBuffer({rows}, e.b.getF32Type());
  const ChunkRange &r = it.place.range;
  ScanTile tile;
  tile.batch = it.row;
  tile.head = it.head;
  tile.group = it.group;
  tile.c = it.c;
  tile.p0 = it.p0;
  tile.cols = pBlock;
  tile.r = r;
  tile.sDA = it.sDA;
  tile.sDt = it.sDt;
  tile.sScale = sScale;
  loadHeadD(e, p, f.k, tile);
  // D x from the chunk's x rows where the products already read them there.
  if (raw) {
    tile.xRows = it.sX;
    tile.xRowsSwizzled = it.swizzled;
  }
  if (it.sRun) {
    tile.states = it.sRun;
    tile.stateAt = [&](Value pp, Value n) -> SmallVector<Value> {
      return {e.sub(pp, it.p0), n};
    };
  } else {
    tile.states = f.arg("passed_states");
    tile.stateAt = [&](Value pp, Value n) -> SmallVector<Value> {
      return {it.row, stateSlotIndex(f, it.place.slot), it.head, pp, n};
    };
  }
  Value startId;
  if (f.has("seq_idx"))
    startId = e.load(f.arg("seq_idx"), {it.row, tokenBefore(e, p, it.c)});
  assert((!raw || (vectors && it.sState)) && "raw operands need both vector paths");
  // C's rows: TMA's mbarrier makes them visible to each waiting thread,
  // the barrier after the row scales below cp.async's copies.
  if (raw)
    waitChunkRows(f, it, /*xb=*/false, /*barrierFollows=*/true);

  // The causal weights factor across 16-row blocks where the chunk only
  // decays (mma.sync's register fragments; tile.blockFactored).
  bool blockFactors = raw && !mm.usesWgmma();
  if (blockFactors)
    tile.blockFactored = decaysNonIncreasing(e, p, f.k, tile);

  // exp(dA_i) of row i = i0 + rr (with block factors exp(dA) of its
  // block's first row: the product applies the rest), zero past the chunk
  // and (seq_idx) for tokens of a sequence other than the one running at
  // the chunk start.
  auto rowScale = [&](Value i0, Value rr) {
    Value i = e.add(i0, rr);
    Value keep = e.lt(i, r.len);
    if (startId)
      keep = e.andi(keep,
                    e.eq(e.load(f.arg("seq_idx"), {it.row, tokenAt(e, r, i)}),
                         startId));
    Value decay = e.decay(e.load(it.sDA, {stateDecayRow(e, p, tile, rr)}));
    return e.select(keep, decay, e.f32(0.0));
  };

  e.forLoop(e.idx(0), r.len, e.idx(rows), [&](Value i0) {
    tile.i0 = i0;
    if (!scalesInRegisters) {
      e.forLoop(e.threadId(), e.idx(rows), e.idx(kThreads), [&](Value rr) {
        e.store(rowScale(i0, rr), sScale, {rr});
      });
      // wgmma reads the resident state, which the fold wrote with plain
      // stores, through the async proxy.
      if (mm.usesWgmma())
        fenceSharedForAsyncProxy(e);
      e.barrier();
    }

    profileStamp(f, ChainPhase::ScanReady);
    ScanOperands o = scanOperands(e, p, f.k, tile, vectors);
    // The state already in shared memory in the tensor-core type: read in
    // place, never staged.
    if (vectors && it.sState)
      o.state.resident = it.sState;
    SmallVector<Value> acc;
    if (raw) {
      // C in place (its rows i0..), the row scales on the accumulator.
      TileOperand cRows = o.cScaled;
      cRows.resident = it.sBC;
      cRows.residentSwizzled = it.swizzled;
      cRows.residentRow0 = i0;
      acc = mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state), cRows, o.state);
      acc = mm.scaleRows(acc, [&](Value rr) {
        return scalesInRegisters ? rowScale(i0, rr) : e.load(sScale, {rr});
      });
      o.xj.resident = it.sX;
      o.xj.residentSwizzled = it.swizzled;
      // The weights as register fragments beside x in place, each computed
      // once (a warp owns whole rows of the chunk); warps skip the k16
      // steps past their rows' diagonal.
      o.weights.fragmentPair = weightPairs(e, p, f.k, tile);
      o.weights.diagonal = i0;
      if (blockFactors)
        o.weights.blockFactors = causalBlockFactors(e, p, f.k, tile);
    } else {
      acc = mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state), o.cScaled,
                          o.state);
    }
    Value jEnd = e.min(e.add(i0, e.idx(rows)), r.len);
    acc = mm.accumulate(acc, e.idx(0), jEnd, o.weights, o.xj);
    profileStamp(f, ChainPhase::ScanProducts);
    if (vectors) {
      auto store = [&](Value rr, Value col, Value v) {
        storeScanOutputVector(e, p, f.k, tile, rr, col, v);
      };
      // Straight from the fragments where the whole chunk is one row tile
      // (no next tile reuses this one's shared buffers): each warp stores
      // its own rows as soon as its products are done.
      if (f.config.scanFromFragments)
        mm.epiloguePairs(acc, store);
      else
        mm.epilogueVector(acc, store);
      return;
    }
    mm.epilogue(acc, [&](Value rr, Value col, Value v) {
      storeScanOutput(e, p, f.k, tile, rr, col, v);
    });
  });
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
