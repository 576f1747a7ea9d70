//===- Options.cpp - ssd-run's command line -------------------------------===//
#include "Options.h"

#include <cstdlib>
#include <filesystem>

using namespace ssd;
using ssd::rt::Expected;
using ssd::rt::Status;

const char *ssd::runUsage() {
  return R"(usage: ssd-run --case DIR [--backend cpu|gpu] [--chunk-size Q]
               [--dtype f32|bf16|f16] [--state-dtype f32|f16] [--out DIR]
               [--repeat N] [--threads N] [--strategy unfused|fused]
               [--artifact DIR] [--reference] [--emit-mlir | --emit-lowered]

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
  --artifact DIR      with --backend gpu: run this precompiled artifact
                      (ssd-compile output) instead of compiling the case;
                      its constants must match the case and the flags
  --reference         run the independent double-precision recurrence instead
                      of the compiled code (with the same input rounding)
  --emit-mlir         print the module built for the case and stop
  --emit-lowered      print the module after the CPU pipeline and stop

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

/// Parses a decimal integer; false on anything else.
static bool parseInteger(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end)
    return false;
  out = v;
  return true;
}

Expected<RunOptions>
ssd::parseRunOptions(const std::vector<std::string> &args) {
  RunOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "--reference") {
      options.reference = true;
      continue;
    }
    if (arg == "--emit-mlir") {
      options.emitMLIR = true;
      continue;
    }
    if (arg == "--emit-lowered") {
      options.emitLowered = true;
      continue;
    }
    // --flag value or --flag=value
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    if (flag != "--case" && flag != "--backend" && flag != "--chunk-size" &&
        flag != "--dtype" && flag != "--state-dtype" && flag != "--out" &&
        flag != "--artifact" && flag != "--repeat" && flag != "--threads" &&
        flag != "--strategy")
      return usageError("unknown argument '" + arg + "'");
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size())
        return usageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag == "--case") {
      options.caseDir = value;
    } else if (flag == "--out") {
      options.outDir = value;
    } else if (flag == "--strategy") {
      if (value != "unfused" && value != "fused")
        return usageError("--strategy: unknown strategy '" + value +
                          "' (expected unfused or fused)");
      options.strategy = value;
    } else if (flag == "--artifact") {
      options.artifactDir = value;
    } else if (flag == "--backend") {
      if (value != "cpu" && value != "gpu")
        return usageError("--backend: unknown backend '" + value +
                          "' (expected cpu or gpu)");
      options.backend = value;
    } else if (flag == "--chunk-size") {
      int64_t q;
      if (!parseInteger(value, q) || q <= 0 || (q & (q - 1)) != 0)
        return usageError("--chunk-size: '" + value +
                          "' is not a positive power of two");
      // The chunk-local matrices grow with Q^2; beyond this they only cost.
      if (q > kMaxChunkSize)
        return usageError("--chunk-size: " + value + " is over the maximum " +
                          std::to_string(kMaxChunkSize));
      options.config.chunkSize = q;
    } else if (flag == "--repeat" || flag == "--threads") {
      int64_t n;
      int64_t lowest = flag == "--repeat" ? 1 : 0;
      if (!parseInteger(value, n) || n < lowest || n > 1000)
        return usageError(flag + ": '" + value + "' is not an integer in [" +
                          std::to_string(lowest) + ", 1000]");
      (flag == "--repeat" ? options.config.repeat : options.config.threads) = n;
    } else if (flag == "--dtype") {
      Expected<DType> kind = parseKind(flag, value, true);
      if (!kind.ok())
        return kind.status();
      options.config.dtype = *kind;
    } else {
      Expected<DType> kind = parseKind(flag, value, false);
      if (!kind.ok())
        return kind.status();
      options.config.stateDtype = *kind;
    }
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
