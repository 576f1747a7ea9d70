//===- TileMatmul.h - one thread block's tile matrix product ----*- C++ -*-===//
//
// The matrix product shared by bmm, chunk_state and chunk_scan:
//   acc[m, n] += sum_k A(k, m) * B(k, n)
// over a tileM x tileN output tile with 256 threads. Each operand is given
// by a loader producing the f32 value of one element (masking and scaling
// included), so a kernel states only what its operands are. The K loop
// stages tileK-deep slices through shared memory:
//  - SIMT: f32 slices sA[k][m], sB[k][n]; 16x16 threads, each owning a
//    (tileM/16) x (tileN/16) register tile of exact f32 FMAs.
//  - MMA: bf16/f16 slices sA[m][k], sB[n][k] read with nvgpu.ldmatrix and
//    multiplied with nvgpu.mma.sync m16n8k16 into f32 fragments; 8 warps.
//  - WGMMA (sm_90a, MmaInstr::Wgmma, 64-row tiles on the vector path): the
//    slices are staged in the canonical no-swizzle layout of wgmma (8 x 16-
//    byte core matrices, 128 contiguous bytes each) and read in place by
//    wgmma.mma_async m64nNk16, warpgroup w taking output columns
//    [w tileN/2, (w+1) tileN/2): no ldmatrix, and each operand is read from
//    shared memory once per warpgroup instead of once per warp. Its
//    accumulators have the mma.sync fragment layout of this class (warp w%4
//    owns rows 16(w%4).., lane l rows l/4 and l/4+8, columns 2(l%4)+{0,1}
//    of every 8-column block), so the epilogues are the same.
//  - WGMMA in place (sm_90a, MmaInstr::Wgmma, 128-row tiles whose operands
//    are both in place: B resident, A resident or register fragments):
//    warpgroup g takes rows [64g, 64g + 64) and every column, m64nNk16 with
//    N = tileN, reading TMA's 128-byte-swizzled rows or core matrices
//    through descriptors and A's fragments from registers. Nothing is
//    staged; the accumulators are the mma.sync layout of a 8 x 1 warp grid
//    (warp w owns rows 16w..), so the epilogues are the same.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H
#define SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H

#include "Kernels.h"

#include <functional>
#include <optional>

namespace ssd {
namespace gpu_lowering {

/// One operand of the product: element (k, row) as f32, row local to the
/// tile; k is clamped into range by the product and masked afterwards.
struct TileOperand {
  std::function<Value(Value k, Value row)> load;
  /// Consecutive k are adjacent in global memory (the fill then walks k
  /// fastest so that a warp's loads coalesce), else consecutive rows are.
  bool kContiguous = false;
  /// Optional vector fill for tensor-core tiles, used when both operands
  /// have one: kVectorWidth consecutive elements along the contiguous
  /// dimension starting at (k, row) as one raw vector (16-byte global loads
  /// of vector<8xbf16>, or two of vector<8xf32>). kContiguous: k is a
  /// multiple of 8 no larger than the last in-range k rounded down to 8,
  /// and the product zeroes the elements at k >= kEnd. Else: row is a
  /// multiple of 8, k is clamped into range and the product zeroes the
  /// whole vector when k >= kEnd; every row of the tile must be valid
  /// memory. The loads of the next K slice are issued before the current
  /// slice's products (two shared stages, one barrier per slice).
  std::function<Value(Value k, Value row)> loadVector;
  /// Optional: the raw vector of loadVector, called after the products of
  /// the previous slice, to vector<8xf32> (scaling, decays); element
  /// conversion when absent.
  std::function<Value(Value raw, Value k, Value row)> convertVector;
  /// Optional, vector path only: the whole operand already in shared
  /// memory in the tensor-core type, read in place instead of staged (no
  /// global loads, no stores): [1][rows][K + pad] when kContiguous, else
  /// [1][K][rows + pad] (rows 16-byte aligned). The product must run over k
  /// in [0, K) with K a multiple of the slice depth. wgmma reads a resident
  /// B with k contiguous only (residentShape); mma.sync takes either operand
  /// in either layout, but a staged B beside a resident A is not supported.
  Value resident;
  /// The buffer row holding the tile's row 0 (a tile over part of a
  /// resident buffer); null for row 0.
  Value residentRow0;
  /// The resident buffer holds TMA's 128-byte swizzle, [width / 64][rows]
  /// [64] (TmaCopy.h: swizzled128At), instead of padded rows; the product
  /// indexes it by the same (row, column). mma.sync, or wgmma in place (A
  /// k-contiguous, B either way).
  bool residentSwizzled = false;

