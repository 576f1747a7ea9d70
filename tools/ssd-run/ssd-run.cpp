//===- ssd-run.cpp - run the SSD on a case folder -------------------------===//
//
//   ssd-run --case DIR [--backend cpu|gpu] [--chunk-size Q]
//           [--dtype f32|bf16|f16] [--state-dtype f32|f16] [--out DIR]
//
// Loads a case in the golden format, computes y and final_states with the
// compiled CPU code (or the independent reference), writes them as float32
// .npy files and compares them with the expected outputs when present.
//
//===----------------------------------------------------------------------===//
#include "CPUBackend.h"
#include "Options.h"
#include "ReferenceBackend.h"
#include "RunConfig.h"

#include "ssd/Support/Case.h"
#include "ssd/Support/Compare.h"
#include "ssd/Support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace ssd;

namespace {
enum ExitCode {
  kPass = 0,
  kOverBound = 1,
  kBadInput = 2,
  kExecutionFailed = 3,
};

int fail(int code, const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "ssd-run: error: " << message << "\n";
  return code;
}

std::string formatError(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3e", value);
  return text;
}

/// Writes the outputs as float32 .npy files under `dir`.
llvm::Error writeOutputs(const SSDCase &c, const RunOutputs &out,
                         llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, dir + ": cannot create directory: " +
                                           ec.message());
  llvm::SmallString<256> y(dir), fs(dir);
  llvm::sys::path::append(y, "y.npy");
  llvm::sys::path::append(fs, "final_states.npy");
  if (llvm::Error err = writeNpy(y, c.tokenShape(), out.y))
    return err;
  return writeNpy(fs, c.stateShape(), out.finalStates);
}

/// Prints one line per expected output; returns whether all are in bounds.
bool compareOutputs(const SSDCase &c, const RunOutputs &out, double bound) {
  bool pass = true;
  for (auto [name, actual, expected] :
       {std::tuple<const char *, const std::vector<float> *, const FloatTensor *>{
            "y", &out.y, &c.expectedY},
        {"final_states", &out.finalStates, &c.expectedFinalStates}}) {
    if (!expected->present())
      continue;
    double err = maxRelativeError(*actual, expected->data);
    bool ok = err <= bound;
    pass &= ok;
    llvm::outs() << name << ": max_rel_err=" << formatError(err)
                 << " bound=" << formatError(bound) << " "
                 << (ok ? "PASS" : "FAIL") << "\n";
  }
  return pass;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::Expected<RunOptions> parsed = parseRunOptions(
      llvm::ArrayRef<const char *>(const_cast<const char **>(argv) + 1, argc - 1));
  if (!parsed) {
    llvm::errs() << "ssd-run: error: " << llvm::toString(parsed.takeError())
                 << "\n"
                 << runUsage();
    return kBadInput;
  }
  RunOptions &options = *parsed;
  if (options.help) {
    llvm::outs() << runUsage();
    return kPass;
  }
  if (options.backend == "gpu")
    return fail(kBadInput, "--backend gpu: not built in this configuration "
                           "(this ssd-run has the cpu backend only)");
  bool needsPipeline =
      options.emitLowered || (!options.reference && !options.emitMLIR);
  if (needsPipeline && !cpuBackendAvailable())
    return fail(kBadInput, "--backend cpu: not built in this configuration "
                           "(the CPU lowering is missing; --reference works)");

  llvm::Expected<SSDCase> loaded = loadCase(options.caseDir);
  if (!loaded)
    return fail(kBadInput, llvm::toString(loaded.takeError()));
  const SSDCase &c = *loaded;
  const RunConfig &config = options.config;

  if (options.emitMLIR || options.emitLowered) {
    if (llvm::Error err =
            printCaseModule(c, config, options.emitLowered, llvm::outs()))
      return fail(kExecutionFailed, llvm::toString(std::move(err)));
    return kPass;
  }

  llvm::outs() << c.name << ": backend="
               << (options.reference ? "reference" : options.backend)
               << " chunk_size=" << config.chunkSize
               << " dtype=" << elementKindName(config.dtype)
               << " state_dtype=" << elementKindName(config.stateDtype) << "\n";
  RunOutputs outputs;
  if (options.reference) {
    outputs = runReferenceBackend(c, config);
  } else {
    llvm::Expected<RunOutputs> ran = runCPUBackend(c, config);
    if (!ran)
      return fail(kExecutionFailed, llvm::toString(ran.takeError()));
    outputs = std::move(*ran);
  }

  if (!options.outDir.empty())
    if (llvm::Error err = writeOutputs(c, outputs, options.outDir))
      return fail(kBadInput, llvm::toString(std::move(err)));
  return compareOutputs(c, outputs, errorBound(config)) ? kPass : kOverBound;
}
