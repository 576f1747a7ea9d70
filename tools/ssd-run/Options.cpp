//===- Options.cpp - ssd-run's command line -------------------------------===//
#include "Options.h"

#include "CommandLine.h"

#include <cstdint>
#include <filesystem>
#include <tuple>

using namespace ssd;
using ssd::rt::Expected;
using ssd::rt::Status;

const char *ssd::runUsage() {
  return R"(usage: ssd-run --case DIR [--backend cpu|gpu] [--chunk-size Q]
               [--dtype f32|bf16|f16] [--state-dtype f32|f16] [--out DIR]
               [--repeat N] [--threads N] [--segment-chunks N]
               [--strategy unfused|fused]
               [--artifact DIR] [--reference] [--nonfinite-inputs]
               [--emit-mlir | --emit-lowered]

Runs the whole SSD forward on a case folder (the format of golden/), writes
y.npy and final_states.npy (float32) to --out, and when the folder holds the
expected outputs prints the error of each against the bound.

  --case DIR          the case folder (case.json and .npy files)
  --backend B         cpu (default) or gpu
  --chunk-size Q      chunk size, a power of two up to 4096 (default 64)
  --dtype T           element type of x, B, C, z and y (default f32)
  --state-dtype T     element type of initial and final states (default f32)
  --out DIR           where to write y.npy and final_states.npy
  --strategy S        with --backend gpu and no --artifact: compile the
                      fused persistent kernel (default) or the unfused kernels
  --repeat N          run the computation N times (cpu and --reference) and
                      print the median time; compilation is not timed
  --threads N         cpu: run the chunk loops on N threads (0: one thread,
                      the default)
  --segment-chunks N  cpu: run the sequence as a loop over segments of N
                      chunks carrying the state, so that the intermediates
                      are segment-sized (default 1; 0: the whole sequence at
                      once). With cu_seqlens each sequence is walked so;
                      layers with an f16 state run at once (with
                      cu_seqlens, one sequence at a time)
  --artifact DIR      with --backend gpu: run this precompiled artifact
                      (ssd-compile output) instead of compiling the case;
                      its constants must match the case and the flags
  --reference         run the independent double-precision recurrence instead
                      of the compiled code (with the same input rounding)
  --nonfinite-inputs  accept NaN and infinite inputs (rejected by default:
                      they are for tests that a kernel keeps them inside
                      their sequence); the expected outputs stay finite
  --emit-mlir         print the module built for the case and stop
  --emit-lowered      print the module after the CPU pipeline and stop
  -h, --help          print this text

A flag's value follows it (--out DIR) or joins it with '=' (--out=DIR).

Exit status: 0 within bounds (or nothing to compare), 1 an output over its
bound, 2 bad flags, malformed case or unavailable backend, 3 compilation or
execution failure.
)";
}

static constexpr int64_t kMaxChunkSize = 4096;

static Status usageError(const std::string &message) {
  return Status::error(message);
}

static Expected<DType> parseKind(const std::string &flag,
                                 const std::string &value, bool allowBF16) {
  if (value == "f32")
    return DType::F32;
  if (value == "f16")
    return DType::F16;
  if (value == "bf16" && allowBF16)
    return DType::BF16;
  return usageError(flag + ": unknown type '" + value + "' (expected " +
                    (allowBF16 ? "f32, bf16 or f16" : "f32 or f16") + ")");
}

Expected<RunOptions>
ssd::parseRunOptions(const std::vector<std::string> &args) {
  using cli::Flag;
  Expected<cli::ParsedFlags> read =
      cli::parse({{"case", Flag::Value},
                  {"backend", Flag::Value},
                  {"chunk-size", Flag::Value},
                  {"dtype", Flag::Value},
                  {"state-dtype", Flag::Value},
                  {"out", Flag::Value},
                  {"artifact", Flag::Value},
                  {"repeat", Flag::Value},
                  {"threads", Flag::Value},
                  {"segment-chunks", Flag::Value},
                  {"strategy", Flag::Value},
                  {"reference", Flag::Switch},
                  {"nonfinite-inputs", Flag::Switch},
                  {"emit-mlir", Flag::Switch},
                  {"emit-lowered", Flag::Switch}},
                 args);
  if (!read.ok())
    return read.status();
  const cli::ParsedFlags &flags = *read;

  RunOptions options;
  options.help = flags.on("help");
  options.reference = flags.on("reference");
  options.nonfiniteInputs = flags.on("nonfinite-inputs");
  options.emitMLIR = flags.on("emit-mlir");
  options.emitLowered = flags.on("emit-lowered");
  options.caseDir = flags.value("case");
  options.outDir = flags.value("out");
  options.artifactDir = flags.value("artifact");
  if (flags.has("strategy")) {
    std::string value = flags.value("strategy");
    if (value != "unfused" && value != "fused")
      return usageError("--strategy: unknown strategy '" + value +
                        "' (expected unfused or fused)");
    options.strategy = value;
  }
  if (flags.has("backend")) {
    std::string value = flags.value("backend");
    if (value != "cpu" && value != "gpu")
      return usageError("--backend: unknown backend '" + value +
                        "' (expected cpu or gpu)");
    options.backend = value;
  }
  if (flags.has("chunk-size")) {
    std::string value = flags.value("chunk-size");
    Expected<int64_t> q =
        cli::toInteger("--chunk-size", value, INT64_MIN, INT64_MAX);
    if (!q.ok() || *q <= 0 || (*q & (*q - 1)) != 0)
      return usageError("--chunk-size: '" + value +
                        "' is not a positive power of two");
    // The chunk-local matrices grow with Q^2; beyond this they only cost.
    if (*q > kMaxChunkSize)
      return usageError("--chunk-size: " + value + " is over the maximum " +
                        std::to_string(kMaxChunkSize));
    options.config.chunkSize = *q;
  }
  for (auto [flag, lowest, field] :
       {std::tuple{"repeat", int64_t(1), &options.config.repeat},
        std::tuple{"threads", int64_t(0), &options.config.threads},
        std::tuple{"segment-chunks", int64_t(0),
                   &options.config.segmentChunks}}) {
    if (!flags.has(flag))
      continue;
    Expected<int64_t> n = cli::toInteger(std::string("--") + flag,
                                         flags.value(flag), lowest, 1000);
    if (!n.ok())
      return n.status();
    *field = *n;
  }
  if (flags.has("dtype")) {
    Expected<DType> kind = parseKind("--dtype", flags.value("dtype"), true);
    if (!kind.ok())
      return kind.status();
    options.config.dtype = *kind;
  }
  if (flags.has("state-dtype")) {
    Expected<DType> kind =
        parseKind("--state-dtype", flags.value("state-dtype"), false);
    if (!kind.ok())
      return kind.status();
    options.config.stateDtype = *kind;
  }

  if (!options.help && options.caseDir.empty())
    return usageError("--case DIR is required");
  if (options.emitMLIR && options.emitLowered)
    return usageError("--emit-mlir and --emit-lowered are exclusive");
  if (!options.artifactDir.empty() && options.backend != "gpu")
    return usageError("--artifact needs --backend gpu");
  // Writing into the case folder would replace its expected outputs.
  std::error_code ec;
  if (!options.outDir.empty() &&
      std::filesystem::equivalent(options.outDir, options.caseDir, ec))
    return usageError("--out " + options.outDir +
                      ": is the case folder; y.npy and final_states.npy there "
                      "are the expected outputs");
  return options;
}