  // A operands made in registers (mma.sync, vector path, beside a resident
  // B): the fragments go straight to the tensor cores, never through a
  // staged slice, its stores, its barrier or ldmatrix.
  /// A's fragments computed in registers: elements (k, row) and (k + 1,
  /// row), k even, as vector<2xf32>; the product zeroes those at k >= kEnd.
  std::function<Value(Value k, Value row)> fragmentPair;
  /// With `resident` (A only): the fragments read from it are multiplied,
  /// element (k, row) by element k % 2 of kScalePair(k - k % 2) (f32,
  /// vector<2xf32>); the rounding is that of a staged convertVector.
  std::function<Value(Value k)> kScalePair;
  /// Optional with fragmentPair: A(k, row) is zero for k > row + diagonal,
  /// so a warp skips the k16 steps past its last row's diagonal.
  Value diagonal;

  /// A causal A that factors across 16-row blocks: for k below the first
  /// row of the block holding `row` (k + 16 <= b, b = 16 floor(row / 16) +
  /// diagonal, both in k's terms),
  ///   A(k, row) = row(row) * raw(k, row) * column(k, b),
  /// so that a k16 step wholly below a warp's rows needs no per-element
  /// transform (the causal weights' exponentials become one per column).
  struct BlockFactors {
    /// i1, the same in every lane of a warp: whether the factored form
    /// holds (else every step takes fragmentPair).
    Value enabled;
    /// Elements (k, row), (k + 1, row) as vector<2xf32>, k even.
    std::function<Value(Value k, Value row)> raw;
    /// The factor of columns k, k + 1 in block b, vector<2xf32>.
    std::function<Value(Value k, Value b)> column;
    /// The factor of `row`, f32.
    std::function<Value(Value row)> row;
  };
  /// Optional with fragmentPair and diagonal (mma.sync, one m16 fragment
  /// per warp): where `enabled` holds, the product multiplies the
  /// accumulators by row(row) once, after the steps below the block and
  /// before its diagonal step, so the incoming accumulators must already
  /// be divided by row(row) (TileMatmulRegisterA.cpp).
  std::optional<BlockFactors> blockFactors;
};

/// Row padding (elements) of a resident operand: keeps ldmatrix rows on
/// distinct banks and 16-byte aligned.
inline constexpr int64_t kResidentPad = 8;

/// Elements per vector of TileOperand::loadVector.
inline constexpr int64_t kVectorWidth = 8;

/// The tensor-core instruction of a product.
enum class MmaInstr { MmaSync, Wgmma };

/// How operands copied whole into shared memory get there: cp.async (16
/// bytes a thread) or TMA boxes (sm_90a).
enum class CopyInstr { CpAsync, Tma };

class TileMatmul {
public:
  /// `mmaType` (bf16 or f16) selects tensor cores when the tile shape
  /// allows them; a null type selects SIMT. `instr` Wgmma takes wgmma where
  /// the tile allows it (wgmmaFits) and mma.sync elsewhere.
  TileMatmul(Emitter &e, KernelFunc &kernel, int64_t tileM, int64_t tileN,
             int64_t tileK, Type mmaType, MmaInstr instr = MmaInstr::MmaSync);

  static bool mmaFits(int64_t tileM, int64_t tileN, int64_t tileK);
  /// wgmma tiles: 64 rows (one warpgroup's m64), two warpgroups over the
  /// columns (tileN/2 a multiple of 8), K slices of whole k16 steps.
  static bool wgmmaFits(int64_t tileM, int64_t tileN, int64_t tileK);
  /// wgmma in place: 128 rows (a warpgroup's m64 each), tileN columns in
  /// whole n8 blocks up to 256, K slices of whole k16 steps.
  static bool wgmmaInPlaceFits(int64_t tileM, int64_t tileN, int64_t tileK);
  bool usesMma() const { return static_cast<bool>(mmaType); }
  /// Whether the vector path multiplies with wgmma (staged or in place).
  bool usesWgmma() const { return wgmma || wgmmaInPlace; }

  /// Shape and element indices of a resident B operand (TileOperand::
  /// resident) of `rows` rows and depth `k`, in the layout this product
  /// reads: [1][rows][k + kResidentPad] for mma.sync,
  /// [1][rows/8][k/8][8][8] (core matrices) for wgmma.
  llvm::SmallVector<int64_t> residentShape(int64_t rows, int64_t k) const;
  llvm::SmallVector<Value> residentAt(Value row, Value k) const;

