//===- CPUBackend.cpp - ssd-run --backend cpu -----------------------------===//
#include "CPUBackend.h"

#include "CaseModule.h"
#include "HostBuffer.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <algorithm>
#include <chrono>

#ifdef SSD_HAVE_CPU_PIPELINE
#include "ssd/CpuJit/CpuJit.h"
#else
#include "ssd/InitAllDialects.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#endif

using namespace mlir;
using namespace ssd;

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
#ifdef SSD_HAVE_CPU_PIPELINE
    return cpuJitRegistry();
#else
    // Printing the case's module needs the dialects only.
    DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    ssd::registerAllDialects(registry);
    return registry;
#endif
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
  if (failed(lowerForCpu(*module, config.threads, config.segmentChunks)))
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

#ifndef SSD_HAVE_CPU_PIPELINE
  return session.fail("the CPU lowering is not built in this configuration");
#else
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      compileForCpu(**module, config.threads);
  if (!engine)
    return session.fail(llvm::toString(engine.takeError()));

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
  runOnKernelStack([&] {
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
  if (!failure.empty())
    return session.fail("running " + entry + " failed: " + failure);

  RunOutputs outputs;
  outputs.y = buffers[buffers.size() - 2].load();
  outputs.finalStates = buffers.back().load();
  outputs.runMs = std::move(runMs);
  return outputs;
#endif
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
