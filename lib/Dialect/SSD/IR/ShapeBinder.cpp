//===- ShapeBinder.cpp - shape and type checks for ssd verifiers ----------===//
#include "ShapeBinder.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace ssd;

static StringRef dimName(Dim dim) {
  switch (dim) {
  case Dim::Batch:
    return "b";
  case Dim::SeqLen:
    return "L";
  case Dim::Heads:
    return "h";
  case Dim::HeadDim:
    return "p";
  case Dim::Groups:
    return "g";
  case Dim::State:
    return "n";
  case Dim::Chunks:
    return "nc";
  case Dim::ChunkSize:
    return "Q";
  case Dim::NumSeqs:
    return "s";
  }
  llvm_unreachable("unknown dim");
}

/// The kernels specialise on these, so they must be known at compile time.
static bool mustBeStatic(Dim dim) {
  return dim == Dim::Heads || dim == Dim::HeadDim || dim == Dim::Groups ||
         dim == Dim::State || dim == Dim::ChunkSize;
}

static std::string dimLabel(const DimRef &ref) {
  std::string label = dimName(ref.dim).str();
  if (ref.offset > 0)
    label += "+" + std::to_string(ref.offset);
  return label;
}

static std::string layoutString(ArrayRef<DimRef> dims) {
  std::string s = "(";
  for (auto [i, ref] : llvm::enumerate(dims)) {
    if (i)
      s += ",";
    s += dimLabel(ref);
  }
  return s + ")";
}

LogicalResult ShapeBinder::bind(StringRef name, Value value,
                                ArrayRef<DimRef> dims) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return op->emitOpError()
           << name << " must be a ranked tensor, got " << value.getType();
  if (type.getRank() != static_cast<int64_t>(dims.size()))
    return op->emitOpError()
           << name << " must be a rank-" << dims.size() << " tensor "
           << layoutString(dims) << ", got " << type;
  for (auto [i, ref] : llvm::enumerate(dims)) {
    int64_t size = type.getDimSize(i);
    if (ShapedType::isDynamic(size)) {
      if (mustBeStatic(ref.dim))
        return op->emitOpError() << name << " dimension " << i << " ("
                                 << dimName(ref.dim) << ") must be static";
      continue;
    }
    Binding &b = bindings[static_cast<unsigned>(ref.dim)];
    if (!b.bound) {
      if (size - ref.offset < 0)
        return op->emitOpError()
               << name << " dimension " << i << " (" << dimLabel(ref) << ") is "
               << size << ", expected at least " << ref.offset;
      b.size = size - ref.offset;
      b.source = name.str();
      b.bound = true;
      continue;
    }
    if (b.size + ref.offset != size)
      return op->emitOpError()
             << name << " dimension " << i << " (" << dimLabel(ref) << ") is "
             << size << ", expected " << b.size + ref.offset << " as in "
             << b.source;
  }
  return success();
}

LogicalResult ShapeBinder::bindSize(Dim dim, int64_t size, StringRef source) {
  Binding &b = bindings[static_cast<unsigned>(dim)];
  if (b.bound && b.size != size)
    return op->emitOpError()
           << source << " gives " << dimName(dim) << " = " << size
           << ", expected " << b.size << " as in " << b.source;
  b.size = size;
  b.source = source.str();
  b.bound = true;
  return success();
}

std::optional<int64_t> ShapeBinder::get(Dim dim) const {
  const Binding &b = bindings[static_cast<unsigned>(dim)];
  if (!b.bound)
    return std::nullopt;
  return b.size;
}

int64_t ssd::expectedNumChunks(int64_t seqLen, int64_t chunkSize,
                               std::optional<int64_t> numSeqs) {
  int64_t chunks = llvm::divideCeil(seqLen, chunkSize);
  if (numSeqs)
    chunks += *numSeqs - 1;
  return chunks;
}

