//===- CPUBackend.cpp - ssd-run --backend cpu -----------------------------===//
#include "CPUBackend.h"

#include "CaseModule.h"
#include "HostBuffer.h"

#include "ssd/InitAllDialects.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <chrono>
#include <functional>

#ifdef SSD_HAVE_CPU_PIPELINE
#include "ssd/Conversion/Pipelines.h"
#endif

using namespace mlir;
using namespace ssd;

/// The stack of the thread that runs the compiled code. The lowering may
/// place sizeable temporaries on the stack; the address space is reserved,
/// not committed, so a generous size costs nothing.
static constexpr unsigned kKernelStackSize = 1u << 30;

bool ssd::cpuBackendAvailable() {
#ifdef SSD_HAVE_CPU_PIPELINE
  return true;
#else
  return false;
#endif
}

namespace {
/// An MLIR context with every dialect the pipeline may produce, and the
/// diagnostics it emits collected as text.
class Session {
public:
  Session() : context(makeRegistry()) {
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(diagnostics);
          os << (diagnostics.empty() ? "" : "\n") << diag.getLocation() << ": "
             << diag;
          for (const Diagnostic &note : diag.getNotes())
            os << "\n  note: " << note;
          return success();
        });
  }

  llvm::Error fail(const llvm::Twine &what) {
    std::string text = what.str();
    if (!diagnostics.empty())
      text += ":\n" + diagnostics;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
  }

  MLIRContext context;
  std::string diagnostics;

private:
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    ssd::registerAllDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    return registry;
  }

  std::unique_ptr<ScopedDiagnosticHandler> handler;
};
} // namespace

static llvm::Expected<OwningOpRef<ModuleOp>>
buildAndLower(Session &session, const SSDCase &c, const RunConfig &config,
              bool lower) {
  OwningOpRef<ModuleOp> module = buildCaseModule(session.context, c, config);
  if (failed(verify(*module)))
    return session.fail("the generated module does not verify");
  if (!lower)
    return std::move(module);
#ifdef SSD_HAVE_CPU_PIPELINE
  PassManager pm(&session.context);
  CPUPipelineOptions pipelineOptions;
  pipelineOptions.parallel = config.threads > 0;
  pipelineOptions.threads = config.threads;
  buildCPUPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return session.fail("the CPU lowering failed");
  return std::move(module);
#else
  return session.fail("the CPU lowering is not built in this configuration");
#endif
}

static llvm::Error printModule(const SSDCase &c, const RunConfig &config,
                               bool lowered, llvm::raw_ostream &os) {
  Session session;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildAndLower(session, c, config, lowered);
  if (!module)
    return module.takeError();
  (*module)->print(os);
  os << "\n";
  return llvm::Error::success();
}

static llvm::Expected<RunOutputs> runCompiled(const SSDCase &c,
                                              const RunConfig &config) {
  Session session;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      buildAndLower(session, c, config, /*lower=*/true);
  if (!module)
    return module.takeError();

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // options.transformer is a function_ref: the function must outlive it.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  // MLIR's runtime helpers (memrefCopy for non-contiguous copies, ...).
  SmallVector<StringRef> libs;
#ifdef SSD_MLIR_C_RUNNER_UTILS
  if (llvm::sys::fs::exists(SSD_MLIR_C_RUNNER_UTILS))
    libs.push_back(SSD_MLIR_C_RUNNER_UTILS);
#endif
#ifdef SSD_MLIR_ASYNC_RUNTIME
  if (config.threads > 0) {
    if (!llvm::sys::fs::exists(SSD_MLIR_ASYNC_RUNTIME))
      return session.fail("--threads needs " SSD_MLIR_ASYNC_RUNTIME);
    libs.push_back(SSD_MLIR_ASYNC_RUNTIME);
  }
#else
  if (config.threads > 0)
    return session.fail("--threads: MLIR's async runtime library was not "
                        "found at build time");
#endif
  options.sharedLibPaths = libs;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(**module, options);
  if (!engine)
    return session.fail("JIT compilation failed: " +
                        llvm::toString(engine.takeError()));

  // One host buffer per memref argument; the C interface takes a pointer to
  // each descriptor, and the packed entry point a pointer to each pointer.
  std::vector<KernelArg> args = caseKernelArgs(c, config);
  std::vector<HostBuffer> buffers;
  buffers.reserve(args.size());
  for (const KernelArg &arg : args) {
    HostBuffer &buffer = buffers.emplace_back(arg);
    if (arg.isOutput)
      continue;
    if (arg.name == "seq_idx")
      buffer.store(c.seqIdx.data);
    else if (arg.name == "cu_seqlens")
      buffer.store(c.cuSeqlens.data);
    else
      buffer.store(arg.name == "x"         ? c.x.data
                   : arg.name == "dt"      ? c.dt.data
                   : arg.name == "A"       ? c.A.data
                   : arg.name == "B"       ? c.B.data
                   : arg.name == "C"       ? c.C.data
                   : arg.name == "D"       ? c.D.data
                   : arg.name == "z"       ? c.z.data
                   : arg.name == "dt_bias" ? c.dtBias.data
                                           : c.initialStates.data);
  }
  std::vector<void *> descriptors, packed;
  for (HostBuffer &buffer : buffers)
    descriptors.push_back(buffer.descriptor());
  for (void *&descriptor : descriptors)
    packed.push_back(&descriptor);
  llvm::SmallVector<void *> packedArgs(packed.begin(), packed.end());
  std::string entry = ("_mlir_ciface_" + kCaseFunctionName).str();
  std::string failure;
  std::vector<double> runMs;
  llvm::thread worker(std::optional<unsigned>(kKernelStackSize), [&] {
    for (int64_t i = 0;
         i < std::max<int64_t>(config.repeat, 1) && failure.empty(); ++i) {
      auto start = std::chrono::steady_clock::now();
      if (llvm::Error err = (*engine)->invokePacked(entry, packedArgs))
        failure = llvm::toString(std::move(err));
      runMs.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
  });
  worker.join();
  if (!failure.empty())
    return session.fail("running " + entry + " failed: " + failure);

  RunOutputs outputs;
  outputs.y = buffers[buffers.size() - 2].load();
  outputs.finalStates = buffers.back().load();
  outputs.runMs = std::move(runMs);
  return outputs;
}

rt::Status ssd::printCaseModule(const SSDCase &c, const RunConfig &config,
                                bool lowered) {
  if (llvm::Error err = printModule(c, config, lowered, llvm::outs()))
    return rt::Status::error(llvm::toString(std::move(err)));
  llvm::outs().flush();
  return rt::Status::success();
}

rt::Expected<RunOutputs> ssd::runCPUBackend(const SSDCase &c,
                                            const RunConfig &config) {
  llvm::Expected<RunOutputs> outputs = runCompiled(c, config);
  if (!outputs)
    return rt::Status::error(llvm::toString(outputs.takeError()));
  return std::move(*outputs);
}
