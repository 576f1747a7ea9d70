//===- Manifest.cpp - manifest.json from the lowered module ---------------===//
//
// The lowering leaves the launch description as the `ssd.launch` dictionary
// on the module (tensors, workspaces, optional derived and constants,
// kernels). This file writes it, after the header, the compiler and the
// constants, as manifest.json, and has the runtime's parser check the
// result, so an artifact that this compiler writes always loads.
//
//===----------------------------------------------------------------------===//
#include "ssd/Compile/Artifact.h"

#include "ssd/Runtime/Json.h"
#include "ssd/Runtime/Manifest.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace ssd;

namespace {
/// Writes MLIR attributes as JSON values; remembers the first failure.
class AttrWriter {
public:
  explicit AttrWriter(llvm::json::OStream &os) : os(os) {}

  void value(Attribute attr, const std::string &path) {
    if (!error.empty())
      return;
    if (auto b = dyn_cast<BoolAttr>(attr))
      return os.value(b.getValue());
    if (auto i = dyn_cast<IntegerAttr>(attr)) {
      if (i.getType().isInteger(1))
        return os.value(i.getValue().getBoolValue());
      return os.value(i.getValue().getSExtValue());
    }
    if (auto s = dyn_cast<StringAttr>(attr))
      return os.value(s.getValue());
    if (auto f = dyn_cast<FloatAttr>(attr))
      return os.value(f.getValueAsDouble());
    if (isa<UnitAttr>(attr))
      return os.value(true);
    if (auto a = dyn_cast<ArrayAttr>(attr))
      return os.array([&] {
        for (auto [i, element] : llvm::enumerate(a))
          value(element, path + "[" + std::to_string(i) + "]");
      });
    if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
      return os.array([&] {
        for (int64_t v : a.asArrayRef())
          os.value(v);
      });
    if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
      return os.array([&] {
        for (int32_t v : a.asArrayRef())
          os.value(static_cast<int64_t>(v));
      });
    if (auto d = dyn_cast<DictionaryAttr>(attr))
      return os.object([&] {
        for (NamedAttribute member : d)
          os.attributeBegin(member.getName().getValue()),
              value(member.getValue(), path + "." + member.getName().str()),
              os.attributeEnd();
      });
    std::string text;
    llvm::raw_string_ostream printed(text);
    printed << attr;
    error = path + ": " + text +
            " has no JSON form (expected a dictionary, array, string, "
            "integer or bool)";
    os.value(nullptr);
  }

  /// `derived` is ordered: a dictionary keeps its own order, an array of
  /// [name, expression] pairs or of one-entry dictionaries the array order.
  void derived(Attribute attr) {
    auto array = dyn_cast<ArrayAttr>(attr);
    if (!array)
      return value(attr, "ssd.launch.derived");
    os.object([&] {
      for (auto [i, entry] : llvm::enumerate(array)) {
        std::string path = "ssd.launch.derived[" + std::to_string(i) + "]";
        if (auto pair = dyn_cast<ArrayAttr>(entry);
            pair && pair.size() == 2 && isa<StringAttr>(pair[0])) {
          os.attributeBegin(cast<StringAttr>(pair[0]).getValue());
          value(pair[1], path + "[1]");
          os.attributeEnd();
        } else if (auto one = dyn_cast<DictionaryAttr>(entry);
                   one && one.size() == 1) {
          os.attributeBegin(one.begin()->getName().getValue());
          value(one.begin()->getValue(), path);
          os.attributeEnd();
        } else if (error.empty()) {
          error = path + ": expected a [name, expression] pair";
        }
      }
    });
  }

  std::string error;

private:
  llvm::json::OStream &os;
};
} // namespace

