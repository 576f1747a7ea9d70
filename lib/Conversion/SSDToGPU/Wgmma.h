//===- Wgmma.h - wgmma operands for kernels outside TileMatmul ---*- C++
//-*-===//
//
// The pieces of TileMatmulWgmma.cpp that a kernel issuing its own
// wgmma.mma_async needs: the descriptor of a K-major operand in TMA's
// 128-byte swizzle, and the accumulators as the struct of f32 registers
// wgmma takes and returns, in the fragment layout of mma.sync (fragment j of
// a warp's 16 rows: registers 4j .. 4j + 3, element [r][c] at row lane / 4 +
// 8r, column 8j + 2 (lane % 4) + c).
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WGMMA_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WGMMA_H

#include "Emit.h"

#include "llvm/ADT/SmallVector.h"

namespace ssd {
namespace gpu_lowering {

/// The descriptor of a K-major operand whose rows TMA wrote in the 128-byte
/// swizzle (128 bytes a row, 8-row groups 1024 bytes apart and 1024-byte
/// aligned), starting at shared address `address` (index): a k16 step
/// inside the 64-element panel starts 32 bytes further.
Value swizzledKMajorDescriptor(Emitter &e, Value address);

/// The descriptor of an N-major operand (n contiguous) in TMA's 128-byte
/// swizzle, as [N / 64 panels][K rows][64]: K's 8-row groups 1024 bytes
/// apart, the 64-wide panels `panelBytes` apart; a k16 step starts 16 rows
/// (2048 bytes) further.
Value swizzledNMajorDescriptor(Emitter &e, Value address, int64_t panelBytes);

/// `descriptor` (any of the above) for the operand `bytes` (a multiple of
/// 16) further on: one add to its start-address field (address / 16, 14
/// bits), which never carries into the next field since shared addresses
/// stay below 2^18. Cheaper than a descriptor built afresh per k step.
Value advanceDescriptor(Emitter &e, Value descriptor, int64_t bytes);

/// wgmma.mma_async m64nNk16 (f32 accumulators `d`, N = `n`) with A from
/// registers: `fragment` is a warp's 16 x 16 A fragment in the mma.sync
/// m16k16 layout (vector<4x2xbf16|f16>), B by descriptor `descB`, K-major
/// or, for 16-bit types, N-major (`bKMajor` false).
Value wgmmaRegisterA(Emitter &e, Value d, Value fragment, Value descB,
                     int64_t n, Type mmaType, bool bKMajor);

/// `fragments` (vector<2x2xf32> each) as wgmma's accumulator struct.
Value wgmmaAccumulators(Emitter &e, mlir::ValueRange fragments);

/// Zero accumulators of an m64nN wgmma (`n` / 8 fragments).
Value wgmmaZeroAccumulators(Emitter &e, int64_t n);

/// The `count` fragments of accumulator struct `d`.
llvm::SmallVector<Value> wgmmaFragments(Emitter &e, Value d, int64_t count);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WGMMA_H
