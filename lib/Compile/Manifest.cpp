//===- Manifest.cpp - manifest.json from the lowered module ---------------===//
//
// The lowering leaves the launch description as the `ssd.launch` dictionary
// on the module (tensors, workspaces, optional derived and constants,
// kernels). This file turns it, after the header, the compiler and the
// constants, into the artifact library's typed manifest, which checks it with
// the runtime's rules, and prints that: an artifact this compiler writes
// always loads.
//
//===----------------------------------------------------------------------===//
#include "ssd/Compile/Artifact.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"

#include "ssd/Artifact/Json.h"
#include "ssd/Artifact/Manifest.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ssd;
using artifact::JsonValue;

namespace {
/// Converts MLIR attributes to JSON values; remembers the first failure.
class AttrToJson {
public:
  JsonValue value(Attribute attr, const std::string &path) {
    if (auto b = dyn_cast<BoolAttr>(attr))
      return JsonValue::makeBool(b.getValue());
    if (auto i = dyn_cast<IntegerAttr>(attr)) {
      if (i.getType().isInteger(1))
        return JsonValue::makeBool(i.getValue().getBoolValue());
      return JsonValue::makeInteger(i.getValue().getSExtValue());
    }
    if (auto s = dyn_cast<StringAttr>(attr))
      return JsonValue::makeString(s.getValue().str());
    if (auto f = dyn_cast<FloatAttr>(attr))
      return JsonValue::makeNumber(f.getValueAsDouble());
    if (isa<UnitAttr>(attr))
      return JsonValue::makeBool(true);
    JsonValue list = JsonValue::makeArray();
    if (auto a = dyn_cast<ArrayAttr>(attr)) {
      for (auto [i, element] : llvm::enumerate(a))
        list.array.push_back(
            value(element, path + "[" + std::to_string(i) + "]"));
      return list;
    }
    if (auto a = dyn_cast<DenseI64ArrayAttr>(attr)) {
      for (int64_t v : a.asArrayRef())
        list.array.push_back(JsonValue::makeInteger(v));
      return list;
    }
    if (auto a = dyn_cast<DenseI32ArrayAttr>(attr)) {
      for (int32_t v : a.asArrayRef())
        list.array.push_back(JsonValue::makeInteger(v));
      return list;
    }
    if (auto d = dyn_cast<DictionaryAttr>(attr)) {
      JsonValue object = JsonValue::makeObject();
      for (NamedAttribute member : d)
        object.add(
            member.getName().str(),
            value(member.getValue(), path + "." + member.getName().str()));
      return object;
    }
    std::string text;
    llvm::raw_string_ostream printed(text);
    printed << attr;
    fail(path + ": " + text +
         " has no JSON form (expected a dictionary, array, string, integer "
         "or bool)");
    return JsonValue();
  }

  /// `derived` is ordered: a dictionary keeps its own order, an array of
  /// [name, expression] pairs or of one-entry dictionaries the array order.
  JsonValue derived(Attribute attr) {
    auto array = dyn_cast<ArrayAttr>(attr);
    if (!array)
      return value(attr, "ssd.launch.derived");
    JsonValue object = JsonValue::makeObject();
    for (auto [i, entry] : llvm::enumerate(array)) {
      std::string path = "ssd.launch.derived[" + std::to_string(i) + "]";
      if (auto pair = dyn_cast<ArrayAttr>(entry);
          pair && pair.size() == 2 && isa<StringAttr>(pair[0]))
        object.add(cast<StringAttr>(pair[0]).str(),
                   value(pair[1], path + "[1]"));
      else if (auto one = dyn_cast<DictionaryAttr>(entry);
               one && one.size() == 1)
        object.add(one.begin()->getName().str(),
                   value(one.begin()->getValue(), path));
      else
        fail(path + ": expected a [name, expression] pair");
    }
    return object;
  }

  void fail(std::string message) {
    if (error.empty())
      error = std::move(message);
  }

  std::string error;
};
} // namespace

