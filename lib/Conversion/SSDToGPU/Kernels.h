//===- Kernels.h - the unfused SSD GPU kernels ------------------*- C++ -*-===//
//
// SSDProblem is what the pass learns from the function: the step ops, the
// sizes the kernels specialise on (h, p, g, n, Q), the element types, the
// optional inputs present, and which function argument is which tensor.
// Each kernel builder appends one gpu.func to the gpu.module and returns a
// KernelInfo: its launch geometry and parameter list, from which both the
// gpu.func signature and the `ssd.launch` entry are made, so the two cannot
// disagree.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_KERNELS_H
#define SSD_LIB_CONVERSION_SSDTOGPU_KERNELS_H

#include "Emit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>

namespace ssd {
namespace gpu_lowering {

/// A tensor or workspace the kernels read or write, as the manifest names
/// it, with its tensor type (dynamic b, L, nc, s) and symbolic shape.
struct BufferSpec {
  std::string name;
  mlir::RankedTensorType type;
  llvm::SmallVector<std::string> shape; // per dimension: a number or symbol
  bool output = false;                  // tensors: y, final_states
  bool isWorkspace = false;

  /// x, dt, B, C and z may be strided views (a model's in_proj split hands
  /// them out of one projection buffer): every stride but the innermost is
  /// a kernel argument, and the manifest asks only for a dense innermost
  /// dimension.
  bool acceptsViews() const {
    return !isWorkspace && llvm::is_contained({"x", "dt", "B", "C", "z"},
                                              llvm::StringRef(name));
  }

  /// The kernels' parameter type: the buffer as a memref, with dynamic outer
  /// strides where it accepts views.
  mlir::MemRefType memrefType() const;
};

struct SSDProblem {
  mlir::func::FuncOp func;
  ChunkCumsumOp cumsum;
  BmmOp bmm;
  ChunkStateOp chunkState;
  StatePassingOp statePassing;
  ChunkScanOp chunkScan;

  int64_t heads = 0, headDim = 0, groups = 0, state = 0, chunk = 0;
  mlir::Type elementType;    // x, B, C, z, y
  mlir::Type stateType;      // initial/final states, passed states
  mlir::Type chunkStateType; // chunk_state result
  bool softplus = false;
  double dtLow = 0.0, dtHigh = 0.0; // dtHigh = +inf when unbounded
  bool perChannelD = false;

  /// Tensors (canonical names, in manifest order) and workspaces.
  llvm::SmallVector<BufferSpec> buffers;
  /// Symbols and their definitions for the manifest's `derived`.
  llvm::SmallVector<std::pair<std::string, std::string>> derived;
  /// Manifest expressions of the symbolic sizes ("b" or "2", "L", "nc").
  std::string batchExpr, chunksExpr;