LogicalResult ShapeBinder::verifyRelations(bool varlen) {
  // The sizes kernels specialise on: a zero one leaves nothing to compute
  // and no tile to divide by.
  for (auto [dim, name] :
       {std::pair{Dim::Heads, "nheads"}, std::pair{Dim::HeadDim, "headdim"},
        std::pair{Dim::Groups, "ngroups"}, std::pair{Dim::State, "dstate"}}) {
    std::optional<int64_t> size = get(dim);
    if (size && *size < 1)
      return op->emitOpError()
             << name << " (" << dimName(dim) << ") must be at least 1, got "
             << *size
             << " (from " << bindings[static_cast<unsigned>(dim)].source
             << ")";
  }
  std::optional<int64_t> heads = get(Dim::Heads), groups = get(Dim::Groups);
  if (heads && groups && (*groups <= 0 || *heads % *groups != 0))
    return op->emitOpError()
           << "nheads (" << *heads << ") must be a multiple of ngroups ("
           << *groups << ")";
  std::optional<int64_t> q = get(Dim::ChunkSize);
  if (q && (*q <= 0 || !llvm::isPowerOf2_64(*q)))
    return op->emitOpError()
           << "chunk size must be a positive power of two, "
           << "got " << *q << " (from "
           << bindings[static_cast<unsigned>(Dim::ChunkSize)].source << ")";
  std::optional<int64_t> numSeqs = get(Dim::NumSeqs);
  if (varlen) {
    std::optional<int64_t> batch = get(Dim::Batch);
    if (!batch || *batch != 1)
      return op->emitOpError() << "cu_seqlens requires batch 1, got "
                               << (batch ? std::to_string(*batch)
                                         : std::string("a dynamic batch"));
    if (numSeqs && *numSeqs < 1)
      return op->emitOpError()
             << "cu_seqlens must hold at least one sequence (2 entries)";
  }
  std::optional<int64_t> seqLen = get(Dim::SeqLen), chunks = get(Dim::Chunks);
  if (q && seqLen && chunks && (!varlen || numSeqs)) {
    int64_t expected =
        expectedNumChunks(*seqLen, *q, varlen ? numSeqs : std::nullopt);
    if (*chunks != expected) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "nchunks is " << *chunks << " but seqlen "
                                << *seqLen << " with chunk size " << *q;
      if (varlen)
        diag << " and " << *numSeqs << " sequences";
      return diag << " needs " << expected;
    }
  }
  return success();
}

static bool matchesKind(Type type, ElementKind kind) {
  switch (kind) {
  case ElementKind::Activation:
    return type.isF32() || type.isBF16() || type.isF16();
  case ElementKind::F32:
    return type.isF32();
  case ElementKind::State:
    return type.isF32() || type.isF16();
  case ElementKind::I32:
    return type.isSignlessInteger(32);
  }
  llvm_unreachable("unknown element kind");
}

static StringRef kindDescription(ElementKind kind) {
  switch (kind) {
  case ElementKind::Activation:
    return "f32, bf16 or f16";
  case ElementKind::F32:
    return "f32";
  case ElementKind::State:
    return "f32 or f16";
  case ElementKind::I32:
    return "i32";
  }
  llvm_unreachable("unknown element kind");
}

LogicalResult ssd::verifyElementKind(Operation *op, StringRef name, Value value,
                                     ElementKind kind) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type)
    return op->emitOpError()
           << name << " must be a tensor, got " << value.getType();
  if (!matchesKind(type.getElementType(), kind))
    return op->emitOpError()
           << name << " element type must be " << kindDescription(kind)
           << ", got " << type.getElementType();
  return success();
}

LogicalResult ssd::verifySameElementType(Operation *op, StringRef name,
                                         Value value, StringRef refName,
                                         Value ref) {
  Type actual = getElementTypeOrSelf(value.getType());
  Type expected = getElementTypeOrSelf(ref.getType());
  if (actual != expected)
    return op->emitOpError() << name << " element type must match " << refName
                             << " (" << expected << "), got " << actual;
  return success();
}

LogicalResult ssd::verifyPackingOperands(Operation *op, Value seqIdx,
                                         Value cuSeqlens) {
  if (seqIdx && cuSeqlens)
    return op->emitOpError() << "seq_idx and cu_seqlens are mutually exclusive";
  return success();
}

LogicalResult ssd::verifyDtLimit(Operation *op,
                                 std::optional<ArrayRef<double>> limit) {
  if (!limit)
    return success();
  if (limit->size() != 2)
    return op->emitOpError()
           << "dt_limit must hold two values [low, high], got "
           << limit->size();
  double lo = (*limit)[0], hi = (*limit)[1];
  if (std::isnan(lo) || std::isnan(hi))
    return op->emitOpError() << "dt_limit must not contain NaN";
  if (lo < 0)
    return op->emitOpError()
           << "dt_limit low (" << lo << ") must be non-negative";
  if (lo > hi)
    return op->emitOpError()
           << "dt_limit low (" << lo << ") must not exceed high (" << hi << ")";
  return success();
}
