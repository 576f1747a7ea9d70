//===- ssd-compile.cpp - the SSD ahead-of-time compiler -------------------===//
//
//   ssd-compile (FILE.mlir | --nheads H --headdim P --dstate N --ngroups G
//                [--chunk-size Q] [--dtype bf16|f16|f32] [--state-dtype f32|f16]
//                [--features LIST] [--dt-limit LO,HI])
//               [--target sm_90a|cpu] [--strategy fused|unfused] -o DIR
//
// Writes an artifact (kernels.cubin + manifest.json, docs/runtime.md) that
// the runtime launches on a GPU machine without MLIR.
//
//===----------------------------------------------------------------------===//
#include "ssd/Compile/Artifact.h"
#include "ssd/Compile/Context.h"
#include "ssd/Compile/LayerModule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <cmath>

using namespace ssd;
using llvm::StringRef;

namespace {
enum ExitCode { kSuccess = 0, kBadInput = 2, kCompileFailed = 3 };

const char *kUsage =
    R"(usage: ssd-compile (FILE.mlir | --nheads H --headdim P --dstate N --ngroups G
                    [--chunk-size Q] [--dtype bf16|f16|f32] [--state-dtype f32|f16]
                    [--features LIST] [--dt-limit LO,HI])
                   [--target sm_90a|cpu] [--strategy fused|unfused]
                   [--state-chain segment|chunk] [--mma mma.sync|wgmma]
                   [--p-block R] -o DIR

