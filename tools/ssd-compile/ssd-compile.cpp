//===- ssd-compile.cpp - the SSD ahead-of-time compiler -------------------===//
//
//   ssd-compile (FILE.mlir | --nheads H --headdim P --dstate N --ngroups G
//                [--chunk-size Q] [--dtype bf16|f16|f32] [--state-dtype
//                f32|f16]
//                [--features LIST] [--dt-limit LO,HI])
//               [--target sm_90a|cpu] [--strategy fused|unfused] -o DIR
//
// Writes an artifact (kernels.cubin + manifest.json, docs/runtime.md) that
// the runtime launches on a GPU machine without MLIR. llvm::cl reads the
// flags; the checks of their values, and their messages, are this file's.
//
//===----------------------------------------------------------------------===//
#include "ssd/Compile/Artifact.h"
#include "ssd/Compile/Context.h"
#include "ssd/Compile/LayerModule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <optional>

using namespace ssd;
using llvm::StringRef;
namespace cl = llvm::cl;

namespace {
enum ExitCode { kSuccess = 0, kBadInput = 2, kCompileFailed = 3 };

// --help prints this first, then the flags of the category below.
const char *kOverview =
    R"(the SSD ahead-of-time compiler

usage: ssd-compile (FILE.mlir | --nheads H --headdim P --dstate N --ngroups G
                    [--chunk-size Q] [--dtype bf16|f16|f32] [--state-dtype f32|f16]
                    [--features LIST] [--dt-limit LO,HI])
                   [--target sm_90a|cpu] [--strategy fused|unfused]
                   [--state-chain chunk|lookback|auto|segment] [--mma mma.sync|wgmma]
                   [--state-mma auto|mma.sync|wgmma]
                   [--copy auto|cp.async|tma] [--p-block R] [--cluster 1|2]
                   [--fold auto|pieces|vectors] [--fold-loads-ahead N]
                   [--warp-specialized auto|always|never]
                   [--warp-specialized-pieces N]
                   [--warp-specialized-stages N]
                   [--warp-specialized-published-buffers N]
                   [--warp-specialized-piece-heads N]
                   [--warp-specialized-y auto|stage|tiles]
                   [--warp-specialized-panel-maps]
                   [--profile] -o DIR

Compiles one SSD layer ahead of time and writes the artifact to DIR:
kernels.cubin and manifest.json. The input is a module with one function
computing ssd.combined, or a layer configuration (batch and sequence length
stay dynamic).

Exit status: 0 success, 2 bad flags or input (a layer or an option the GPU
lowering cannot take included), 3 compilation failure.
)";

cl::OptionCategory category("ssd-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("[FILE.mlir]"),
                               cl::cat(category));
cl::opt<std::string> outDir("o",
                            cl::desc("the artifact directory (created "
                                     "if missing)"),
                            cl::value_desc("DIR"), cl::cat(category));
cl::opt<bool>
    fromLowered("from-lowered",
                cl::desc("the input already holds gpu.binary @ssd_kernels and "
                         "ssd.launch: only write the artifact (tests)"),
                cl::cat(category));

// The layer flags; any of them makes the input a layer configuration.
cl::opt<int64_t> nheads("nheads", cl::desc("number of heads"),
                        cl::value_desc("H"), cl::cat(category));
cl::opt<int64_t> headdim("headdim", cl::desc("head dimension"),
                         cl::value_desc("P"), cl::cat(category));
cl::opt<int64_t> dstate("dstate", cl::desc("state dimension"),
                        cl::value_desc("N"), cl::cat(category));
cl::opt<int64_t> ngroups("ngroups", cl::desc("number of B/C groups"),
                         cl::value_desc("G"), cl::cat(category));
cl::opt<int64_t> chunkSize("chunk-size",
                           cl::desc("a power of two (default 128)"),
                           cl::value_desc("Q"), cl::cat(category));
cl::opt<std::string>
    dtype("dtype", cl::desc("element type of x, B, C, z and y (default bf16)"),
          cl::value_desc("bf16|f16|f32"), cl::cat(category));
cl::opt<std::string>
    stateDtype("state-dtype",
               cl::desc("element type of the states (default f32)"),
               cl::value_desc("f32|f16"), cl::cat(category));
