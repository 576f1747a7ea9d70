//===- TileMatmulWgmma.cpp - wgmma.mma_async ------------------------------===//
//
// Two forms: staged slices (or a resident B) read by the two warpgroups
// over half the columns each (wgmmaStep), and in place, where each
// warpgroup takes 64 whole rows of a 128-row tile and reads both operands
// where they already are: TMA's 128-byte-swizzled rows and core matrices
// through descriptors, or A's fragments from registers
// (accumulateWgmmaInPlace).
//
//===----------------------------------------------------------------------===//
#include "TileMatmulParts.h"
#include "Wgmma.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {

/// A wgmma shared-memory matrix descriptor: start address, the leading and
/// the stride byte offsets (in 16-byte units in the descriptor), and the
/// layout (none, or the 128-byte swizzle; a swizzled operand's 8-row
/// groups start 1024-byte aligned, so the base offset stays 0).
Value descriptor(Emitter &e, Value address, int64_t leadingBytes,
                 int64_t strideBytes, bool swizzle128) {
  Type i64 = e.b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(e.b, e.b.getIntegerAttr(i64, v));
  };
  Value addr = arith::IndexCastOp::create(e.b, i64, address);
  Value start = arith::ShRUIOp::create(
      e.b, arith::AndIOp::create(e.b, addr, c64(0x3FFFF)), c64(4));
  uint64_t fields = ((uint64_t(leadingBytes) >> 4) << 16) |
                    ((uint64_t(strideBytes) >> 4) << 32);
  if (swizzle128)
    fields |= uint64_t(1) << 62;
  return arith::OrIOp::create(e.b, start, c64(static_cast<int64_t>(fields)));
}

/// The descriptor of the no-swizzle canonical layouts: the byte stride
/// between core matrices along K (`alongK`, the leading byte offset) and
/// along M or N (`alongMN`, the stride byte offset).
Value matrixDescriptor(Emitter &e, Value address, int64_t alongK,
                       int64_t alongMN) {
  return descriptor(e, address, alongK, alongMN, /*swizzle128=*/false);
}

Value sharedAddress(Emitter &e, Value view) {
  return memref::ExtractAlignedPointerAsIndexOp::create(e.b, view);
}

NVVM::WGMMATypes wgmmaType(Type t) {
  return t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
}

/// The accumulator fragments (vector<2x2xf32>, the mma.sync layout) as the
/// struct of f32 registers wgmma takes: fragment j is registers 4j..4j+3.
Value toAccumulatorStruct(Emitter &e, ValueRange acc) {
  Type f32 = e.b.getF32Type();
  SmallVector<Type> fields(4 * acc.size(), f32);
  auto structType =
      LLVM::LLVMStructType::getLiteral(e.b.getContext(), fields);
  Value d = LLVM::PoisonOp::create(e.b, structType);
  for (size_t j = 0; j < acc.size(); ++j)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c)
        d = LLVM::InsertValueOp::create(
            e.b, d,
            vector::ExtractOp::create(e.b, acc[j], ArrayRef<int64_t>{r, c}),
            ArrayRef<int64_t>{static_cast<int64_t>(4 * j + 2 * r + c)});
  return d;
}

SmallVector<Value> fromAccumulatorStruct(Emitter &e, Value d,
                                         int64_t fragments) {
  auto fragType = VectorType::get({2, 2}, e.b.getF32Type());
  SmallVector<Value> out;
  for (int64_t j = 0; j < fragments; ++j) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(
          LLVM::ExtractValueOp::create(e.b, d, ArrayRef<int64_t>{4 * j + i}));
    out.push_back(vector::FromElementsOp::create(e.b, fragType, elements));
  }
  return out;
}

constexpr int64_t kRowBytes = 128;    // one swizzled row: a 64-wide panel
constexpr int64_t kGroupBytes = 1024; // 8 such rows, or a k8 x n64 atom
constexpr int64_t kCoreBytes = 128;   // one 8 x 8 core matrix

/// An in-place operand read by descriptor: its K extent and the descriptor
/// of its k16 step at k `ks`.
struct InPlaceOperand {
  int64_t depth = 0;
  std::function<Value(int64_t ks)> at;
};

