//===- Layer.cpp - compile and run whole SSD layers from C ----------------===//
//
// The CPU kernel is the layer's memref function (LayerModule.h, dynamic b,
// L and sequence count) compiled by CpuJit.h, as ssd-run's CPU backend
// compiles a case. Unlike ssd-run it compiles once and runs many times on
// the caller's buffers, so every tensor is checked here against the
// function's argument list before a run.
//
//===----------------------------------------------------------------------===//
#include "ssd-c/Layer.h"

#include "ssd/Compile/Artifact.h"
#include "ssd/Compile/LayerModule.h"
#include "ssd/Reference/Reference.h"
#include "ssd/Support/Case.h"
#include "ssd/Support/LayerSpec.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#ifdef SSD_HAVE_CPU_PIPELINE
#include "ssd/CpuJit/CpuJit.h"
#endif

using namespace mlir;
using namespace ssd;

namespace {
constexpr const char *kFunctionName = "ssd_layer";

int fail(char **error, const std::string &message) {
  if (error) {
    *error = static_cast<char *>(std::malloc(message.size() + 1));
    if (*error)
      std::memcpy(*error, message.c_str(), message.size() + 1);
  }
  return -1;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

const char *dtypeName(SsdRtDType dtype) {
  switch (dtype) {
  case SSD_RT_F32:
    return "f32";
  case SSD_RT_F16:
    return "f16";
  case SSD_RT_BF16:
    return "bf16";
  case SSD_RT_F64:
    return "f64";
  case SSD_RT_I8:
    return "i8";
  case SSD_RT_U8:
    return "u8";
  case SSD_RT_I32:
    return "i32";
  case SSD_RT_I64:
    return "i64";
  }
  return "unknown";
}

size_t dtypeBytes(SsdRtDType dtype) {
  switch (dtype) {
  case SSD_RT_F16:
  case SSD_RT_BF16:
    return 2;
  case SSD_RT_F64:
  case SSD_RT_I64:
    return 8;
  case SSD_RT_I8:
  case SSD_RT_U8:
    return 1;
  default:
    return 4;
  }
}

/// The LayerSpec of a C spec, validated; "" or the problem.
std::string toLayerSpec(const SsdLayerSpec *in, LayerSpec &spec) {
  if (!in)
    return "the layer spec is null";
  spec.nheads = in->nheads;
  spec.headdim = in->headdim;
  spec.dstate = in->dstate;
  spec.ngroups = in->ngroups;
  spec.chunkSize = in->chunkSize;
  // Names outside the enum are refused with validateLayerSpec's words.
  std::optional<artifact::DType> dtype =
      artifact::parseDType(in->dtype ? in->dtype : "f32");
  if (!dtype)
    return std::string("dtype '") + in->dtype +
           "' is not one of f32, bf16, f16";
  std::optional<artifact::DType> stateDtype =
      artifact::parseDType(in->stateDtype ? in->stateDtype : "f32");
  if (!stateDtype)
    return std::string("state dtype '") + in->stateDtype +
           "' is not one of f32, f16";
  spec.dtype = *dtype;
  spec.stateDtype = *stateDtype;
  if (in->features)
    if (std::string err = parseFeatures(in->features, spec); !err.empty())
      return err;
  if (spec.has("dt_limit")) {
    spec.dtLimitLo = in->dtLimitLo;
    spec.dtLimitHi = in->dtLimitHi;
  }
  return validateLayerSpec(spec);
}

/// The tensors of a call by name; "" or the problem (an unknown or
/// repeated name, a malformed entry).
std::string indexTensors(const SsdHostTensor *tensors, size_t count,
                         std::map<std::string, const SsdHostTensor *> &out) {
  if (count && !tensors)
    return "the tensor array is null";
  for (size_t i = 0; i < count; ++i) {
    const SsdHostTensor &t = tensors[i];
    if (!t.name)
      return "tensor " + std::to_string(i) + " has no name";
    const std::vector<std::string> &known = caseInputNames();
    std::string name = t.name;
    if (std::find(known.begin(), known.end(), name) == known.end() &&
        name != "y" && name != "final_states")
      return "unknown tensor '" + name + "'";
    if (!out.emplace(name, &t).second)
      return "tensor '" + name + "' is given twice";
    if (t.rank < 0 || t.rank > 8 || (t.rank && !t.shape))
      return "tensor '" + name + "': bad rank " + std::to_string(t.rank) +
             " or null shape";
    for (int32_t d = 0; d < t.rank; ++d)
      if (t.shape[d] < 0)
        return "tensor '" + name + "': negative size in shape";
  }
  return "";
}

std::vector<int64_t> shapeOf(const SsdHostTensor &t) {
  return std::vector<int64_t>(t.shape, t.shape + t.rank);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

/// One memref argument of the compiled function: its name, its shape with
/// kDynamic for b, L or the sequence count, its element type.
struct ArgSpec {
  std::string name;
  std::vector<int64_t> shape;
  SsdRtDType dtype;
};

/// Checks cu_seqlens' values: the kernel indexes the tokens with them.
std::string checkCuSeqlens(const int32_t *cu, int64_t count, int64_t seqlen) {
  if (count < 2)
    return "tensor 'cu_seqlens': shape (" + std::to_string(count) +
           ",) must be (num_seqs + 1,) with at least one sequence";
  if (cu[0] != 0)
    return "tensor 'cu_seqlens': must start at 0, starts at " +
           std::to_string(cu[0]);
  for (int64_t i = 1; i < count; ++i)
    if (cu[i] < cu[i - 1])
      return "tensor 'cu_seqlens': must be non-decreasing, element " +
             std::to_string(i) + " is " + std::to_string(cu[i]) + " after " +
             std::to_string(cu[i - 1]);
  if (cu[count - 1] != seqlen)
    return "tensor 'cu_seqlens': must end at seqlen " + std::to_string(seqlen) +
           ", ends at " + std::to_string(cu[count - 1]);
  return "";
}
} // namespace

struct SsdCpuKernelImpl {
  LayerSpec spec;
  std::vector<ArgSpec> args;
  // Declared before the engine, so destroyed after it.
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ExecutionEngine> engine;
};

extern "C" {

void ssdLayerFreeMessage(char *message) { std::free(message); }

int ssdLayerSpecValidate(const SsdLayerSpec *spec, char **error) {
  LayerSpec layer;
  if (std::string err = toLayerSpec(spec, layer); !err.empty())
    return fail(error, err);
  return 0;
}

int ssdCpuKernelCreate(const SsdLayerSpec *cspec, int32_t threads,
                       SsdCpuKernel *kernel, char **error) {
  if (!kernel)
    return fail(error, "the kernel out-parameter is null");
  *kernel = nullptr;
  auto impl = std::make_unique<SsdCpuKernelImpl>();
  if (std::string err = toLayerSpec(cspec, impl->spec); !err.empty())
    return fail(error, err);
  if (threads < 0)
    return fail(error, "threads must be >= 0, got " + std::to_string(threads));
#ifndef SSD_HAVE_CPU_PIPELINE
  return fail(error, "this build of libSSDCAPI has no CPU pipeline");
#else
  impl->context = std::make_unique<MLIRContext>(cpuJitRegistry());
  MLIRContext &context = *impl->context;
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << (diagnostics.empty() ? "" : "\n") << diag.getLocation() << ": "
       << diag;
    return success();
  });
  auto withDiagnostics = [&](const std::string &what) {
    return diagnostics.empty() ? what : what + ":\n" + diagnostics;
  };

  LayerShape shape; // b, L and the sequence count dynamic
  for (const LayerArg &arg :
       layerArgs(context, impl->spec, shape, LayerABI::Memref)) {
    SsdRtDType dtype = arg.elementType.isInteger(32) ? SSD_RT_I32
                       : arg.elementType.isBF16()    ? SSD_RT_BF16
                       : arg.elementType.isF16()     ? SSD_RT_F16
                                                     : SSD_RT_F32;
    impl->args.push_back({arg.name, arg.shape, dtype});
  }
  OwningOpRef<ModuleOp> module =
      buildLayerModule(context, impl->spec, shape, LayerABI::Memref,
                       kFunctionName, UnknownLoc::get(&context));
  if (failed(verify(*module)))
    return fail(error, withDiagnostics("the layer's module does not verify"));
  if (failed(lowerForCpu(*module, threads)))
    return fail(error, withDiagnostics("the CPU lowering failed"));
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      compileForCpu(*module, threads);
  if (!engine)
    return fail(error, withDiagnostics(llvm::toString(engine.takeError())));
  impl->engine = std::move(*engine);
  *kernel = impl.release();
  return 0;
#endif
}

void ssdCpuKernelDestroy(SsdCpuKernel kernel) { delete kernel; }

int ssdCpuKernelRun(SsdCpuKernel kernel, const SsdHostTensor *tensors,
                    size_t numTensors, char **error) {
  if (!kernel)
    return fail(error, "the kernel is null");
  std::map<std::string, const SsdHostTensor *> given;
  if (std::string err = indexTensors(tensors, numTensors, given); !err.empty())
    return fail(error, err);
  const LayerSpec &spec = kernel->spec;
  bool varlen = spec.has("varlen");
  for (const auto &[name, t] : given) {
    bool known = false;
    for (const ArgSpec &arg : kernel->args)
      known |= arg.name == name;
    if (!known)
      return fail(error, "tensor '" + name +
                             "' is not an argument of this layer (features: " +
                             joinFeatures(spec.features) + ")");
  }

  // b and L from x; the sequence count from cu_seqlens.
  auto x = given.find("x");
  if (x == given.end())
    return fail(error, "tensor 'x' is missing");
  if (x->second->rank != 4)
    return fail(error, "tensor 'x': rank " + std::to_string(x->second->rank) +
                           ", expected 4 (b, L, h, p)");
  int64_t b = x->second->shape[0], L = x->second->shape[1], s = 0;
  if (varlen) {
    auto cu = given.find("cu_seqlens");
    if (cu == given.end())
      return fail(error, "tensor 'cu_seqlens' is missing");
    if (cu->second->rank != 1)
      return fail(error, "tensor 'cu_seqlens': rank " +
                             std::to_string(cu->second->rank) + ", expected 1");
    s = cu->second->shape[0] - 1;
  }

  struct Descriptor {
    std::vector<int64_t> words;
  };
  std::vector<Descriptor> descriptors;
  static int64_t emptyStorage[1];
  for (const ArgSpec &arg : kernel->args) {
    auto it = given.find(arg.name);
    if (it == given.end())
      return fail(error, "tensor '" + arg.name + "' is missing");
    const SsdHostTensor &t = *it->second;
    if (t.dtype != arg.dtype)
      return fail(error, "tensor '" + arg.name + "': dtype " +
                             dtypeName(t.dtype) + ", expected " +
                             dtypeName(arg.dtype));
    if (t.rank != static_cast<int32_t>(arg.shape.size()))
      return fail(error, "tensor '" + arg.name + "': rank " +
                             std::to_string(t.rank) + ", expected " +
                             std::to_string(arg.shape.size()));
    std::vector<int64_t> expected = arg.shape;
    for (size_t d = 0; d < expected.size(); ++d) {
      if (!ShapedType::isDynamic(expected[d]))
        continue;
      bool states = arg.name == "initial_states" || arg.name == "final_states";
      if (arg.name == "cu_seqlens")
        expected[d] = s + 1;
      else if (states)
        expected[d] = varlen ? s : b;
      else
        expected[d] = d == 0 ? b : L;
    }
    std::vector<int64_t> shape = shapeOf(t);
    if (shape != expected)
      return fail(error, "tensor '" + arg.name + "': shape " +
                             shapeText(shape) + ", expected " +
                             shapeText(expected));
    int64_t count = numElements(shape);
    if (count && !t.data)
      return fail(error, "tensor '" + arg.name + "': null data pointer");
    if (arg.name == "cu_seqlens")
      if (std::string err = checkCuSeqlens(static_cast<int32_t *>(t.data),
                                           count, L);
          !err.empty())
        return fail(error, err);
    // {allocated, aligned, offset, sizes, strides}: MLIR's C interface.
    Descriptor desc;
    auto base = reinterpret_cast<intptr_t>(count ? t.data : emptyStorage);
    desc.words = {base, base, 0};
    desc.words.insert(desc.words.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * std::max<int64_t>(shape[d], 1);
    desc.words.insert(desc.words.end(), strides.begin(), strides.end());
    descriptors.push_back(std::move(desc));
  }

  // No token: every state passes through unchanged (the kernel is not
  // called on empty extents).
  if (b == 0 || L == 0) {
    const SsdHostTensor &out = *given["final_states"];
    size_t bytes = numElements(shapeOf(out)) * dtypeBytes(out.dtype);
    auto init = given.find("initial_states");
    if (init != given.end() && bytes)
      std::memmove(out.data, init->second->data, bytes);
    else if (bytes)
      std::memset(out.data, 0, bytes);
    return 0;
  }

  std::vector<void *> pointers;
  for (Descriptor &d : descriptors)
    pointers.push_back(d.words.data());
  SmallVector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  std::string entry = std::string("_mlir_ciface_") + kFunctionName;
  std::string failure;
#ifdef SSD_HAVE_CPU_PIPELINE
  runOnKernelStack([&] {
    if (llvm::Error err = kernel->engine->invokePacked(entry, packed))
      failure = llvm::toString(std::move(err));
  });
#endif
  if (!failure.empty())
    return fail(error, "running " + entry + " failed: " + failure);
  return 0;
}

int ssdLayerCompileArtifact(const SsdLayerSpec *cspec, const char *target,
                            const char *strategy, const char *outDir,
                            char **error) {
  LayerSpec spec;
  if (std::string err = toLayerSpec(cspec, spec); !err.empty())
    return fail(error, err);
  if (!outDir || !*outDir)
    return fail(error, "no output folder given");
  CompileOptions options;
  if (target)
    options.target = target;
  if (strategy)
    options.strategy = strategy;
  if (std::optional<CompileError> err = compileLayer(spec, options, outDir))
    return fail(error, err->message);
  return 0;
}

int ssdLayerReference(const SsdLayerSpec *cspec, const SsdHostTensor *tensors,
                      size_t numTensors, double *y, double *finalStates,
                      char **error) {
  LayerSpec spec;
  if (std::string err = toLayerSpec(cspec, spec); !err.empty())
    return fail(error, err);
  std::map<std::string, const SsdHostTensor *> given;
  if (std::string err = indexTensors(tensors, numTensors, given); !err.empty())
    return fail(error, err);
  auto x = given.find("x");
  if (x == given.end() || x->second->rank != 4)
    return fail(error, "tensor 'x' (b, L, h, p) is missing");
  SSDCase c;
  c.name = "reference";
  c.batch = x->second->shape[0];
  c.seqlen = x->second->shape[1];
  c.nheads = spec.nheads;
  c.headdim = spec.headdim;
  c.dstate = spec.dstate;
  c.ngroups = spec.ngroups;
  c.dtSoftplus = spec.has("softplus");
  c.dtLimitLo = spec.dtLimitLo;
  c.dtLimitHi = spec.dtLimitHi;
  for (const auto &[name, t] : given) {
    if (name == "y" || name == "final_states")
      return fail(error, "tensor '" + name + "' is an output; pass y and "
                                             "finalStates as arrays");
    int64_t count = numElements(shapeOf(*t));
    if (count && !t->data)
      return fail(error, "tensor '" + name + "': null data pointer");
    bool integer = name == "seq_idx" || name == "cu_seqlens";
    SsdRtDType want = integer ? SSD_RT_I32 : SSD_RT_F32;
    if (t->dtype != want)
      return fail(error, "tensor '" + name + "': dtype " +
                             dtypeName(t->dtype) + ", expected " +
                             dtypeName(want));
    if (integer) {
      IntTensor &dst = name == "seq_idx" ? c.seqIdx : c.cuSeqlens;
      dst.shape = shapeOf(*t);
      auto *src = static_cast<const int32_t *>(t->data);
      dst.data.assign(src, src + count);
      continue;
    }
    FloatTensor *dst = name == "x"         ? &c.x
                       : name == "dt"      ? &c.dt
                       : name == "A"       ? &c.A
                       : name == "B"       ? &c.B
                       : name == "C"       ? &c.C
                       : name == "D"       ? &c.D
                       : name == "z"       ? &c.z
                       : name == "dt_bias" ? &c.dtBias
                                           : &c.initialStates;
    dst->shape = shapeOf(*t);
    auto *src = static_cast<const float *>(t->data);
    dst->data.assign(src, src + count);
  }
  if (artifact::Status status = validateCase(c, ""); !status.ok())
    return fail(error, status.message());
  if (!y || !finalStates)
    return fail(error, "the output arrays are null");
  ReferenceResult result = runReference(c);
  std::copy(result.y.begin(), result.y.end(), y);
  std::copy(result.finalStates.begin(), result.finalStates.end(), finalStates);
  return 0;
}

} // extern "C"