cl::opt<std::string> features(
    "features",
    cl::desc("comma list of the optional inputs compiled in: D,Dhp,z,"
             "dt_bias,softplus,dt_limit,initial_states,seq_idx,varlen"),
    cl::value_desc("LIST"), cl::cat(category));
cl::opt<std::string>
    dtLimit("dt-limit",
            cl::desc("the dt clamp (implies dt_limit; HI may be inf; "
                     "0,inf is no clamp, as in mamba_ssm)"),
            cl::value_desc("LO,HI"), cl::cat(category));

cl::opt<std::string> target("target", cl::desc("sm_90a (default) or cpu"),
                            cl::init("sm_90a"), cl::value_desc("T"),
                            cl::cat(category));
cl::opt<std::string>
    strategy("strategy",
             cl::desc("fused (default: one persistent kernel) or unfused"),
             cl::init("fused"), cl::value_desc("S"), cl::cat(category));
cl::opt<std::string> stateChain(
    "state-chain",
    cl::desc("fused only: auto (default: a lookback and a chunk kernel, the "
             "runtime launching lookback where few chains run at once), "
             "chunk (one chain step per chunk, the state through global "
             "memory), lookback (per chunk, a decoupled look-back over the "
             "chunk states) or segment (segments of chunks with the state "
             "carried on chip)"),
    cl::value_desc("C"), cl::cat(category));
cl::opt<std::string>
    mma("mma",
        cl::desc("fused only: mma.sync (default) or wgmma (sm_90a: with TMA "
                 "rows the chunk scan reads its operands in place, else both "
                 "products stage them)"),
        cl::value_desc("I"), cl::cat(category));
cl::opt<std::string> stateMma(
    "state-mma",
    cl::desc("fused only: the chunk-state product's instruction: auto "
             "(default: wgmma with TMA rows and dstate 128, B's rows read in "
             "place; mma.sync with cp.async rows; else as --mma), mma.sync "
             "or wgmma (sm_90a)"),
    cl::value_desc("I"), cl::cat(category));
cl::opt<std::string>
    copy("copy",
         cl::desc("fused only: auto (default: tma on sm_90a), cp.async, or "
                  "tma (sm_90a: x, B and C rows by the tensor memory "
                  "accelerator)"),
         cl::value_desc("C"), cl::cat(category));
cl::opt<int64_t>
    pBlock("p-block",
           cl::desc("fused only: headdim rows of one work item, a power of "
                    "two dividing headdim (default: the lowering's choice)"),
           cl::value_desc("R"), cl::cat(category));

cl::opt<int64_t>
    cluster("cluster",
            cl::desc("fused only: blocks of a thread block cluster, 1 "
                     "(default) or 2 (sm_90a with TMA rows: a pair of blocks "
                     "takes the chain items of two heads of one group and "
                     "chunk, each B and C panel read from L2 once for both)"),
            cl::value_desc("K"), cl::cat(category));

cl::opt<std::string> fold(
    "fold",
    cl::desc("fused only: how the chain's fold (turns and look-back) "
             "walks the state slots: auto (default: pieces with fp32 "
             "states, vectors "
             "with fp16), pieces (16-byte pieces in slot order, whole "
             "sectors per warp access) or vectors (the chunk-state "
             "product's 8-column vectors)"),
    cl::value_desc("F"), cl::cat(category));

cl::opt<std::string> warpSpecialized(
    "warp-specialized",
    cl::desc("fused only: whether the artifact holds the warp-specialised "
             "kernels instead of the persistent one (one piece of a "
             "sequence, batch row, head and 64 head-dimension columns a "
             "block; sm_90a, bf16, dstate 128, no z, varlen or seq_idx): "
             "auto (default: for the layers they take), always (an error "
             "for a layer they cannot take) or never"),
    cl::value_desc("W"), cl::cat(category));

cl::opt<int64_t> warpSpecializedPieces(
    "warp-specialized-pieces",
    cl::desc("fused only: pieces the warp-specialised kernel cuts each "
             "sequence into, 1 to 64 (default: chosen at launch from the "
             "batch, the SM count and L)"),
    cl::value_desc("N"), cl::cat(category));