/// B resident, over its whole K extent: TMA's swizzled rows [panels][K][64]
/// with n contiguous (N-major: 8-k groups 1024 bytes apart, 64-wide n
/// panels one K extent of rows apart), or core matrices [1][N/8][K/8][8][8]
/// with k contiguous.
InPlaceOperand inPlaceB(Emitter &e, const TileOperand &b) {
  auto type = cast<MemRefType>(b.resident.getType());
  Value base = sharedAddress(e, b.resident);
  InPlaceOperand op;
  if (b.residentSwizzled) {
    assert(!b.kContiguous && type.getRank() == 3 && type.getDimSize(2) == 64 &&
           "swizzled N-major rows");
    op.depth = type.getDimSize(1);
    int64_t panelBytes = op.depth * kRowBytes;
    op.at = [&e, base, panelBytes](int64_t ks) {
      return swizzledNMajorDescriptor(e, e.add(base, e.idx(ks * kRowBytes)),
                                      panelBytes);
    };
    return op;
  }
  assert(b.kContiguous && type.getRank() == 5 && "k-major core matrices");
  op.depth = type.getDimSize(2) * 8;
  int64_t alongN = (op.depth / 8) * kCoreBytes;
  op.at = [&e, base, alongN](int64_t ks) {
    return matrixDescriptor(e, e.add(base, e.idx((ks / 8) * kCoreBytes)),
                            kCoreBytes, alongN);
  };
  return op;
}

/// A resident: warpgroup `group`'s 64 rows of TMA's swizzled rows
/// [panels][rows][64], k contiguous. A k16 step inside a panel moves the
/// start by 32 bytes (the swizzle applies to the address bits; the 8-row
/// groups stay 1024-aligned).
InPlaceOperand inPlaceA(Emitter &e, const TileOperand &a, Value group,
                        int64_t depth, int64_t elementBytes) {
  auto type = cast<MemRefType>(a.resident.getType());
  assert(type.getRank() == 3 && type.getDimSize(2) == 64 &&
         type.getDimSize(0) * 64 >= depth && "swizzled K-major rows");
  int64_t panelBytes = type.getDimSize(1) * kRowBytes;
  Value row0 = e.mul(group, 64);
  if (a.residentRow0)
    row0 = e.add(row0, a.residentRow0);
  Value base = e.add(sharedAddress(e, a.resident), e.mul(row0, kRowBytes));
  InPlaceOperand op;
  op.depth = depth;
  op.at = [&e, base, panelBytes, elementBytes](int64_t ks) {
    Value at = e.add(base, e.idx((ks / 64) * panelBytes +
                                 (ks % 64) * elementBytes));
    return swizzledKMajorDescriptor(e, at);
  };
  return op;
}

} // namespace

Value swizzledKMajorDescriptor(Emitter &e, Value address) {
  return descriptor(e, address, 16, kGroupBytes, /*swizzle128=*/true);
}

Value swizzledNMajorDescriptor(Emitter &e, Value address, int64_t panelBytes) {
  return descriptor(e, address, panelBytes, kGroupBytes, /*swizzle128=*/true);
}

Value advanceDescriptor(Emitter &e, Value descriptor, int64_t bytes) {
  assert(bytes % 16 == 0 && "descriptors address 16-byte units");
  return arith::AddIOp::create(
      e.b, descriptor,
      arith::ConstantOp::create(e.b, e.b.getI64IntegerAttr(bytes / 16)));
}

/// wgmma.mma_async m64nNk16 with A from registers (NVVM's op takes two
/// descriptors only): inline PTX, the accumulators tied in and out, A's
/// fragment (vector<4x2xbf16|f16>, the mma.sync m16k16 layout of each
/// warp's 16 rows) as four b32 registers, B by descriptor.
Value wgmmaRegisterA(Emitter &e, Value d, Value fragment, Value descB,
                     int64_t n, Type mmaType, bool bKMajor) {
  auto structType = cast<LLVM::LLVMStructType>(d.getType());
  int64_t numAcc = structType.getBody().size();
  SmallVector<Value> operands;
  for (int64_t i = 0; i < numAcc; ++i)
    operands.push_back(
        LLVM::ExtractValueOp::create(e.b, d, ArrayRef<int64_t>{i}));
  auto wordType = VectorType::get({1}, e.b.getI32Type());
  for (int64_t r = 0; r < 4; ++r) {
    // Row r of the fragment: two elements, one b32 register.
    Value pair = vector::ExtractOp::create(e.b, fragment, ArrayRef<int64_t>{r});
    Value word = vector::BitCastOp::create(e.b, wordType, pair);
    operands.push_back(
        vector::ExtractOp::create(e.b, word, ArrayRef<int64_t>{0}));
  }
  operands.push_back(descB);

  std::string text, constraints;
  llvm::raw_string_ostream asmText(text), cons(constraints);
  StringRef type = mmaType.isBF16() ? "bf16" : "f16";
  asmText << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32." << type
          << "." << type << " {";
  for (int64_t i = 0; i < numAcc; ++i)
    asmText << (i ? ", " : "") << "$" << i;
  asmText << "}, {$" << 2 * numAcc << ", $" << 2 * numAcc + 1 << ", $"
          << 2 * numAcc + 2 << ", $" << 2 * numAcc + 3 << "}, $"
          << 2 * numAcc + 4 << ", 1, 1, 1, " << (bKMajor ? 0 : 1) << ";";
  // scale-d 1 (accumulate), A and B not negated, B transposed when N-major.
  for (int64_t i = 0; i < numAcc; ++i)
    cons << (i ? "," : "") << "=f";
  for (int64_t i = 0; i < numAcc; ++i)
    cons << "," << i;
  cons << ",r,r,r,r,l";
  auto op = LLVM::InlineAsmOp::create(
      e.b, structType, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      /*asm_dialect=*/LLVM::AsmDialectAttr(), /*operand_attrs=*/ArrayAttr());
  return op->getResult(0);
}