/// Pretty-prints `v` with two-space indentation; arrays of scalars stay on
/// one line (shapes, grids), everything else is one member per line.
static void printPretty(const rt::JsonValue &v, int indent, std::string &out) {
  auto isScalar = [](const rt::JsonValue &e) {
    return !e.isArray() && !e.isObject();
  };
  std::string pad(indent + 2, ' ');
  if (v.isArray() && !v.array.empty() &&
      !llvm::all_of(v.array, isScalar)) {
    out += "[\n";
    for (size_t i = 0; i < v.array.size(); ++i) {
      out += pad;
      printPretty(v.array[i], indent + 2, out);
      out += i + 1 < v.array.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "]";
    return;
  }
  if (v.isObject() && !v.object.empty()) {
    out += "{\n";
    for (size_t i = 0; i < v.object.size(); ++i) {
      rt::JsonValue key;
      key.kind = rt::JsonValue::Kind::String;
      key.string = v.object[i].first;
      out += pad + key.serialize() + ": ";
      printPretty(v.object[i].second, indent + 2, out);
      out += i + 1 < v.object.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "}";
    return;
  }
  std::string compact = v.serialize();
  // serialize() is compact; give inline arrays a space after each comma.
  if (v.isArray()) {
    std::string spaced;
    bool inString = false;
    for (size_t i = 0; i < compact.size(); ++i) {
      char ch = compact[i];
      if (ch == '"' && (i == 0 || compact[i - 1] != '\\'))
        inString = !inString;
      spaced += ch;
      if (ch == ',' && !inString)
        spaced += ' ';
    }
    compact = spaced;
  }
  out += compact;
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

  std::string text;
  llvm::raw_string_ostream out(text);
  llvm::json::OStream os(out);
  AttrWriter writer(os);
  os.object([&] {
    os.attribute("format", "ssd-artifact");
    os.attribute("format_version", rt::kManifestFormatVersion);
    os.attribute("target", target);
    os.attributeObject("compiler", [&] {
      os.attribute("name", "ssd-compile");
      os.attribute("version", kCompilerVersion);
      os.attributeObject("options", [&] {
        os.attribute("strategy", options.strategy);
        if (options.strategy == "fused") {
          os.attribute("state_chain", options.stateChain.empty()
                                          ? "chunk"
                                          : options.stateChain);
          os.attribute("mma", options.mma.empty() ? "mma.sync" : options.mma);
        }
        os.attribute("target", options.target);
        if (spec.has("dt_limit"))
          os.attributeArray("dt_limit", [&] {
            os.value(spec.dtLimitLo);
            if (std::isinf(spec.dtLimitHi))
              os.value(nullptr); // +inf, as case.json writes it
            else
              os.value(spec.dtLimitHi);
          });
      });
    });
    os.attributeObject("constants", [&] {
      os.attribute("nheads", spec.nheads);
      os.attribute("headdim", spec.headdim);
      os.attribute("dstate", spec.dstate);
      os.attribute("ngroups", spec.ngroups);
      os.attribute("chunk_size", spec.chunkSize);
      os.attribute("dtype", spec.dtype);
      os.attribute("state_dtype", spec.stateDtype);
      os.attributeArray("features", [&] {
        for (const std::string &f : spec.features)
          os.value(f);
      });
      // The lowering may restate the specialisation constants; they must
      // agree with the layer. Other entries are extra integer constants.
      static const char *kStandard[] = {"nheads",     "headdim", "dstate",
                                        "ngroups",    "chunk_size", "dtype",
                                        "state_dtype", "features"};
      if (auto extra = launch.getAs<DictionaryAttr>("constants"))
        for (NamedAttribute member : extra) {
          StringRef key = member.getName().getValue();
          if (llvm::is_contained(kStandard, key)) {
            int64_t expected = llvm::StringSwitch<int64_t>(key)
                                   .Case("nheads", spec.nheads)
                                   .Case("headdim", spec.headdim)
                                   .Case("dstate", spec.dstate)
                                   .Case("ngroups", spec.ngroups)
                                   .Case("chunk_size", spec.chunkSize)
                                   .Default(-1);
            auto value = dyn_cast<IntegerAttr>(member.getValue());
            if (expected >= 0 && (!value || value.getInt() != expected) &&
                writer.error.empty())
              writer.error = "ssd.launch.constants." + key.str() +
                             " disagrees with the layer (" +
                             std::to_string(expected) + ")";
            continue;
          }
          os.attributeBegin(member.getName().getValue());
          writer.value(member.getValue(),
                       "ssd.launch.constants." + member.getName().str());
          os.attributeEnd();
        }
    });
    if (Attribute derived = launch.get("derived")) {
      os.attributeBegin("derived");
      writer.derived(derived);
      os.attributeEnd();
    }
    for (const char *key : {"tensors", "workspaces", "kernels"}) {
      os.attributeBegin(key);
      writer.value(launch.get(key), std::string("ssd.launch.") + key);
      os.attributeEnd();
    }
  });
  if (!writer.error.empty()) {
    error = writer.error;
    return std::nullopt;
  }
  // Re-read in document order and lay it out for people.
  rt::Expected<rt::JsonValue> tree = rt::parseJson(text);
  if (!tree.ok()) {
    error = "internal error: unreadable manifest: " + tree.message();
    return std::nullopt;
  }
  std::string pretty;
  printPretty(*tree, 0, pretty);
  pretty += "\n";
  rt::Expected<rt::Manifest> parsed = rt::parseManifest(pretty);
  if (!parsed.ok()) {
    error = "the runtime rejects the generated manifest: " + parsed.message();
    return std::nullopt;
  }
  return pretty;
}
