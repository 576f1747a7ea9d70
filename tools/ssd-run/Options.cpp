//===- Options.cpp - ssd-run's command line -------------------------------===//
#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

using namespace ssd;
using llvm::StringRef;

const char *ssd::runUsage() {
  return R"(usage: ssd-run --case DIR [--backend cpu|gpu] [--chunk-size Q]
               [--dtype f32|bf16|f16] [--state-dtype f32|f16] [--out DIR]
               [--reference] [--emit-mlir | --emit-lowered]

Runs the whole SSD forward on a case folder (the format of golden/), writes
y.npy and final_states.npy (float32) to --out, and when the folder holds the
expected outputs prints the error of each against the bound.

  --case DIR          the case folder (case.json and .npy files)
  --backend B         cpu (default) or gpu
  --chunk-size Q      chunk size, a power of two up to 4096 (default 64)
  --dtype T           element type of x, B, C, z and y (default f32)
  --state-dtype T     element type of initial and final states (default f32)
  --out DIR           where to write y.npy and final_states.npy
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

static llvm::Error usageError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Expected<ElementKind> parseKind(StringRef flag, StringRef value,
                                             bool allowBF16) {
  if (value == "f32")
    return ElementKind::F32;
  if (value == "f16")
    return ElementKind::F16;
  if (value == "bf16" && allowBF16)
    return ElementKind::BF16;
  return usageError(flag + ": unknown type '" + value + "' (expected " +
                    (allowBF16 ? "f32, bf16 or f16" : "f32 or f16") + ")");
}

llvm::Expected<RunOptions>
ssd::parseRunOptions(llvm::ArrayRef<const char *> args) {
  RunOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
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
    auto [flag, inlineValue] = arg.split('=');
    bool hasInline = arg.contains('=');
    auto takeValue = [&]() -> llvm::Expected<StringRef> {
      if (hasInline)
        return inlineValue;
      if (i + 1 >= args.size())
        return usageError(flag + " needs a value");
      return StringRef(args[++i]);
    };
    if (flag != "--case" && flag != "--backend" && flag != "--chunk-size" &&
        flag != "--dtype" && flag != "--state-dtype" && flag != "--out")
      return usageError("unknown argument '" + arg + "'");
    llvm::Expected<StringRef> value = takeValue();
    if (!value)
      return value.takeError();
    if (flag == "--case") {
      options.caseDir = value->str();
    } else if (flag == "--out") {
      options.outDir = value->str();
    } else if (flag == "--backend") {
      if (*value != "cpu" && *value != "gpu")
        return usageError("--backend: unknown backend '" + *value +
                          "' (expected cpu or gpu)");
      options.backend = value->str();
    } else if (flag == "--chunk-size") {
      int64_t q;
      if (value->getAsInteger(10, q) || q <= 0 || !llvm::isPowerOf2_64(q))
        return usageError("--chunk-size: '" + *value +
                          "' is not a positive power of two");
      // The chunk-local matrices grow with Q^2; beyond this they only cost.
      if (q > kMaxChunkSize)
        return usageError("--chunk-size: " + *value + " is over the maximum " +
                          llvm::Twine(kMaxChunkSize));
      options.config.chunkSize = q;
    } else if (flag == "--dtype") {
      llvm::Expected<ElementKind> kind = parseKind(flag, *value, true);
      if (!kind)
        return kind.takeError();
      options.config.dtype = *kind;
    } else {
      llvm::Expected<ElementKind> kind = parseKind(flag, *value, false);
      if (!kind)
        return kind.takeError();
      options.config.stateDtype = *kind;
    }
  }
  if (!options.help && options.caseDir.empty())
    return usageError("--case DIR is required");
  if (options.emitMLIR && options.emitLowered)
    return usageError("--emit-mlir and --emit-lowered are exclusive");
  return options;
}