Value wgmmaAccumulators(Emitter &e, ValueRange fragments) {
  return toAccumulatorStruct(e, fragments);
}

Value wgmmaZeroAccumulators(Emitter &e, int64_t n) {
  auto fragType = VectorType::get({2, 2}, e.b.getF32Type());
  Value zero = arith::ConstantOp::create(
      e.b, fragType, DenseElementsAttr::get(fragType, e.b.getF32FloatAttr(0)));
  return toAccumulatorStruct(e, SmallVector<Value>(n / 8, zero));
}

SmallVector<Value> wgmmaFragments(Emitter &e, Value d, int64_t count) {
  return fromAccumulatorStruct(e, d, count);
}

SmallVector<Value> TileMatmul::accumulateWgmmaInPlace(ValueRange acc,
                                                      Value kBegin, Value kEnd,
                                                      const TileOperand &a,
                                                      const TileOperand &b) {
  bool registerA = static_cast<bool>(a.fragmentPair);
  assert(b.resident && !b.residentRow0 &&
         "wgmma in place: B resident from its first row");
  assert((registerA ? !a.resident
                    : a.resident && a.kContiguous && a.residentSwizzled) &&
         !a.kScalePair &&
         "wgmma in place: A as register fragments or swizzled k-major rows");
  assert(getConstantIntValue(kBegin) == 0 && "wgmma in place runs from k 0");
  (void)kBegin;
  InPlaceOperand opB = inPlaceB(e, b);
  int64_t depth = opB.depth;
  Value group = e.div(e.threadId(), e.idx(128));
  Value d = toAccumulatorStruct(e, acc);
  auto structType = d.getType();
  NVVM::WGMMATypes type = wgmmaType(mmaType);
  int64_t steps = depth / 16;
  if (!registerA) {
    InPlaceOperand opA = inPlaceA(e, a, group, depth,
                                  mmaType.getIntOrFloatBitWidth() / 8);
    auto shape = NVVM::MMAShapeAttr::get(e.b.getContext(), 64, tileN, 16);
    NVVM::WgmmaFenceAlignedOp::create(e.b);
    for (int64_t ks = 0; ks < depth; ks += 16) {
      Value descA = opA.at(ks), descB = opB.at(ks);
      d = NVVM::WgmmaMmaAsyncOp::create(
          e.b, structType, d, descA, descB, shape, type, type,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row,
          b.kContiguous ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          /*satfinite=*/nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
    return fromAccumulatorStruct(e, d, fragsN);
  }

  // A's fragments: warp w's rows 16w.. (warpgroup w / 4 holds rows
  // 64 (w / 4)..). A warp whose rows are all past kEnd or before the
  // diagonal for a step feeds zeros without computing them.
  Value m0 = e.mul(e.div(e.threadId(), e.idx(32)), 16);
  auto fragType = VectorType::get({4, 2}, mmaType);
  Value zeros = arith::ConstantOp::create(
      e.b, fragType, DenseElementsAttr::get(fragType, e.b.getZeroAttr(mmaType)));
  auto fragmentAt = [&](int64_t ks) -> Value {
    Value k = e.idx(ks);
    Value live = e.lt(k, kEnd);
    if (a.diagonal)
      live = e.andi(live, e.le(k, e.add(e.add(m0, e.idx(15)), a.diagonal)));
    return e.ifElse(
        live, TypeRange{fragType},
        [&]() -> SmallVector<Value> {
          return {computeFragmentA(a, m0, k, kEnd)};
        },
        [&]() -> SmallVector<Value> { return {zeros}; })[0];
  };
  // Every fragment first, then the steps back to back as one group
  // (measured 1-3% faster than a group per step with the next fragment
  // computed under it, see bench/NOTES-fused-gpu.md).
  SmallVector<Value> fragments;
  for (int64_t s = 0; s < steps; ++s)
    fragments.push_back(fragmentAt(16 * s));
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  for (int64_t s = 0; s < steps; ++s)
    d = wgmmaRegisterA(e, d, fragments[s], opB.at(16 * s), tileN, mmaType,
                       b.kContiguous);
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
  return fromAccumulatorStruct(e, d, fragsN);
}

SmallVector<Value> TileMatmul::wgmmaStep(ValueRange acc, Value viewA,
                                         bool aKMajor, Value viewB,
                                         bool bKMajor, Value stage,
                                         bool bResident, Value bK0,
                                         bool bSwizzled) {
  MLIRContext *ctx = e.b.getContext();
  int64_t perGroup = tileN / 2;
  int64_t bytes = mmaType.getIntOrFloatBitWidth() / 8;
  Value group = e.div(e.threadId(), e.idx(128));

  // A: the tile's 64 rows; this stage's slice.
  Value aBase =
      e.add(sharedAddress(e, viewA), e.mul(stage, tileM * tileK * bytes));
  int64_t aAlongK = aKMajor ? kCoreBytes : (tileM / 8) * kCoreBytes;
  int64_t aAlongM = aKMajor ? (tileK / 8) * kCoreBytes : kCoreBytes;
  // B: this warpgroup's perGroup rows (output columns), the descriptor of
  // k16 step `ks` of the slice. TMA's swizzled rows [panels][K][64] hold
  // them as panel `group` (perGroup 64, N-major): a k16 step moves the
  // start by 16 rows, 8-k groups are 1024 bytes apart, as in place
  // (inPlaceB). Core matrices: two along K per step.
  std::function<Value(int64_t)> descriptorB;
  if (bSwizzled) {
    auto type = cast<MemRefType>(viewB.getType());
    assert(bResident && !bKMajor && perGroup == 64 && type.getRank() == 3 &&
           type.getDimSize(2) == 64 && "swizzled N-major panels");
    int64_t panelBytes = type.getDimSize(1) * kRowBytes;
    Value panel = e.add(sharedAddress(e, viewB), e.mul(group, panelBytes));
    descriptorB = [&, panel, panelBytes](int64_t ks) {
      Value at = e.add(panel, e.mul(e.add(bK0, e.idx(ks)), kRowBytes));
      return descriptor(e, at, panelBytes, kGroupBytes, /*swizzle128=*/true);
    };
  } else {
    int64_t depthB = tileK;
    if (bResident)
      depthB = cast<MemRefType>(viewB.getType()).getDimSize(2) * 8;
    int64_t bAlongK = bKMajor ? kCoreBytes : (tileN / 8) * kCoreBytes;
    int64_t bAlongN = bKMajor ? (depthB / 8) * kCoreBytes : kCoreBytes;
    Value bBase = sharedAddress(e, viewB);
    if (!bResident)
      bBase = e.add(bBase, e.mul(stage, tileN * tileK * bytes));
    bBase = e.add(bBase, e.mul(group, (perGroup / 8) * bAlongN));
    descriptorB = [&, bBase, bAlongK, bAlongN](int64_t ks) {
      Value kB = bResident ? e.add(bK0, e.idx(ks)) : e.idx(ks);
      Value at = e.add(bBase, e.mul(e.div(kB, e.idx(8)), bAlongK));
      return matrixDescriptor(e, at, bAlongK, bAlongN);
    };
  }

  // Fragments j of the mma.sync layout are registers 4j .. 4j + 3.
  Value d = toAccumulatorStruct(e, acc);
  Type structType = d.getType();
  NVVM::WGMMATypes type = wgmmaType(mmaType);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, perGroup, 16);
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  for (int64_t ks = 0; ks < tileK; ks += 16) {
    // k16 = two core matrices along K.
    Value aAt = e.add(aBase, e.idx((ks / 8) * aAlongK));
    Value descA = matrixDescriptor(e, aAt, aAlongK, aAlongM);
    Value descB = descriptorB(ks);
    d = NVVM::WgmmaMmaAsyncOp::create(
        e.b, structType, d, descA, descB, shape, type, type,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        aKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
  return fromAccumulatorStruct(e, d, fragsN);
}

} // namespace gpu_lowering
} // namespace ssd
