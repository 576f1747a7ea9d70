//===- Emit.h - scalar building blocks of the SSD GPU kernels ---*- C++ -*-===//
//
// Emitter wraps an ImplicitLocOpBuilder with the few operations the kernels
// are written in: index and f32 arithmetic, loads that widen to f32, stores
// that narrow to the element type, structured loops and conditionals, thread
// and block ids. Index arithmetic is 64-bit after convert-gpu-to-nvvm
// (index-bitwidth=64), so token offsets past 2^31 are safe.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_EMIT_H
#define SSD_LIB_CONVERSION_SSDTOGPU_EMIT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ssd {
namespace gpu_lowering {

using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

class Emitter {
public:
  explicit Emitter(mlir::ImplicitLocOpBuilder &b) : b(b) {}
  mlir::ImplicitLocOpBuilder &b;

  // Constants.
  Value idx(int64_t v);
  Value f32(double v);
  Value i1(bool v);

  // Index arithmetic.
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y); // unsigned
  Value rem(Value x, Value y); // unsigned
  Value min(Value x, Value y); // signed
  Value max(Value x, Value y); // signed
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return mul(x, idx(y)); }
  Value lt(Value x, Value y); // signed <
  Value le(Value x, Value y);
  Value eq(Value x, Value y);
  Value ne(Value x, Value y);
  Value andi(Value x, Value y);
  Value ori(Value x, Value y);
  Value select(Value c, Value x, Value y);
  Value toIndex(Value intValue);

  // f32 arithmetic.
  Value addf(Value x, Value y);
  Value subf(Value x, Value y);
  Value mulf(Value x, Value y);
  Value divf(Value x, Value y);
  Value fma(Value x, Value y, Value z);
  Value minf(Value x, Value y);
  Value maxf(Value x, Value y);
  Value exp(Value x);
  Value gtf(Value x, Value y);
  /// exp(x), x a sum of A dt over a span of tokens: a decay (at most one)
  /// when A dt <= 0, a growth when A dt > 0, exactly as the recurrence of
  /// the semantics. Entries outside the causal triangle may overflow; every
  /// use selects them away (never multiplies them by a zero mask).
  Value decay(Value x);
  /// exp(x) as ex2.approx.ftz of x log2(e), two instructions, for values
  /// that are rounded to 16 bits next (tensor-core operands): its error, at
  /// most 2 + 1.16 |x| ulp (below 4e-6 relative for |x| < 50, where the
  /// weights are not already below 2e-22), is a thousandth of that
  /// rounding, and the flush to zero changes only results below 2^-126,
  /// which the rounding makes zero or subnormal (f16: zero) anyway.
  Value expRoundedTo16Bits(Value x);
  /// One PTX special-function instruction on an f32, e.g.
  /// "ex2.approx.ftz.f32" (the SFU's single-instruction approximations).
  Value approxF32(llvm::StringRef instruction, Value x);
  /// log(1 + exp(x)) for x <= 20 in twelve instructions on the SFU: t =
  /// 2^(x log2 e), u = 1 + t, log(u) t / (u - 1) (t where u rounds to 1),
  /// which cancels the rounding of u. Its error is mostly the rounding of
  /// x log2 e: simulated with each step correctly rounded, at most 1.8e-6
  /// relative to the exact softplus for x in [-30, 20] (2.6e-7 for x > 0;
  /// the SFU's own approximations add a few ulps), against 2.2e-7 for the
  /// libm form (log1p of exp), which takes about 45 instructions.
  Value softplusApprox(Value x);
  Value toF32(Value v);
  Value fromF32(Value v, Type type);

  // Memory.
  Value load(Value memref, ValueRange indices);
  /// Loads and widens a float to f32.
  Value loadF32(Value memref, ValueRange indices);
  /// Narrows an f32 value to the memref's element type and stores it.
  void store(Value v, Value memref, ValueRange indices);
  Value dim(Value memref, int64_t d);

  // Vectors (16-byte accesses: callers guarantee the alignment).
  /// `width` consecutive elements along the innermost dimension, in the
  /// memref's element type, aligned to min(16, their bytes).
  Value loadVector(Value memref, ValueRange indices, int64_t width);
  /// Narrows a float vector to the memref's element type and stores it.
  void storeVector(Value v, Value memref, ValueRange indices);
  /// Widens a float vector to f32.
  Value toF32Vector(Value v);
  Value splat(Value scalar, int64_t width);
  /// f32 vector whose element t is fn(element t of `v`, t).
  Value mapF32(Value v,
               llvm::function_ref<Value(Value element, int64_t t)> fn);

  // Ids.
  Value threadId();
  Value blockId(mlir::gpu::Dimension d);
  Value laneId();
  void barrier();
  /// Inclusive prefix sum of the f32 `v` over the lanes of a warp (five
  /// shuffles; every lane of the warp takes part).
  Value warpInclusiveScan(Value v);
  /// Lane `src`'s (index, per lane) `v`, a 32-bit value, to each lane.
  Value warpShuffle(Value v, Value src);
  /// Whether `pred` (i1) holds in every lane of the warp (vote.sync.all;
  /// all 32 lanes must reach it together).
  Value warpAll(Value pred);

  // Control flow. `body` gets the induction variable and iteration
  // arguments and returns the values to yield.
  using LoopBody =
      llvm::function_ref<llvm::SmallVector<Value>(Value iv, ValueRange args)>;
  llvm::SmallVector<Value> forLoop(Value lb, Value ub, Value step,
                                   ValueRange init, LoopBody body);
  void forLoop(Value lb, Value ub, Value step,
               llvm::function_ref<void(Value iv)> body);
  void ifThen(Value cond, llvm::function_ref<void()> body);
  void ifThenElse(Value cond, llvm::function_ref<void()> thenBody,
                  llvm::function_ref<void()> elseBody);
  /// scf.if with results: both branches return the same types.
  llvm::SmallVector<Value>
  ifElse(Value cond, mlir::TypeRange types,
         llvm::function_ref<llvm::SmallVector<Value>()> thenBody,
         llvm::function_ref<llvm::SmallVector<Value>()> elseBody);
};

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_EMIT_H