/// Whether the launch's kernels are the warp-specialised ones (whose
/// options are their own: the persistent kernel's do not apply).
static bool holdsWarpSpecialized(DictionaryAttr launch) {
  auto kernels = launch.getAs<ArrayAttr>("kernels");
  if (!kernels)
    return false;
  return llvm::any_of(kernels, [](Attribute kernel) {
    auto entry = dyn_cast<DictionaryAttr>(kernel);
    auto name = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    return name && name.getValue() == kWarpSpecializedKernelName;
  });
}

/// The persistent fused kernel's options, as built (defaults resolved).
static void addPersistentOptions(JsonValue &opts,
                                 const CompileOptions &options) {
  opts.add("state_chain", JsonValue::makeString(options.stateChain.empty()
                                                    ? "auto"
                                                    : options.stateChain));
  opts.add("mma", JsonValue::makeString(options.mma.empty() ? "mma.sync"
                                                            : options.mma));
  // The copy the kernel was built with: auto resolves by the target.
  bool autoCopy = options.copy.empty() || options.copy == "auto";
  opts.add("copy",
           JsonValue::makeString(!autoCopy                    ? options.copy
                                 : options.target == "sm_90a" ? "tma"
                                                              : "cp.async"));
  if (options.profile)
    opts.add("profile", JsonValue::makeBool(true));
  if (options.cluster > 1)
    opts.add("cluster", JsonValue::makeInteger(options.cluster));
  if (options.foldLoadsAhead > 0)
    opts.add("fold_loads_ahead",
             JsonValue::makeInteger(options.foldLoadsAhead));
  if (!options.stateMma.empty() && options.stateMma != "auto")
    opts.add("state_mma", JsonValue::makeString(options.stateMma));
  if (!options.fold.empty() && options.fold != "auto")
    opts.add("fold", JsonValue::makeString(options.fold));
}

/// The warp-specialised kernels' options that were given.
static void addWarpSpecializedOptions(JsonValue &opts,
                                      const CompileOptions &options) {
  if (options.warpSpecializedPieces > 0)
    opts.add("warp_specialized_pieces",
             JsonValue::makeInteger(options.warpSpecializedPieces));
  if (options.warpSpecializedStages > 0)
    opts.add("warp_specialized_stages",
             JsonValue::makeInteger(options.warpSpecializedStages));
  if (options.warpSpecializedPublishedBuffers > 0)
    opts.add("warp_specialized_published_buffers",
             JsonValue::makeInteger(options.warpSpecializedPublishedBuffers));
  if (options.warpSpecializedPieceHeads > 0)
    opts.add("warp_specialized_piece_heads",
             JsonValue::makeInteger(options.warpSpecializedPieceHeads));
  if (!options.warpSpecializedY.empty())
    opts.add("warp_specialized_y",
             JsonValue::makeString(options.warpSpecializedY));
  if (options.warpSpecializedPanelMaps)
    opts.add("warp_specialized_panel_maps", JsonValue::makeBool(true));
}

/// The compiler entry: who wrote the artifact, with which options. Where
/// the fused strategy gave the warp-specialised kernels, `kernel` says so
/// and only their own options follow.
static JsonValue compilerJson(const LayerSpec &spec,
                              const CompileOptions &options,
                              bool warpSpecialized) {
  JsonValue compiler = JsonValue::makeObject();
  compiler.add("name", JsonValue::makeString("ssd-compile"));
  compiler.add("version", JsonValue::makeString(kCompilerVersion));
  JsonValue opts = JsonValue::makeObject();
  opts.add("strategy", JsonValue::makeString(options.strategy));
  if (options.strategy == "fused") {
    opts.add("kernel",
             JsonValue::makeString(warpSpecialized ? "warp_specialized"
                                                   : "persistent"));
    if (!options.warpSpecialized.empty() && options.warpSpecialized != "auto")
      opts.add("warp_specialized",
               JsonValue::makeString(options.warpSpecialized));
    if (!warpSpecialized)
      addPersistentOptions(opts, options);
    else
      addWarpSpecializedOptions(opts, options);
  }
  opts.add("target", JsonValue::makeString(options.target));
  // An infinite HI is null, as case.json writes it.
  if (spec.has("dt_limit"))
    opts.add("dt_limit",
             JsonValue::makeArray({JsonValue::makeNumber(spec.dtLimitLo),
                                   JsonValue::makeNumber(spec.dtLimitHi)}));
  compiler.add("options", std::move(opts));
  return compiler;
}

