//===- ShapeBinder.h - shape and type checks for ssd verifiers --*- C++ -*-===//
//
// The ssd ops relate many operands through a few symbolic sizes (batch,
// seqlen, nheads, ...). ShapeBinder binds each symbol to the first static
// size it sees and reports any later disagreement, naming both the operand
// that disagrees and the one the size came from.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_DIALECT_SSD_IR_SHAPEBINDER_H
#define SSD_LIB_DIALECT_SSD_IR_SHAPEBINDER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>

namespace ssd {

/// The symbolic sizes of the SSD computation.
enum class Dim {
  Batch,     // b
  SeqLen,    // L
  Heads,     // h
  HeadDim,   // p
  Groups,    // g
  State,     // n
  Chunks,    // nc
  ChunkSize, // Q
  NumSeqs,   // s
};
constexpr unsigned kNumDims = 9;

/// One expected dimension: the size of `dim` plus `offset` (cu_seqlens is
/// s + 1 long).
struct DimRef {
  DimRef(Dim dim, int64_t offset = 0) : dim(dim), offset(offset) {}
  Dim dim;
  int64_t offset;
};

/// The element types an operand may have.
enum class ElementKind {
  Activation, // f32, bf16 or f16 (x, B, C, z, y)
  F32,        // dt, A, D, dt_bias and every decay tensor
  State,      // f32 or f16
  I32,        // seq_idx, cu_seqlens
};

class ShapeBinder {
public:
  explicit ShapeBinder(mlir::Operation *op) : op(op) {}

  /// Checks the rank and every dimension of `value` (named `name`, e.g.
  /// "operand 'x'") against `dims`, binding symbols seen for the first time.
  mlir::LogicalResult bind(llvm::StringRef name, mlir::Value value,
                           llvm::ArrayRef<DimRef> dims);
  /// Binds `dim` to a size given by an attribute or another source.
  mlir::LogicalResult bindSize(Dim dim, int64_t size, llvm::StringRef source);

  /// The static size bound to `dim`, if any.
  std::optional<int64_t> get(Dim dim) const;

  /// Checks h % g == 0, the chunk size, the chunk count against seqlen and,
  /// with `varlen`, that the batch is 1.
  mlir::LogicalResult verifyRelations(bool varlen);

private:
  struct Binding {
    int64_t size = 0;
    std::string source;
    bool bound = false;
  };
  mlir::Operation *op;
  std::array<Binding, kNumDims> bindings;
};

/// Checks that `value`'s element type is of `kind`.
mlir::LogicalResult verifyElementKind(mlir::Operation *op, llvm::StringRef name,
                                      mlir::Value value, ElementKind kind);

/// Checks that `value` has the same element type as `ref`.
mlir::LogicalResult verifySameElementType(mlir::Operation *op,
                                          llvm::StringRef name,
                                          mlir::Value value,
                                          llvm::StringRef refName,
                                          mlir::Value ref);

/// Checks that seq_idx and cu_seqlens are not both present.
mlir::LogicalResult verifyPackingOperands(mlir::Operation *op,
                                          mlir::Value seqIdx,
                                          mlir::Value cuSeqlens);

/// Checks a dt_limit attribute: two numbers, low <= high, low >= 0.
mlir::LogicalResult verifyDtLimit(mlir::Operation *op,
                                  std::optional<llvm::ArrayRef<double>> limit);

/// Number of chunks for seqlen `L`, chunk size `Q` and, with varlen, `s`
/// sequences (each boundary adds at most one partial chunk).
int64_t expectedNumChunks(int64_t seqLen, int64_t chunkSize,
                          std::optional<int64_t> numSeqs);

} // namespace ssd

#endif // SSD_LIB_DIALECT_SSD_IR_SHAPEBINDER_H