cl::opt<int64_t> warpSpecializedStages(
    "warp-specialized-stages",
    cl::desc("fused only: stages of the warp-specialised kernel's input "
             "ring, 2 to 4 (default 4; four fit with one published state "
             "buffer and y in the stages)"),
    cl::value_desc("N"), cl::cat(category));

cl::opt<int64_t> warpSpecializedPublishedBuffers(
    "warp-specialized-published-buffers",
    cl::desc("fused only: buffers of the state the warp-specialised "
             "kernel publishes for its outputs, 1 or 2 (default 1)"),
    cl::value_desc("N"), cl::cat(category));

cl::opt<int64_t> warpSpecializedPieceHeads(
    "warp-specialized-piece-heads",
    cl::desc("fused only: heads a block of the warp-specialised piece "
             "states' kernel walks over one copy of B, 1, 2 or 4, dividing "
             "a group's heads (default: kernels of 1 and of 4 where 4 "
             "divide, the launch picking one with the pieces; else 1)"),
    cl::value_desc("N"), cl::cat(category));

cl::opt<std::string> warpSpecializedY(
    "warp-specialized-y",
    cl::desc("fused only: where the warp-specialised kernel stages y: stage "
             "(in the chunk's stage), tiles (of its own, 32 KB more shared "
             "memory) or auto (default: stage)"),
    cl::value_desc("auto|stage|tiles"), cl::cat(category));

cl::opt<bool> warpSpecializedPanelMaps(
    "warp-specialized-panel-maps",
    cl::desc("fused only: the warp-specialised kernel copies C and B in one "
             "TMA box each, through panel maps"),
    cl::cat(category));

cl::opt<int64_t> foldLoadsAhead(
    "fold-loads-ahead",
    cl::desc("fused only: how many pieces or vectors (see --fold) a thread "
             "of the turn chain's fold loads ahead of its stores, 1 to 8 "
             "(default: 4 pieces with fp32 states, 2 vectors with fp16)"),
    cl::value_desc("N"), cl::cat(category));

cl::opt<bool> profile(
    "profile",
    cl::desc("fused only: a diagnostic build whose chain items record their "
             "phase clocks in the chain_profile workspace (bench/ssd-bench "
             "--profile writes them out)"),
    cl::cat(category));

bool given(const cl::Option &option) { return option.getNumOccurrences() > 0; }

/// Prints one error line and returns the exit code.
int fail(int code, const std::string &message) {
  llvm::errs() << "ssd-compile: error: " << message << "\n";
  return code;
}

/// --dt-limit LO,HI into the spec; LO finite, HI finite or inf.
std::optional<std::string> parseDtLimit(StringRef value, LayerSpec &spec) {
  auto [lo, hi] = value.split(',');
  std::string loText = lo.str(), hiText = hi.str();
  char *end = nullptr;
  spec.dtLimitLo = std::strtod(loText.c_str(), &end);
  bool bad = loText.empty() || *end;
  spec.dtLimitHi = std::strtod(hiText.c_str(), &end);
  bad |= hiText.empty() || *end;
  if (bad)
    return "--dt-limit: '" + value.str() + "' is not LO,HI";
  // Values past the double range parse as +-inf; only HI may be inf.
  bool hiIsInf = hi.trim().equals_insensitive("inf") ||
                 hi.trim().equals_insensitive("+inf");
  if (!std::isfinite(spec.dtLimitLo) ||
      (!std::isfinite(spec.dtLimitHi) && !hiIsInf))
    return "--dt-limit: '" + value.str() +
           "' is out of range (LO finite, HI finite or inf)";
  if (spec.dtLimitLo > spec.dtLimitHi)
    return "--dt-limit: LO " + loText + " exceeds HI " + hiText;
  // (0, inf) is mamba_ssm's "no limit": no clamp is compiled, as a case
  // with that limit runs without one (ssd-run's check of the artifact).
  if (spec.dtLimitLo != 0.0 || !std::isinf(spec.dtLimitHi))
    spec.add("dt_limit");
  return std::nullopt;
}

