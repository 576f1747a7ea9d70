//===- Common.h - shared pieces of the ssd to linalg lowering ---*- C++ -*-===//
//
// The step ops address tokens two ways: token-major tensors (b,L,...) as the
// user passes them, and chunk-major tensors (b,h,nc,Q), (b,nc,...) produced
// by the chunking. ChunkMap is the one place that knows how a (chunk,
// position) pair maps to a token and back, for both the regular chunking
// (chunk c = tokens [cQ, cQ+Q)) and varlen (cu_seqlens) chunking, so every
// lowering handles padding and sequence boundaries the same way.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOLINALG_COMMON_H
#define SSD_LIB_CONVERSION_SSDTOLINALG_COMMON_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <tuple>

namespace ssd {
namespace lowering {

using mlir::Location;
using mlir::OpBuilder;
using mlir::OpFoldResult;
using mlir::Type;
using mlir::Value;

//===----------------------------------------------------------------------===//
// Scalars and tensors
//===----------------------------------------------------------------------===//

Value indexConst(OpBuilder &b, Location loc, int64_t v);
Value f32Const(OpBuilder &b, Location loc, double v);

/// Size of dimension `dim` of a ranked tensor, as an index value.
Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t dim);
/// Size of dimension `dim`: an attribute when static, a tensor.dim otherwise.
OpFoldResult dimFold(OpBuilder &b, Location loc, Value tensor, int64_t dim);

/// tensor.empty of the given shape and element type.
Value emptyTensor(OpBuilder &b, Location loc,
                  llvm::ArrayRef<OpFoldResult> shape, Type elementType);
/// A tensor of the given shape filled with zero.
Value zeroTensor(OpBuilder &b, Location loc, llvm::ArrayRef<OpFoldResult> shape,
                 Type elementType);

/// Widens a float to f32 (no-op for f32).
Value toF32(OpBuilder &b, Location loc, Value v);
/// Converts an f32 value to `type` (truncation for f16/bf16).
Value fromF32(OpBuilder &b, Location loc, Value v, Type type);
/// exp(x), x a sum of A dt over a span of tokens: a decay when A dt <= 0, a
/// growth when A dt > 0, exactly as the recurrence of the semantics (no
/// clamp: a clamp at 0 silently computed A > 0 as A = 0). exp(-inf) is 0;
/// entries outside the causal triangle are selected away, never multiplied
/// by a zero mask, so their overflow cannot leak.
Value decayExp(OpBuilder &b, Location loc, Value x);

/// Identity / projected maps for linalg.generic: `dims` picks the loop
/// dimensions the operand is indexed by, in order.
mlir::AffineMap projectedMap(mlir::MLIRContext *ctx, unsigned numLoops,
                             llvm::ArrayRef<unsigned> dims);

llvm::SmallVector<mlir::utils::IteratorType>
iterators(unsigned numParallel, llvm::ArrayRef<unsigned> reductionDims = {});

/// tile[b,c,g,hh,pos,k] *= scale[b,g,hh,c,pos]: a 6-D chunk tile with one
/// factor per token (a (b,g,h/g,nc,Q) tensor), scaled in place.
Value scaleTokenRows(OpBuilder &b, Location loc, Value scale, Value tile);
/// As scaleTokenRows, into a new tensor: for a tile that is read again
/// after the scaling (bufferization would otherwise copy it whole first).
Value scaledTokenRows(OpBuilder &b, Location loc, Value scale, Value tile);

/// Splits the head dimension `dim` (size h) of `tensor` into (g, h/g), so that
/// head-to-group sharing is an ordinary projected indexing map.
Value splitHeads(OpBuilder &b, Location loc, Value tensor, int64_t dim,
                 int64_t groups);
/// The inverse: merges dimensions `dim` and `dim+1`.
Value mergeDims(OpBuilder &b, Location loc, Value tensor, int64_t dim);

//===----------------------------------------------------------------------===//
// Chunking
//===----------------------------------------------------------------------===//

/// How chunks map to tokens. Built once per lowered op.
struct ChunkMap {
  int64_t chunkSize = 0;
  Value seqLen;    // L
  Value numChunks; // nc

  // Varlen tables (null without cu_seqlens), all of index element type.
  Value chunkStart;    // (nc): first token of each chunk
  Value chunkLen;      // (nc): valid tokens of each chunk (0: unused chunk)
  Value tokenChunk;    // (L): chunk of each token
  Value tokenPos;      // (L): position in its chunk; Q for a token outside
                       //      every sequence
  Value seqFirstChunk; // (s): first chunk of each sequence
  Value seqNumChunks;  // (s): chunk count of each sequence
  Value numSeqs;       // s

  bool isVarlen() const { return static_cast<bool>(chunkStart); }

  /// Builds the map for `seqLen` tokens cut into `numChunks` chunks of
  /// `chunkSize`; with `cuSeqlens` the varlen tables are filled by scf loops.
  static ChunkMap build(OpBuilder &b, Location loc, Value seqLen,
                        Value numChunks, int64_t chunkSize, Value cuSeqlens);

  /// The token at position `q` of chunk `c`, clamped into range, and
  /// whether it is a real token (false for padding).
  std::pair<Value, Value> token(OpBuilder &b, Location loc, Value c,
                                Value q) const;
  /// Chunk and position of token `t`, and whether it belongs to a chunk.
  std::tuple<Value, Value, Value> chunkOf(OpBuilder &b, Location loc,
                                          Value t) const;
  /// Regular chunking only: the last real token of chunk `c`, and the token
  /// just before the chunk (token 0 for chunk 0).
  Value lastToken(OpBuilder &b, Location loc, Value c) const;
  Value tokenBefore(OpBuilder &b, Location loc, Value c) const;

  /// Inside a linalg.generic whose dimensions 0, 2, 3 are batch, chunk and
  /// position: `value` where that token has the same seq_idx as token
  /// `refToken(c)` of its chunk, 0 elsewhere.
  Value keepSameSequence(OpBuilder &b, Location loc, Value seqIdx, Value value,
                         llvm::function_ref<Value(Value c)> refToken) const;
};

/// Roles of result dimensions in gatherChunks; a value >= 2 names a
/// dimension of the token-major source instead.
enum GatherDim : int64_t { kBatch = -1, kChunk = -2, kPos = -3 };

/// Gathers a token-major tensor `src` (b, L, ...) into a chunk-major one whose
/// dimensions are given by `resultDims` (roles or source dimensions). Floats
/// are widened to f32; padding positions hold zero.
Value gatherChunks(OpBuilder &b, Location loc, const ChunkMap &map, Value src,
                   llvm::ArrayRef<int64_t> resultDims);

/// Number of chunks (the `dim`-th size of a chunk-major tensor).
Value numChunksOf(OpBuilder &b, Location loc, Value chunkTensor, int64_t dim);

/// Number of chunks of a result type: its static size, or else computed from
/// the token count as the dialect's chunking defines it (ceil(L/Q), plus
/// s - 1 with cu_seqlens).
Value numChunksFor(OpBuilder &b, Location loc, mlir::RankedTensorType type,
                   int64_t dim, Value seqLen, int64_t chunkSize,
                   Value cuSeqlens);

/// tensor.cast to `type` when the static information differs.
Value castTo(OpBuilder &b, Location loc, Value tensor, Type type);

/// Elementwise float conversion of a tensor (extf or truncf), or the tensor
/// itself when it already has `elementType`.
Value convertElements(OpBuilder &b, Location loc, Value tensor,
                      Type elementType);

} // namespace lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOLINALG_COMMON_H