Compiles one SSD layer ahead of time and writes the artifact to DIR:
kernels.cubin and manifest.json. The input is a module with one function
computing ssd.combined, or a layer configuration (batch and sequence length
stay dynamic).

  --nheads, --headdim, --dstate, --ngroups   the static sizes
  --chunk-size Q      a power of two (default 128)
  --dtype T           element type of x, B, C, z and y (default bf16)
  --state-dtype T     element type of the states (default f32)
  --features LIST     comma list of the optional inputs compiled in:
                      D,Dhp,z,dt_bias,softplus,dt_limit,initial_states,
                      seq_idx,varlen
  --dt-limit LO,HI    the dt clamp (implies dt_limit; HI may be inf; 0,inf
                      is no clamp, as in mamba_ssm)
  --target T          sm_90a (default) or cpu
  --strategy S        fused (default: one persistent kernel) or unfused
  --state-chain C     fused only: chunk (default: one chain step per chunk,
                      the state through global memory) or segment (segments
                      of chunks with the state carried on chip)
  --mma I             fused only: mma.sync (default) or wgmma (sm_90a: the
                      chain item's products read shared memory in place)
  --p-block R         fused only: headdim rows of one work item, a power of
                      two dividing headdim (default: the lowering's choice)
  -o DIR              the artifact directory (created if missing)

Exit status: 0 success, 2 bad flags or input, 3 compilation failure.
)";

struct Options {
  std::string input;
  std::string outDir;
  LayerSpec spec;
  bool haveLayerFlags = false;
  CompileOptions compile;
  bool help = false;
};

/// Prints one error line and returns the exit code.
int fail(int code, const std::string &message) {
  llvm::errs() << "ssd-compile: error: " << message << "\n";
  return code;
}

std::optional<std::string> parseArgs(int argc, char **argv, Options &o) {
  o.spec.dtype = "bf16";
  bool sizeGiven[4] = {false, false, false, false};
  const char *sizeFlags[4] = {"--nheads", "--headdim", "--dstate", "--ngroups"};
  int64_t *sizes[4] = {&o.spec.nheads, &o.spec.headdim, &o.spec.dstate,
                       &o.spec.ngroups};
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (arg == "--from-lowered") {
      o.compile.fromLowered = true;
      continue;
    }
    if (!arg.starts_with("-") || arg == "-") {
      if (!o.input.empty())
        return "more than one input file ('" + o.input + "' and '" +
               arg.str() + "')";
      o.input = arg.str();
      continue;
    }
    auto [flag, inlineValue] = arg.split('=');
    std::string value;
    if (arg.contains('=')) {
      value = inlineValue.str();
    } else {
      if (i + 1 >= argc)
        return flag.str() + " needs a value";
      value = argv[++i];
    }
    StringRef v(value);
    bool isSize = false;
    for (int k = 0; k < 4; ++k) {
      if (flag != sizeFlags[k])
        continue;
      isSize = true;
      if (v.getAsInteger(10, *sizes[k]) || *sizes[k] <= 0)
        return flag.str() + ": '" + value + "' is not a positive integer";
      sizeGiven[k] = true;
      o.haveLayerFlags = true;
    }
    if (isSize)
      continue;
    if (flag == "-o") {
      o.outDir = value;
    } else if (flag == "--chunk-size") {
      if (v.getAsInteger(10, o.spec.chunkSize) || o.spec.chunkSize <= 0)
        return "--chunk-size: '" + value + "' is not a positive integer";
      o.haveLayerFlags = true;
    } else if (flag == "--dtype") {
      if (v != "f32" && v != "bf16" && v != "f16")
        return "--dtype: unknown type '" + value + "' (expected bf16, f16 or f32)";
      o.spec.dtype = value;
      o.haveLayerFlags = true;
    } else if (flag == "--state-dtype") {
      if (v != "f32" && v != "f16")
        return "--state-dtype: unknown type '" + value + "' (expected f32 or f16)";
      o.spec.stateDtype = value;
      o.haveLayerFlags = true;
    } else if (flag == "--features") {
      if (std::string error = parseFeatures(value, o.spec); !error.empty())
        return "--features: " + error;
      o.haveLayerFlags = true;
    } else if (flag == "--dt-limit") {
      auto [lo, hi] = v.split(',');
      char *end = nullptr;
      std::string loText = lo.str(), hiText = hi.str();
      o.spec.dtLimitLo = std::strtod(loText.c_str(), &end);
      bool bad = loText.empty() || *end;
      o.spec.dtLimitHi = std::strtod(hiText.c_str(), &end);
      bad |= hiText.empty() || *end;
      if (bad)
        return "--dt-limit: '" + value + "' is not LO,HI";
      // Values past the double range parse as +-inf; only HI may be inf.
      bool hiIsInf = hi.trim().equals_insensitive("inf") ||
                     hi.trim().equals_insensitive("+inf");
      if (!std::isfinite(o.spec.dtLimitLo) ||
          (!std::isfinite(o.spec.dtLimitHi) && !hiIsInf))
        return "--dt-limit: '" + value +
               "' is out of range (LO finite, HI finite or inf)";
      if (o.spec.dtLimitLo > o.spec.dtLimitHi)
        return "--dt-limit: LO " + loText + " exceeds HI " + hiText;
      // (0, inf) is mamba_ssm's "no limit": no clamp is compiled, as a case
      // with that limit runs without one (ssd-run's check of the artifact).
      if (o.spec.dtLimitLo != 0.0 || !std::isinf(o.spec.dtLimitHi))
        o.spec.add("dt_limit");
      o.haveLayerFlags = true;
    } else if (flag == "--target") {
      o.compile.target = value;
    } else if (flag == "--strategy") {
      o.compile.strategy = value;
    } else if (flag == "--state-chain") {
      if (v != "segment" && v != "chunk")
        return "--state-chain: unknown chain '" + value +
               "' (expected segment or chunk)";
      o.compile.stateChain = value;
    } else if (flag == "--mma") {
      if (v != "mma.sync" && v != "wgmma")
        return "--mma: unknown instruction '" + value +
               "' (expected mma.sync or wgmma)";
      o.compile.mma = value;
    } else if (flag == "--p-block") {
      int64_t rows = 0;
      if (v.getAsInteger(10, rows) || rows <= 0 || (rows & (rows - 1)))
        return "--p-block: expected a positive power of two, got '" + value +
               "'";
      o.compile.pBlock = rows;
    } else {
      return "unknown argument '" + arg.str() + "'";
    }
  }
  if (o.help)
    return std::nullopt;
  if (o.outDir.empty())
    return std::string("-o DIR is required");
  if (!o.input.empty() && o.haveLayerFlags && !o.compile.fromLowered)
    return "give an input file or the layer flags (--nheads ...), not both";
  if (o.input.empty() && !o.haveLayerFlags)
    return std::string("no input: give FILE.mlir or the layer flags "
                       "(--nheads H --headdim P --dstate N --ngroups G)");
  if (o.compile.fromLowered && o.input.empty())
    return std::string("--from-lowered needs an input file");
  if (o.haveLayerFlags)
    for (int k = 0; k < 4; ++k)
      if (!sizeGiven[k])
        return std::string(sizeFlags[k]) + " is required with the layer flags";
  return std::nullopt;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options o;
  if (std::optional<std::string> error = parseArgs(argc, argv, o)) {
    fail(kBadInput, *error);
    llvm::errs() << "(ssd-compile --help prints the usage)\n";
    return kBadInput;
  }
  if (o.help) {
    llvm::outs() << kUsage;
    return kSuccess;
  }

  if (o.input.empty()) {
    std::optional<CompileError> err = compileLayer(o.spec, o.compile, o.outDir);
    if (!err)
      return kSuccess;
    return fail(err->isUsageError ? kBadInput : kCompileFailed, err->message);
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(o.input);
  if (!buffer)
    return fail(kBadInput,
                o.input + ": cannot read: " + buffer.getError().message());
  CompileContext context;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &context.get());
  if (!module)
    return fail(kBadInput, context.describe(o.input + ": invalid IR"));
  std::optional<LayerSpec> spec;
  if (o.haveLayerFlags)
    spec = o.spec;
  std::optional<CompileError> err =
      compileModule(*module, spec, o.compile, o.outDir);
  if (!err)
    return kSuccess;
  return fail(err->isUsageError ? kBadInput : kCompileFailed,
              context.describe(err->message));
}