/// The layer of the layer flags; an error names the flag.
std::optional<std::string> readLayerFlags(LayerSpec &spec) {
  spec.dtype = artifact::DType::BF16;
  const std::pair<cl::opt<int64_t> *, int64_t *> sizes[] = {
      {&nheads, &spec.nheads},
      {&headdim, &spec.headdim},
      {&dstate, &spec.dstate},
      {&ngroups, &spec.ngroups},
      {&chunkSize, &spec.chunkSize}};
  for (auto [flag, field] : sizes) {
    if (!given(*flag))
      continue;
    if (*flag <= 0)
      return "--" + flag->ArgStr.str() + ": '" + std::to_string(*flag) +
             "' is not a positive integer";
    *field = *flag;
  }
  if (given(dtype)) {
    if (dtype != "f32" && dtype != "bf16" && dtype != "f16")
      return "--dtype: unknown type '" + dtype +
             "' (expected bf16, f16 or f32)";
    spec.dtype = *artifact::parseDType(dtype);
  }
  if (given(stateDtype)) {
    if (stateDtype != "f32" && stateDtype != "f16")
      return "--state-dtype: unknown type '" + stateDtype +
             "' (expected f32 or f16)";
    spec.stateDtype = *artifact::parseDType(stateDtype);
  }
  if (given(features))
    if (std::string error = parseFeatures(features, spec); !error.empty())
      return "--features: " + error;
  if (given(dtLimit))
    if (std::optional<std::string> error = parseDtLimit(dtLimit, spec))
      return error;
  return std::nullopt;
}

/// The compiler options; an error names the flag.
std::optional<std::string> readCompileFlags(CompileOptions &options) {
  options.target = target;
  options.strategy = strategy;
  options.fromLowered = fromLowered;
  if (given(stateChain) && stateChain != "segment" && stateChain != "chunk" &&
      stateChain != "lookback" && stateChain != "auto")
    return "--state-chain: unknown chain '" + stateChain +
           "' (expected chunk, lookback, auto or segment)";
  options.stateChain = stateChain;
  if (given(mma) && mma != "mma.sync" && mma != "wgmma")
    return "--mma: unknown instruction '" + mma +
           "' (expected mma.sync or wgmma)";
  options.mma = mma;
  if (given(stateMma) && stateMma != "auto" && stateMma != "mma.sync" &&
      stateMma != "wgmma")
    return "--state-mma: unknown instruction '" + stateMma +
           "' (expected auto, mma.sync or wgmma)";
  options.stateMma = stateMma;
  if (given(copy) && copy != "auto" && copy != "cp.async" && copy != "tma")
    return "--copy: unknown copy '" + copy +
           "' (expected auto, cp.async or tma)";
  options.copy = copy;
  if (given(pBlock)) {
    if (pBlock <= 0 || (pBlock & (pBlock - 1)))
      return "--p-block: expected a positive power of two, got '" +
             std::to_string(pBlock) + "'";
    options.pBlock = pBlock;
  }
  if (given(cluster)) {
    if (cluster != 1 && cluster != 2)
      return "--cluster: expected 1 or 2, got '" + std::to_string(cluster) +
             "'";
    options.cluster = cluster;
  }
  if (given(foldLoadsAhead)) {
    if (foldLoadsAhead < 1 || foldLoadsAhead > 8)
      return "--fold-loads-ahead: expected 1 to 8, got '" +
             std::to_string(foldLoadsAhead) + "'";
    options.foldLoadsAhead = foldLoadsAhead;
  }
  if (given(fold) && fold != "auto" && fold != "pieces" && fold != "vectors")
    return "--fold: unknown fold '" + fold +
           "' (expected auto, pieces or vectors)";
  options.fold = fold;
  if (given(warpSpecialized) && warpSpecialized != "auto" &&
      warpSpecialized != "always" && warpSpecialized != "never")
    return "--warp-specialized: unknown choice '" + warpSpecialized +
           "' (expected auto, always or never)";
  options.warpSpecialized = warpSpecialized;
  if (given(warpSpecializedPieces)) {
    if (warpSpecializedPieces < 1 || warpSpecializedPieces > 64)
      return "--warp-specialized-pieces: expected 1 to 64, got '" +
             std::to_string(warpSpecializedPieces) + "'";
    options.warpSpecializedPieces = warpSpecializedPieces;
  }
  if (given(warpSpecializedStages)) {
    if (warpSpecializedStages < 2 || warpSpecializedStages > 4)
      return "--warp-specialized-stages: expected 2 to 4, got '" +
             std::to_string(warpSpecializedStages) + "'";
    options.warpSpecializedStages = warpSpecializedStages;
  }
  if (given(warpSpecializedPublishedBuffers)) {
    if (warpSpecializedPublishedBuffers < 1 ||
        warpSpecializedPublishedBuffers > 2)
      return "--warp-specialized-published-buffers: expected 1 or 2, got '" +
             std::to_string(warpSpecializedPublishedBuffers) + "'";
    options.warpSpecializedPublishedBuffers = warpSpecializedPublishedBuffers;
  }
  if (given(warpSpecializedPieceHeads)) {
    if (warpSpecializedPieceHeads != 1 && warpSpecializedPieceHeads != 2 &&
        warpSpecializedPieceHeads != 4)
      return "--warp-specialized-piece-heads: expected 1, 2 or 4, got '" +
             std::to_string(warpSpecializedPieceHeads) + "'";
    options.warpSpecializedPieceHeads = warpSpecializedPieceHeads;
  }
  if (given(warpSpecializedY)) {
    if (warpSpecializedY != "auto" && warpSpecializedY != "stage" &&
        warpSpecializedY != "tiles")
      return "--warp-specialized-y: expected auto, stage or tiles, got '" +
             warpSpecializedY + "'";
    options.warpSpecializedY = warpSpecializedY;
  }
  options.warpSpecializedPanelMaps = warpSpecializedPanelMaps;
  options.profile = profile;
  return std::nullopt;
}

