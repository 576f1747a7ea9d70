//===- TileMatmulParts.h - what TileMatmul's files share ---------*- C++ -*-===//
//
// Internal to TileMatmul.cpp, TileMatmulVector.cpp and TileMatmulWgmma.cpp:
// the block shape, the shared-row paddings and the few helpers one file
// defines and another calls.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMULPARTS_H
#define SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMULPARTS_H

#include "TileMatmul.h"
#include "TmaCopy.h" // fenceSharedForAsyncProxy

#include "llvm/ADT/SmallVector.h"

namespace ssd {
namespace gpu_lowering {

inline constexpr int64_t kThreads = 256;
inline constexpr int64_t kWarps = kThreads / 32;
// Shared rows are padded so that neither the fills nor ldmatrix conflict.
inline constexpr int64_t kSimtPad = 1, kMmaPad = 8;
// Output-tile row padding in f32 words: 8 keeps the fragment stores (8 bytes,
// half a warp at a time: rows shift by 8 banks) free of bank conflicts.
inline constexpr int64_t kOutPad = 8;

/// One m16n8k16 product (TileMatmul.cpp).
Value mmaSync(Emitter &e, Value a, Value b, Value c);

/// Indices of element (outer, inner) in core matrices of 8 x 8 elements,
/// [lead][outer/8][inner/8][outer%8][inner%8] (TileMatmulVector.cpp).
llvm::SmallVector<Value> coreMatrixAt(Emitter &e, Value lead, Value outer,
                                      Value inner);


} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_TILEMATMULPARTS_H