  /// Bytes of shared memory the vector path holds (both stages of A and
  /// B, or the f32 output tile of epilogueVector). Tensor-core tiles only.
  int64_t vectorBytes() const;
  /// As vectorBytes, for a product whose A (or B) operand is resident: the
  /// staged operands' slices only, and room for the output tile unless
  /// `outputTile` is false (the caller never runs epilogueVector).
  int64_t vectorBytes(bool residentA, bool residentB,
                      bool outputTile = true) const;
  /// Runs the vector path in `buffer`, a 1-D i8 workgroup buffer of at
  /// least vectorBytes() bytes, instead of a buffer of its own: products
  /// that never run at once (one after the other, barrier between) can
  /// share one. Call before the first product.
  void shareVectorBuffer(Value buffer) { flat = buffer; }

  /// Zero accumulators.
  llvm::SmallVector<Value> zero();
  /// acc += A B^T over k in [kBegin, kEnd).
  llvm::SmallVector<Value> accumulate(ValueRange acc, Value kBegin, Value kEnd,
                                      const TileOperand &a,
                                      const TileOperand &b);
  /// acc with every element of output row `row` multiplied by
  /// factor(row) (tensor-core tiles only).
  llvm::SmallVector<Value> scaleRows(ValueRange acc,
                                     llvm::function_ref<Value(Value row)> factor);
  /// Calls `store(row, col, value)` for every accumulator element this
  /// thread owns (row < tileM, col < tileN).
  void epilogue(ValueRange acc,
                llvm::function_ref<void(Value row, Value col, Value v)> store);
  /// As epilogue, through shared memory: calls `store(row, col, v)` with
  /// v a vector<8xf32> of columns col..col+7 (col a multiple of 8), the
  /// threads of a warp on consecutive vectors of a row, so that 16-byte
  /// stores coalesce. Tensor-core tiles only; ends with a barrier.
  void epilogueVector(
      ValueRange acc,
      llvm::function_ref<void(Value row, Value col, Value v)> store);
  /// epilogueVector in two halves, for a caller that puts work of its own
  /// (ending in a block barrier) between them: stageOutput stores the
  /// accumulators into the output tile, after a barrier (the tile reuses
  /// the stage buffers); readOutput then calls `store` as epilogueVector
  /// does, and ends with a barrier.
  void stageOutput(ValueRange acc);
  void readOutput(
      llvm::function_ref<void(Value row, Value col, Value v)> store);
  /// The (row, col) of each output vector readOutput hands this thread, in
  /// order, for a caller that walks them itself (several passes with
  /// values carried between them). Only where every thread holds the same
  /// number of vectors (outputVectorsEven()).
  llvm::SmallVector<std::pair<Value, Value>> threadOutputVectors();
  bool outputVectorsEven() const;
  /// The staged output tile's vector<width x f32> at (row, col).
  Value loadOutputVector(Value row, Value col, int64_t width = kVectorWidth);
  int64_t outputRows() const { return tileM; }
  int64_t outputCols() const { return tileN; }
  /// As epilogue, straight from the fragments two columns at a time: calls
  /// `store(row, col, v)` with v a vector<2xf32> of columns col, col + 1
  /// (col even). No shared memory and no barrier, so warps leave the
  /// product independently; a warp's pairs of one row cover 32 contiguous
  /// bytes of f32 (a whole sector). Tensor-core tiles only.
  void epiloguePairs(
      ValueRange acc,
      llvm::function_ref<void(Value row, Value col, Value v)> store);

private:
  void fill(Value shared, const TileOperand &op, int64_t rows, Value k0,
            Value kEnd);
  llvm::SmallVector<Value> simtStep(ValueRange acc);
  llvm::SmallVector<Value> mmaStep(ValueRange acc);
  void allocateScalarBuffers();