/// The specialisation constants of the layer.
static JsonValue constantsJson(const LayerSpec &spec) {
  artifact::Constants constants;
  constants.nheads = spec.nheads;
  constants.headdim = spec.headdim;
  constants.dstate = spec.dstate;
  constants.ngroups = spec.ngroups;
  constants.chunkSize = spec.chunkSize;
  constants.dtype = spec.dtype;
  constants.stateDtype = spec.stateDtype;
  constants.features = spec.features;
  return artifact::constantsToJson(constants);
}

static const char *kLaunchKeys[] = {"constants", "derived", "tensors",
                                    "workspaces", "kernels"};

std::optional<std::string> ssd::writeManifest(ModuleOp module,
                                              const LayerSpec &spec,
                                              const CompileOptions &options,
                                              const std::string &target,
                                              std::string &error) {
  auto launch = module->getAttrOfType<DictionaryAttr>("ssd.launch");
  if (!launch) {
    error = "the lowered module has no 'ssd.launch' dictionary attribute "
            "(the launch description of the kernels)";
    return std::nullopt;
  }
  for (NamedAttribute member : launch)
    if (!llvm::is_contained(kLaunchKeys, member.getName().getValue()) &&
        !member.getName().getValue().starts_with("x-")) {
      error = "ssd.launch: unknown key '" + member.getName().str() +
              "' (expected tensors, workspaces, derived, constants, kernels)";
      return std::nullopt;
    }
  for (const char *key : {"tensors", "workspaces", "kernels"})
    if (!launch.get(key)) {
      error = std::string("ssd.launch: missing key '") + key + "'";
      return std::nullopt;
    }

  AttrToJson convert;
  JsonValue doc = JsonValue::makeObject();
  doc.add("format", JsonValue::makeString("ssd-artifact"));
  doc.add("format_version",
          JsonValue::makeInteger(artifact::kManifestFormatVersion));
  doc.add("target", JsonValue::makeString(target));
  doc.add("compiler",
          compilerJson(spec, options, holdsWarpSpecialized(launch)));
  JsonValue constants = constantsJson(spec);
  // The lowering may restate the specialisation constants; they must agree
  // with the layer. Other entries are extra integer constants.
  if (auto extra = launch.getAs<DictionaryAttr>("constants"))
    for (NamedAttribute member : extra) {
      StringRef key = member.getName().getValue();
      if (!constants.find(key)) {
        constants.add(key.str(),
                      convert.value(member.getValue(),
                                    "ssd.launch.constants." + key.str()));
        continue;
      }
      int64_t expected = llvm::StringSwitch<int64_t>(key)
                             .Case("nheads", spec.nheads)
                             .Case("headdim", spec.headdim)
                             .Case("dstate", spec.dstate)
                             .Case("ngroups", spec.ngroups)
                             .Case("chunk_size", spec.chunkSize)
                             .Default(-1);
      auto value = dyn_cast<IntegerAttr>(member.getValue());
      if (expected >= 0 && (!value || value.getInt() != expected))
        convert.fail("ssd.launch.constants." + key.str() +
                     " disagrees with the layer (" + std::to_string(expected) +
                     ")");
    }
  doc.add("constants", std::move(constants));
  if (Attribute derived = launch.get("derived"))
    doc.add("derived", convert.derived(derived));
  for (const char *key : {"tensors", "workspaces", "kernels"})
    doc.add(key,
            convert.value(launch.get(key), std::string("ssd.launch.") + key));
  if (!convert.error.empty()) {
    error = convert.error;
    return std::nullopt;
  }
  artifact::Expected<artifact::Manifest> manifest = artifact::readManifest(doc);
  if (!manifest.ok()) {
    error = "the runtime rejects the generated manifest: " + manifest.message();
    return std::nullopt;
  }
  return artifact::printManifest(*manifest);
}
