//===- ssd-run.cpp - run the SSD on a case folder -------------------------===//
//
//   ssd-run --case DIR [--backend cpu|gpu] [--chunk-size Q]
//           [--dtype f32|bf16|f16] [--state-dtype f32|f16] [--out DIR]
//           [--artifact DIR]
//
// Loads a case in the golden format, computes y and final_states with the
// compiled CPU code, on the GPU through the runtime, or with the independent
// reference, writes them as float32 .npy files and compares them with the
// expected outputs when present. Plain C++ apart from the CPU backend, so
// that the runtime-only build (no MLIR) runs artifacts on a GPU machine.
//
//===----------------------------------------------------------------------===//
#include "CPUBackend.h"
#include "GPUBackend.h"
#include "Options.h"
#include "ReferenceBackend.h"
#include "RunConfig.h"

#include "ssd/Support/Case.h"
#include "ssd/Support/Compare.h"
#include "ssd/Support/Npy.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <tuple>

using namespace ssd;
using ssd::rt::Expected;
using ssd::rt::Status;

namespace {
enum ExitCode {
  kPass = 0,
  kOverBound = 1,
  kBadInput = 2,
  kExecutionFailed = 3,
};

int fail(int code, const std::string &message) {
  std::cout.flush();
  std::cerr << "ssd-run: error: " << message << "\n";
  return code;
}

std::string formatError(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3e", value);
  return text;
}

/// Writes the outputs as float32 .npy files under `dir`.
Status writeOutputs(const SSDCase &c, const RunOutputs &out,
                    const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::error(dir + ": cannot create directory: " + ec.message());
  // Both files or neither.
  return writeNpyFiles({{dir + "/y.npy", c.tokenShape(), &out.y},
                        {dir + "/final_states.npy", c.stateShape(),
                         &out.finalStates}});
}

/// Prints one line per expected output; returns whether all are in bounds.
bool compareOutputs(const SSDCase &c, const RunOutputs &out, double bound) {
  bool pass = true;
  for (auto [name, actual, expected] :
       {std::tuple<const char *, const std::vector<float> *,
                   const FloatTensor *>{"y", &out.y, &c.expectedY},
        {"final_states", &out.finalStates, &c.expectedFinalStates}}) {
    if (!expected->present())
      continue;
    double err = maxRelativeError(*actual, expected->data);
    bool ok = err <= bound;
    pass &= ok;
    std::cout << name << ": max_rel_err=" << formatError(err)
              << " bound=" << formatError(bound) << " "
              << (ok ? "PASS" : "FAIL") << "\n";
  }
  std::cout.flush();
  return pass;
}

/// Runs the case on the GPU; `code` receives the exit status on failure.
Expected<RunOutputs> runOnGPU(const SSDCase &c, const RunOptions &options,
                              int &code) {
  code = kBadInput;
  LayerSpec spec = layerSpecOfRun(c, options.config);
  std::string dir = options.artifactDir;
  std::string compiledHere;
  // No driver is an unavailable backend (exit 2, as the usage says), not a
  // failed run: checked before anything is compiled, and after a given
  // artifact is read (so that a bad artifact is named first).
  auto driver = [] {
    Status s = rt::driverAvailable();
    return s.ok() ? s : s.withContext("the GPU backend is unavailable");
  };
  if (dir.empty()) {
    if (Status s = driver(); !s.ok())
      return s;
    if (!canCompileArtifacts())
      return compileArtifactForRun(spec, options.strategy).status();
    Expected<std::string> compiled =
        compileArtifactForRun(spec, options.strategy);
    if (!compiled.ok()) {
      code = kExecutionFailed;
      return compiled.status();
    }
    dir = compiledHere = *compiled;
  }
  Expected<rt::Artifact> artifact = rt::Artifact::load(dir);
  if (!artifact.ok())
    return artifact.status();
  if (Status fits = checkArtifactFits(artifact->manifest(), spec); !fits.ok())
    return fits.withContext("artifact " + dir);
  if (Status s = driver(); !s.ok())
    return s;
  Expected<RunOutputs> outputs = runGPUBackend(c, *artifact);
  if (!compiledHere.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(compiledHere, ec);
  }
  code = kExecutionFailed;
  return outputs;
}
} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Expected<RunOptions> parsed = parseRunOptions(args);
  if (!parsed.ok()) {
    std::cerr << "ssd-run: error: " << parsed.message() << "\n" << runUsage();
    return kBadInput;
  }
  RunOptions &options = *parsed;
  if (options.help) {
    std::cout << runUsage();
    return kPass;
  }
  bool gpu = options.backend == "gpu" && !options.reference;
  bool needsPipeline =
      options.emitLowered || (!options.reference && !options.emitMLIR && !gpu);
  if (needsPipeline && !cpuBackendAvailable())
    return fail(kBadInput, "--backend cpu: not built in this configuration "
                           "(the CPU lowering is missing; --reference works)");

  Expected<SSDCase> loaded =
      loadCase(options.caseDir,
               /*finiteInputs=*/!options.nonfiniteInputs);
  if (!loaded.ok())
    return fail(kBadInput, loaded.message());
  const SSDCase &c = *loaded;
  const RunConfig &config = options.config;

  if (options.emitMLIR || options.emitLowered) {
    if (Status s = printCaseModule(c, config, options.emitLowered); !s.ok())
      return fail(kExecutionFailed, s.message());
    return kPass;
  }

  std::cout << c.name << ": backend="
            << (options.reference ? "reference" : options.backend)
            << " chunk_size=" << config.chunkSize
            << " dtype=" << dtypeName(config.dtype)
            << " state_dtype=" << dtypeName(config.stateDtype) << "\n";
  RunOutputs outputs;
  if (options.reference) {
    outputs = runReferenceBackend(c, config);
  } else if (gpu) {
    int code = kExecutionFailed;
    Expected<RunOutputs> ran = runOnGPU(c, options, code);
    if (!ran.ok())
      return fail(code, ran.message());
    outputs = ran.take();
  } else {
    Expected<RunOutputs> ran = runCPUBackend(c, config);
    if (!ran.ok())
      return fail(kExecutionFailed, ran.message());
    outputs = ran.take();
  }

  if (config.repeat > 0 && !outputs.runMs.empty()) {
    std::vector<double> ms = outputs.runMs;
    std::sort(ms.begin(), ms.end());
    std::cout << "time: median " << ms[ms.size() / 2] << " ms, min " << ms[0]
              << " ms over " << ms.size() << " runs (compilation excluded)\n";
  }
  if (!options.outDir.empty())
    if (Status s = writeOutputs(c, outputs, options.outDir); !s.ok())
      return fail(kBadInput, s.message());
  return compareOutputs(c, outputs, errorBound(config)) ? kPass : kOverBound;
}
