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
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H
#define SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H

#include "Kernels.h"

#include <functional>

namespace ssd {
namespace gpu_lowering {

/// One operand of the product: element (k, row) as f32, row local to the
/// tile; k is clamped into range by the product and masked afterwards.
struct TileOperand {
  std::function<Value(Value k, Value row)> load;
  /// Consecutive k are adjacent in global memory (the fill then walks k
  /// fastest so that a warp's loads coalesce), else consecutive rows are.
  bool kContiguous = false;
};

class TileMatmul {
public:
  /// `mmaType` (bf16 or f16) selects tensor cores when the tile shape
  /// allows them; a null type selects SIMT.
  TileMatmul(Emitter &e, KernelFunc &kernel, int64_t tileM, int64_t tileN,
             int64_t tileK, Type mmaType);

  static bool mmaFits(int64_t tileM, int64_t tileN, int64_t tileK);
  bool usesMma() const { return static_cast<bool>(mmaType); }

  /// Zero accumulators.
  llvm::SmallVector<Value> zero();
  /// acc += A B^T over k in [kBegin, kEnd).
  llvm::SmallVector<Value> accumulate(ValueRange acc, Value kBegin, Value kEnd,
                                      const TileOperand &a,
                                      const TileOperand &b);
  /// Calls `store(row, col, value)` for every accumulator element this
  /// thread owns (row < tileM, col < tileN).
  void epilogue(ValueRange acc,
                llvm::function_ref<void(Value row, Value col, Value v)> store);

private:
  void fill(Value shared, const TileOperand &op, int64_t rows, Value k0,
            Value kEnd);
  llvm::SmallVector<Value> simtStep(ValueRange acc);
  llvm::SmallVector<Value> mmaStep(ValueRange acc);

  Emitter &e;
  int64_t tileM, tileN, tileK;
  Type mmaType;
  int64_t warpsM = 1, warpsN = 1, fragsM = 1, fragsN = 1; // MMA layout
  Value sA, sB;
};

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMUL_H