  // The pipelined vector path.
  llvm::SmallVector<Value> accumulateVector(ValueRange acc, Value kBegin,
                                            Value kEnd, const TileOperand &a,
                                            const TileOperand &b);
  Value sharedView(int64_t byteOffset, llvm::ArrayRef<int64_t> shape,
                   Type element);
  Value stagedView(int slot, bool kContiguous, int64_t rows);
  llvm::SmallVector<Value> loadSlice(const TileOperand &op, int64_t rows,
                                     Value k0, Value kEnd);
  void storeSlice(const TileOperand &op, Value view, int64_t rows,
                  ValueRange raw, Value stage, Value k0, Value kEnd);
  /// Where an operand's slice is read: stage (0 for a resident operand),
  /// k offset of the slice in the view and row offset of the tile.
  struct SliceAt {
    Value stage, k0, row0;
    bool swizzled = false; // a resident operand in TMA's 128-byte swizzle
  };
  /// `a` supplies A's register fragments (fragmentPair) or their k scale
  /// (kScalePair); `kEnd` masks computed fragments.
  llvm::SmallVector<Value> mmaStepStaged(ValueRange acc, const TileOperand &a,
                                         Value viewA, bool aTrans, SliceAt aAt,
                                         Value viewB, bool bTrans, SliceAt bAt,
                                         Value kEnd);
  /// The m16k16 A fragment (vector<4x2xmmaType>) of rows m0.. and k
  /// kAbs.., computed by a.fragmentPair (TileMatmulRegisterA.cpp).
  Value computeFragmentA(const TileOperand &a, Value m0, Value kAbs,
                         Value kEnd);
  /// As computeFragmentA for a k16 step wholly below block `b` (absolute),
  /// from a.blockFactors' raw and column (the row factor left out).
  Value blockFactoredFragmentA(const TileOperand &a, Value m0, Value kAbs,
                               Value b);
  /// acc += A B^T for a register A with blockFactors beside a resident B
  /// (at `bAt`): the steps below each warp's block factored, the row
  /// factors, then the diagonal step (TileMatmulRegisterA.cpp).
  llvm::SmallVector<Value> accumulateBlockFactored(ValueRange acc, Value kBegin,
                                                   Value kEnd,
                                                   const TileOperand &a,
                                                   Value viewB, bool bTrans,
                                                   SliceAt bAt);
  /// A loader of this warp's B fragments of one k16 step at k `bK` of a
  /// view read by ldmatrix (`bAt` gives its stage and row offset).
  std::function<llvm::SmallVector<Value>(Value bK)>
  fragmentsB(Value viewB, bool bTrans, SliceAt bAt);
  /// acc plus the products of this warp's A and B fragments of one k16
  /// step.
  llvm::SmallVector<Value> mmaFragments(ValueRange acc,
                                        llvm::ArrayRef<Value> aFrags,
                                        llvm::ArrayRef<Value> bFrags);
  /// `frag` (read at k kAbs..) scaled along k by a.kScalePair.
  Value scaleFragmentA(const TileOperand &a, Value frag, Value kAbs);
  /// acc += A B^T with wgmma in place: the whole K extent of B's buffer,
  /// A's fragments past kEnd (and past `a.diagonal`) zero
  /// (TileMatmulWgmma.cpp).
  llvm::SmallVector<Value> accumulateWgmmaInPlace(ValueRange acc, Value kBegin,
                                                  Value kEnd,
                                                  const TileOperand &a,
                                                  const TileOperand &b);
  /// One staged slice of A against B's slice: staged, or resident from
  /// k `bK0` (core matrices, or with `bSwizzled` TMA's swizzled N-major
  /// rows, one 64-column panel per warpgroup).
  llvm::SmallVector<Value> wgmmaStep(ValueRange acc, Value viewA, bool aKMajor,
                                     Value viewB, bool bKMajor, Value stage,
                                     bool bResident, Value bK0,
                                     bool bSwizzled = false);
  /// Tile row and column of this thread's fragment element [0][0] of m16n8
  /// tile (0, 0): row lane/4 and column 2(lane%4) of its warp's block; tile
  /// (i, j) element [r][c] sits 16i + 8r rows and 8j + c columns further.
  std::pair<Value, Value> fragmentOrigin();
  /// Indices of the first element of vector `(kk, row)` in a staged view.
  llvm::SmallVector<Value> stagedAt(bool kContiguous, Value stage, Value kk,
                                    Value row) const;

  /// The f32 output tile of epilogueVector, over the stage buffers.
  Value outputTile();
  /// The (row, col) of output vector `v` of the tile, row-major.
  std::pair<Value, Value> outputVectorAt(Value v);

  Emitter &e;
  KernelFunc &kernel;
  int64_t tileM, tileN, tileK;
  Type mmaType;
  int64_t warpsM = 1, warpsN = 1, fragsM = 1, fragsN = 1; // MMA layout
  bool wgmma = false, wgmmaInPlace = false;
  Value sA, sB;
  /// One byte buffer for the vector path: the two-stage A and B slices
  /// (viewed per layout), reused by epilogueVector for the output tile.
  Value flat;
  int64_t stageBytes(int64_t rows) const;
  int64_t outBytes() const;
};

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H