bool haveLayerFlags() {
  for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
           &nheads, &headdim, &dstate, &ngroups, &chunkSize, &dtype,
           &stateDtype, &features, &dtLimit})
    if (given(*flag))
      return true;
  return false;
}

/// Checks the flags together and fills `spec` and `options`.
std::optional<std::string> readFlags(std::optional<LayerSpec> &spec,
                                     CompileOptions &options) {
  if (std::optional<std::string> error = readCompileFlags(options))
    return error;
  bool layer = haveLayerFlags();
  if (layer) {
    spec.emplace();
    if (std::optional<std::string> error = readLayerFlags(*spec))
      return error;
  }
  if (outDir.empty())
    return std::string("-o DIR is required");
  if (!inputFile.empty() && layer && !fromLowered)
    return std::string(
        "give an input file or the layer flags (--nheads ...), not both");
  if (inputFile.empty() && !layer)
    return std::string("no input: give FILE.mlir or the layer flags "
                       "(--nheads H --headdim P --dstate N --ngroups G)");
  if (fromLowered && inputFile.empty())
    return std::string("--from-lowered needs an input file");
  if (layer)
    for (cl::opt<int64_t> *flag : {&nheads, &headdim, &dstate, &ngroups})
      if (!given(*flag))
        return "--" + flag->ArgStr.str() + " is required with the layer flags";
  return std::nullopt;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists this tool's flags, not those of the libraries it links.
  cl::HideUnrelatedOptions(category);
  // llvm::cl reports its own errors (unknown flag, missing value) to stderr.
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &llvm::errs()))
    return kBadInput;
  std::optional<LayerSpec> spec;
  CompileOptions options;
  if (std::optional<std::string> error = readFlags(spec, options)) {
    fail(kBadInput, *error);
    llvm::errs() << "(ssd-compile --help prints the usage)\n";
    return kBadInput;
  }

  if (inputFile.empty()) {
    std::optional<CompileError> err = compileLayer(*spec, options, outDir);
    if (!err)
      return kSuccess;
    return fail(err->isUsageError ? kBadInput : kCompileFailed, err->message);
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail(kBadInput,
                inputFile + ": cannot read: " + buffer.getError().message());
  CompileContext context;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &context.get());
  if (!module)
    return fail(kBadInput, context.describe(inputFile + ": invalid IR"));
  std::optional<CompileError> err =
      compileModule(*module, spec, options, outDir);
  if (!err)
    return kSuccess;
  return fail(err->isUsageError ? kBadInput : kCompileFailed,
              context.describe(err->message));
}