  bool has(llvm::StringRef name) const { return find(name) != nullptr; }
  const BufferSpec *find(llvm::StringRef name) const;
  BufferSpec *find(llvm::StringRef name) {
    return const_cast<BufferSpec *>(std::as_const(*this).find(name));
  }
  bool isVarlen() const { return has("cu_seqlens"); }
  bool hasSeqIdx() const { return has("seq_idx"); }
  /// Whether the matrix products run on tensor cores.
  bool useMma = false;
};

/// The largest headdim and dstate the GPU kernels take (models use up to
/// 128 and 256).
inline constexpr int64_t kMaxHeadDim = 256;
inline constexpr int64_t kMaxDState = 256;
/// The dynamic shared memory one block may hold on sm_90 (227 KB, with the
/// opt-in attribute the runtime sets).
inline constexpr int64_t kMaxSharedBytesPerBlock = 232448;
/// Shared memory of a SM on sm_90 (228 KB), of which the driver reserves 1
/// KB a resident block: blocks that share a SM divide the rest.
inline constexpr int64_t kMaxSharedBytesPerSM = 233472,
                         kReservedSharedBytes = 1024;
/// The shared memory one block may hold so that `blocksPerSM` blocks
/// share a SM.
constexpr int64_t sharedBytesPerBlock(int64_t blocksPerSM) {
  return kMaxSharedBytesPerSM / blocksPerSM - kReservedSharedBytes;
}
/// The most heads: a kernel grid dimension holds the heads alone (CUDA's
/// limit on grid y and z), and larger counts overflow the workspace sizes.
inline constexpr int64_t kMaxHeads = 65535;

/// The manifest's name of an element type: f32, bf16, f16, i32, i64
/// (else "unknown").
llvm::StringRef dtypeName(mlir::Type t);

/// Why the GPU kernels cannot take the problem's static sizes (chunk size,
/// headdim, dstate, nheads), naming the size and the limit; empty when they
/// can.
std::string unsupportedSizes(const SSDProblem &p);

/// Reads the problem off the module's single function, or emits an error
/// on the offending op and fails.
mlir::FailureOr<SSDProblem> analyzeProblem(mlir::ModuleOp module);

/// Why the GPU kernels cannot take chunk size `chunk` (they tile a chunk in
/// edges of 16 rows, up to 1024), e.g. "chunk size 8 is below 16"; empty
/// when they can.
std::string unsupportedChunkSize(int64_t chunk);

/// One kernel parameter: a tensor or workspace passed as an expanded memref
/// descriptor, or (tmaBox set) a TMA descriptor of tensor `name`, which the
/// runtime encodes and passes by value (a grid-constant parameter: see
/// ssd-tma-descriptors-by-value).
struct KernelParam {
  std::string name;
  bool isWorkspace = false;
  /// The box of one copy, outermost dimension first (TMA boxes have at
  /// most 5 dimensions).
  llvm::SmallVector<int64_t, 5> tmaBox;
  /// The box's rows in the 128-byte swizzle (else unswizzled).
  bool tmaSwizzled = true;
  /// -1, or the manifest's panel_dim: the map reads the innermost dimension
  /// as panels of tmaBox.back() elements and one copy brings them all, the
  /// panel index a dimension just outside dimension tmaPanelDim.
  int32_t tmaPanelDim = -1;
};

/// The kernel attributes that tell ssd-tma-descriptors-by-value which lowered
/// arguments are TMA descriptors, and how many lowered arguments there are.
inline constexpr llvm::StringLiteral kTmaDescriptorsAttrName =
    "ssd.tma_descriptors";
inline constexpr llvm::StringLiteral kLoweredArgCountAttrName =
    "ssd.lowered_arg_count";

/// The KernelFunc::args key of the TMA descriptor of tensor `name`.
inline std::string tmaArgName(llvm::StringRef name) {
  return (name + ".tma").str();
}

struct KernelInfo {
  std::string name;
  llvm::SmallVector<std::string> grid;
  int64_t block = 256;
  int64_t sharedMemory = 0; // dynamic bytes; static shared is in the cubin
  /// Blocks of a thread block cluster along x (the manifest's `cluster`,
  /// written where above 1).
  int64_t cluster = 1;
  llvm::SmallVector<KernelParam> params;
  /// The manifest's launch condition (an expression; empty: always).
  std::string when;
};

/// A gpu.func under construction: its arguments by buffer name.
struct KernelFunc {
  mlir::gpu::GPUFuncOp func;
  llvm::StringMap<Value> args;
  Value arg(llvm::StringRef name) const { return args.lookup(name); }
  bool has(llvm::StringRef name) const { return args.count(name); }
  /// Adds a workgroup (shared memory) buffer.
  Value sharedBuffer(llvm::ArrayRef<int64_t> shape, Type element);

