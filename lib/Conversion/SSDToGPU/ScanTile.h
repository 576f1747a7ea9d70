//===- ScanTile.h - one tile of chunk-scan output ---------------*- C++ -*-===//
//
// The chunk scan of one T x cols tile of y (rows i0.., headdim columns
// p0..), shared by the unfused ssd_chunk_scan kernel and the fused chain
// item. Its accumulator is fed by two tile products:
//   1. inter-chunk: A(k=n, i) = C[i, n] scale_i,  B(k=n, col) = s_c[col, n]
//   2. intra-chunk: A(k=j, i) = CB[i,j] exp(dA_i - dA_j) dt_j on
//      j <= i, B(k=j, col) = x[j, col], over j < min(i0 + T, len)
// and its epilogue adds D x, applies the z gate and stores valid tokens.
// The kernels differ only in where the state lives and how they stage the
// chunk (dA, dt and the row scales in shared memory).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_SCANTILE_H
#define SSD_LIB_CONVERSION_SSDTOGPU_SCANTILE_H

#include "TileMatmul.h"

namespace ssd {
namespace gpu_lowering {

/// What the tile's operands read.
struct ScanTile {
  Value batch, head, group, c, i0;
  /// First headdim column of the tile; null for column 0 (no offset op).
  Value p0;
  /// Valid columns from p0 (the tile may be wider, rounded up to 16).
  int64_t cols = 0;
  ChunkRange r;
  Value sDA, sDt, sScale; // shared: dA[Q], dt[Q], state-term scale[T]
  /// The state at the chunk start: `states` at stateAt(pp, n) holds
  /// s_c[pp, n] (pp an absolute headdim column).
  Value states;
  std::function<llvm::SmallVector<Value>(Value pp, Value n)> stateAt;
  /// The chunk's x rows already in shared memory ([1][Q][cols] padded, or
  /// [panels][Q][64] in the 128-byte swizzle): the epilogue's D x reads
  /// them there instead of global memory. Null: x from global memory.
  Value xRows;
  bool xRowsSwizzled = false;
  /// D of the tile's head (per-head D), loaded once before the products
  /// (loadHeadD): the epilogue's loads of D would follow its own y stores,
  /// which may alias D, so the compiler reloads it per element and every
  /// FMA waits for a load. Null: loaded per element.
  Value dHead;
  /// i1, the same in every lane of a warp: the causal weights take their
  /// 16-row block factors (causalBlockFactors). Null: never.
  Value blockFactored;
};

/// Whether A dt <= 0 at every token of the chunk, so that its dA never
/// increases and exp(dA_i - dA_j) = exp(dA_i - dA_b) exp(dA_b - dA_j) for
/// j <= b <= i is two factors of at most one (rounding aside): neither
/// overflows, and one flushed to zero leaves the product below 2^-126.
/// A growth (A dt > 0) keeps one exponential per weight. The warp's vote
/// (vote.sync: every lane of it must call this together); reads s.sDt.
Value decaysNonIncreasing(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                          const ScanTile &s);

/// The chunk row whose exp(dA) scales the state term of tile row `row`:
/// the row itself, or where s.blockFactored holds the first row of its
/// 16-row block (the weights' product multiplies in the rest).
Value stateDecayRow(Emitter &e, const SSDProblem &p, const ScanTile &s,
                    Value row);

/// The causal weights' block factors (TileOperand::BlockFactors):
/// CB[i, j] exp(dA_i - dA_j) dt_j = exp(dA_i - dA_b) * CB[i, j] *
/// exp(dA_b - dA_j) dt_j, b the first row of row i's 16-row block, enabled
/// by s.blockFactored.
TileOperand::BlockFactors causalBlockFactors(Emitter &e, const SSDProblem &p,
                                             const KernelFunc &k,
                                             const ScanTile &s);

/// s.dHead where the layer has a per-head D.
void loadHeadD(Emitter &e, const SSDProblem &p, const KernelFunc &k,
               ScanTile &s);

/// The four operands of the two products.
struct ScanOperands {
  TileOperand cScaled, state; // inter-chunk
  TileOperand weights, xj;    // intra-chunk
};

/// The operands of `s`; with `vectors`, with their 16-byte fills (rows of
/// x, C, CB and the state are whole vectors and the tile covers its
/// columns exactly).
ScanOperands scanOperands(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                          const ScanTile &s, bool vectors);

/// The intra-chunk weights of `s` two at a time, elements (j, row) and
/// (j + 1, row) (j even) as vector<2xf32>: register A fragments
/// (TileOperand::fragmentPair), rounded as the staged weights are.
std::function<Value(Value j, Value row)>
weightPairs(Emitter &e, const SSDProblem &p, const KernelFunc &k,
            const ScanTile &s);

/// y[i0 + row, p0 + col] = v + D x, gated by z, for valid tokens and
/// columns.
void storeScanOutput(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                     const ScanTile &s, Value row, Value col, Value v);

/// As storeScanOutput for columns col..col+w-1 (v a vector<wxf32>, w 8 or
/// 2): w-element loads of x (from s.xRows where set) and z, one w-element
/// store of y.
void storeScanOutputVector(Emitter &e, const SSDProblem &p,
                           const KernelFunc &k, const ScanTile &s, Value row,
                           Value col, Value v);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_SCANTILE_H