  /// The dynamic shared arena: once enabled, sharedBuffer returns views of
  /// the kernel's dynamic shared memory at increasing offsets instead of
  /// static attributions, so that code which never runs at once (the item
  /// kinds of the fused kernel) can reuse the same bytes and the kernel can
  /// exceed the 48 KB static limit. `sharedBytes` is the launch size.
  void useSharedArena();
  /// A `bytes`-byte i8 buffer of the arena whose shared-memory address is a
  /// multiple of `align` (a power of two above 16): the arena's base is only
  /// 16-byte aligned, so the buffer is placed at run time, holding up to
  /// align - 16 more bytes.
  Value sharedBufferAligned(int64_t bytes, int64_t align);
  int64_t sharedMark() const { return arenaOffset; }
  /// Frees every buffer added since `mark` (their bytes get reused).
  void sharedRelease(int64_t mark) { arenaOffset = mark; }
  int64_t sharedBytes() const { return arenaPeak; }

private:
  Value arenaBase; // gpu.dynamic_shared_memory, null without an arena
  int64_t arenaOffset = 0, arenaPeak = 0;
};

/// Appends `gpu.module @ssd_kernels`, compiled for NVVM target `chip` with
/// PTX `features` at -O3, to `module`, marks `module` as its container and
/// leaves `b` at the end of `module`.
mlir::gpu::GPUModuleOp createKernelModule(mlir::ImplicitLocOpBuilder &b,
                                          mlir::ModuleOp module,
                                          llvm::StringRef chip,
                                          llvm::StringRef features);

/// The kernel of a test pass: gpu.func `name` in `module` taking
/// `argTypes`, marked as a kernel of `threads` threads, with a register
/// budget ptxas knows (nvvm.minctasm 1) where `setsMaxRegisters` (setmaxnreg
/// takes effect only with one); `b` is left at the start of its body,
/// before gpu.return.
mlir::gpu::GPUFuncOp createTestKernel(mlir::ImplicitLocOpBuilder &b,
                                      mlir::gpu::GPUModuleOp module,
                                      llvm::StringRef name,
                                      mlir::TypeRange argTypes, int64_t threads,
                                      bool setsMaxRegisters);

/// Creates the gpu.func `info.name` with one memref argument per parameter
/// (the buffer's type as a memref), marked as a kernel with a known block
/// size, and positions `b` at the start of its body (before gpu.return).
KernelFunc createKernel(mlir::ImplicitLocOpBuilder &b,
                        mlir::gpu::GPUModuleOp module, const SSDProblem &p,
                        const KernelInfo &info);

/// Records on `func` which of its lowered arguments are TMA descriptor
/// pointers (for ssd-tma-descriptors-by-value); call again after adding one.
void recordTmaDescriptorPositions(mlir::gpu::GPUFuncOp func);

/// Token range of one chunk on the device.
struct ChunkRange {
  Value start; // first token
  Value len;   // valid tokens (0 for an unused varlen chunk)
};

/// dt processing of one token: bias, softplus (identity above 20; libm's
/// log1p(exp) for f32 layers, on the special-function unit for 16-bit ones,
/// Emitter::softplusApprox), clamp to dt_limit; one formula for every GPU
/// kernel of a layer so that the strategies agree.
Value processDt(Emitter &e, const SSDProblem &p, Value dt, Value bias);

/// The tokens of chunk `c` of a row of `seqLen` tokens: [cQ, cQ+Q) cut at L,
/// or with cu_seqlens the chunk table walked over the sequences (chunks
/// never straddle sequences; each sequence owns ceil(len/Q) chunks).
ChunkRange chunkRange(Emitter &e, const SSDProblem &p, Value c, Value seqLen,
                      Value numChunks, Value cuSeqlens);

/// With seq_idx: the last real token of chunk c, and the token just before
/// the chunk (token 0 for chunk 0).
Value lastTokenOf(Emitter &e, const SSDProblem &p, Value c, Value seqLen);
Value tokenBefore(Emitter &e, const SSDProblem &p, Value c);

// The five kernels.
KernelInfo buildChunkCumsumKernel(mlir::ImplicitLocOpBuilder &b,
                                  mlir::gpu::GPUModuleOp module,
                                  const SSDProblem &p);
KernelInfo buildBmmKernel(mlir::ImplicitLocOpBuilder &b,
                          mlir::gpu::GPUModuleOp module, const SSDProblem &p);
KernelInfo buildChunkStateKernel(mlir::ImplicitLocOpBuilder &b,
                                 mlir::gpu::GPUModuleOp module,
                                 const SSDProblem &p);
KernelInfo buildStatePassingKernel(mlir::ImplicitLocOpBuilder &b,
                                   mlir::gpu::GPUModuleOp module,
                                   const SSDProblem &p);
KernelInfo buildChunkScanKernel(mlir::ImplicitLocOpBuilder &b,
                                mlir::gpu::GPUModuleOp module,
                                const SSDProblem &p);

/// The `ssd.launch` dictionary (docs/runtime.md's manifest, less the parts
/// ssd-compile fills in: format, target, compiler).
mlir::DictionaryAttr buildLaunchAttr(mlir::MLIRContext *ctx,
                                     const SSDProblem &p,
                                     llvm::ArrayRef<KernelInfo> kernels);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_KERNELS_H
