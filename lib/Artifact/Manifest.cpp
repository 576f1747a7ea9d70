//===- Manifest.cpp - Reading and validating artifact manifests -----------===//
//
// Everything a launch needs is checked here, once, when the artifact loads:
// unknown keys, types, names that refer to nothing, expressions that read
// undefined symbols, TMA boxes the hardware cannot copy. Launch-time checks
// then only concern the arguments.
//
//===----------------------------------------------------------------------===//

#include "ssd/Artifact/Manifest.h"

#include "ManifestNames.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <set>

using namespace ssd::artifact;

const std::vector<std::string> &ssd::artifact::knownTensorNames() {
  static const std::vector<std::string> names = {
      "x",           "dt",         "A",
      "B",           "C",          "D",
      "z",           "dt_bias",    "initial_states",
      "seq_idx",     "cu_seqlens", "y",
      "final_states"};
  return names;
}

const TensorSpec *Manifest::findTensor(std::string_view name) const {
  for (const TensorSpec &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

const WorkspaceSpec *Manifest::findWorkspace(std::string_view name) const {
  for (const WorkspaceSpec &w : workspaces)
    if (w.name == name)
      return &w;
  return nullptr;
}

SymbolTable Manifest::constantSymbols() const {
  const Constants &c = constants;
  SymbolTable s = {{"nheads", c.nheads},        {"h", c.nheads},
                   {"headdim", c.headdim},      {"p", c.headdim},
                   {"dstate", c.dstate},        {"n", c.dstate},
                   {"ngroups", c.ngroups},      {"g", c.ngroups},
                   {"chunk_size", c.chunkSize}, {"Q", c.chunkSize}};
  for (const auto &[name, value] : c.extra)
    s[name] = value;
  return s;
}

namespace {

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i ? ", " : "") + names[i];
  return out;
}

bool isIdentifier(std::string_view s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// Reads one JSON object, remembering its key path for messages and which
/// keys were read, so that unknown keys (usually typos) are reported.
class ObjectReader {
public:
  ObjectReader(const JsonValue &value, std::string path)
      : value(value), path(std::move(path)) {}

  Status expectObject() const {
    if (!value.isObject())
      return err(path, "expected an object, got " + value.describe());
    return Status::success();
  }

  std::string key(std::string_view k) const {
    return path.empty() ? std::string(k) : path + "." + std::string(k);
  }

  const JsonValue *get(std::string_view k) {
    read.insert(std::string(k));
    return value.find(k);
  }

  Status required(std::string_view k, const JsonValue *&out) {
    out = get(k);
    if (!out)
      return err(path.empty() ? "manifest" : path,
                 "missing required key \"" + std::string(k) + "\"");
    return Status::success();
  }

  Status string(std::string_view k, std::string &out, bool isRequired = true) {
    const JsonValue *v = get(k);
    if (!v)
      return isRequired ? missing(k) : Status::success();
    if (!v->isString())
      return err(key(k), "expected a string, got " + v->describe());
    out = v->string;
    return Status::success();
  }

  Status integer(std::string_view k, int64_t &out, bool isRequired,
                 int64_t min = 0) {
    const JsonValue *v = get(k);
    if (!v)
      return isRequired ? missing(k) : Status::success();
    return readInteger(*v, key(k), out, min);
  }

  Status boolean(std::string_view k, bool &out) {
    const JsonValue *v = get(k);
    if (!v)
      return Status::success();
    if (!v->isBool())
      return err(key(k), "expected true or false, got " + v->describe());
    out = v->boolean;
    return Status::success();
  }

  /// A string drawn from `choices`; keeps the default when absent.
  template <typename E, size_t N>
  Status choice(std::string_view k, const NameOf<E> (&choices)[N], E &out,
                bool isRequired = false) {
    const JsonValue *v = get(k);
    if (!v)
      return isRequired ? missing(k) : Status::success();
    std::vector<std::string> names;
    for (const auto &c : choices)
      names.push_back(c.first);
    if (v->isString())
      for (const auto &c : choices)
        if (v->string == c.first) {
          out = c.second;
          return Status::success();
        }
    return err(key(k), "expected one of " + joinNames(names) + ", got " +
                           v->describe());
  }

  Status expr(std::string_view k, Expr &out, bool isRequired = true) {
    const JsonValue *v = get(k);
    if (!v)
      return isRequired ? missing(k) : Status::success();
    return readExpr(*v, key(k), out);
  }

  /// Reports keys never read; keys starting with "x-" are extensions.
  Status noUnknownKeys() const {
    for (const JsonValue::Member &m : value.object)
      if (!read.count(m.first) && m.first.rfind("x-", 0) != 0)
        return err(key(m.first), "unknown key");
    return Status::success();
  }

  static Status err(const std::string &where, const std::string &what) {
    return Status::error(where + ": " + what);
  }

  static Status readInteger(const JsonValue &v, const std::string &where,
                            int64_t &out, int64_t min) {
    if (!v.isNumber() || !v.isInteger)
      return err(where, "expected an integer, got " + v.describe());
    if (v.integer < min)
      return err(where, "expected an integer >= " + std::to_string(min) +
                            ", got " + std::to_string(v.integer));
    out = v.integer;
    return Status::success();
  }

  /// Integers or strings in the expression grammar.
  static Status readExpr(const JsonValue &v, const std::string &where,
                         Expr &out) {
    if (v.isNumber() && v.isInteger) {
      out = Expr::constant(v.integer);
      return Status::success();
    }
    if (!v.isString())
      return err(where, "expected an integer or an expression string, got " +
                            v.describe());
    Expected<Expr> e = Expr::parse(v.string);
    if (!e.ok())
      return err(where, e.message());
    out = e.take();
    return Status::success();
  }

  Status missing(std::string_view k) const {
    return err(path.empty() ? "manifest" : path,
               "missing required key \"" + std::string(k) + "\"");
  }

private:
  const JsonValue &value;
  std::string path;
  std::set<std::string> read;
};

std::string indexKey(const std::string &base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

Status readArray(const JsonValue *v, const std::string &where, size_t minSize,
                 size_t maxSize) {
  if (!v->isArray())
    return ObjectReader::err(where, "expected an array, got " + v->describe());
  if (v->array.size() < minSize || v->array.size() > maxSize)
    return ObjectReader::err(
        where,
        "expected " + std::to_string(minSize) +
            (maxSize == minSize ? "" : " to " + std::to_string(maxSize)) +
            " elements, got " + std::to_string(v->array.size()));
  return Status::success();
}

Status readDType(ObjectReader &r, std::string_view k, DType &out,
                 bool isRequired, std::initializer_list<DType> allowed = {}) {
  std::string name;
  const JsonValue *v = r.get(k);
  if (!v)
    return isRequired ? r.missing(k) : Status::success();
  std::optional<DType> t = v->isString() ? parseDType(v->string) : std::nullopt;
  bool ok =
      t && (allowed.size() == 0 ||
            std::find(allowed.begin(), allowed.end(), *t) != allowed.end());
  if (!ok) {
    std::vector<std::string> names;
    if (allowed.size() == 0)
      for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64,
                      DType::I8, DType::U8, DType::I32, DType::I64})
        names.push_back(dtypeName(d));
    for (DType d : allowed)
      names.push_back(dtypeName(d));
    return ObjectReader::err(r.key(k), "expected a dtype (" + joinNames(names) +
                                           "), got " + v->describe());
  }
  out = *t;
  return Status::success();
}

Status readExprList(const JsonValue *v, const std::string &where,
                    std::vector<Expr> &out, size_t minSize, size_t maxSize) {
  SSD_RETURN_IF_ERROR(readArray(v, where, minSize, maxSize));
  out.clear();
  for (size_t i = 0; i < v->array.size(); ++i) {
    Expr e = Expr::constant(0);
    SSD_RETURN_IF_ERROR(
        ObjectReader::readExpr(v->array[i], indexKey(where, i), e));
    out.push_back(e);
  }
  return Status::success();
}

Status readIntList(const JsonValue *v, const std::string &where,
                   std::vector<int64_t> &out, size_t minSize, size_t maxSize,
                   int64_t min) {
  SSD_RETURN_IF_ERROR(readArray(v, where, minSize, maxSize));
  out.clear();
  for (size_t i = 0; i < v->array.size(); ++i) {
    int64_t x;
    SSD_RETURN_IF_ERROR(
        ObjectReader::readInteger(v->array[i], indexKey(where, i), x, min));
    out.push_back(x);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

Status readCompiler(const JsonValue &v, CompilerInfo &out) {
  ObjectReader r(v, "compiler");
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(r.string("name", out.name));
  SSD_RETURN_IF_ERROR(r.string("version", out.version));
  if (const JsonValue *opts = r.get("options")) {
    if (!opts->isObject())
      return ObjectReader::err("compiler.options",
                               "expected an object, got " + opts->describe());
    out.options = *opts;
  } else {
    out.options.kind = JsonValue::Kind::Object;
  }
  return r.noUnknownKeys();
}

Status readConstants(const JsonValue &v, Constants &out) {
  ObjectReader r(v, "constants");
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(r.integer("nheads", out.nheads, true, 1));
  SSD_RETURN_IF_ERROR(r.integer("headdim", out.headdim, true, 1));
  SSD_RETURN_IF_ERROR(r.integer("dstate", out.dstate, true, 1));
  SSD_RETURN_IF_ERROR(r.integer("ngroups", out.ngroups, true, 1));
  SSD_RETURN_IF_ERROR(r.integer("chunk_size", out.chunkSize, true, 1));
  if (out.nheads % out.ngroups != 0)
    return ObjectReader::err(
        "constants.ngroups",
        std::to_string(out.ngroups) +
            " does not divide nheads = " + std::to_string(out.nheads));
  SSD_RETURN_IF_ERROR(readDType(r, "dtype", out.dtype, true,
                                {DType::F32, DType::BF16, DType::F16}));
  SSD_RETURN_IF_ERROR(readDType(r, "state_dtype", out.stateDtype, true,
                                {DType::F32, DType::F16}));
  static const std::vector<std::string> knownFeatures = {"D",
                                                         "Dhp",
                                                         "z",
                                                         "dt_bias",
                                                         "softplus",
                                                         "dt_limit",
                                                         "initial_states",
                                                         "seq_idx",
                                                         "varlen"};
  if (const JsonValue *f = r.get("features")) {
    SSD_RETURN_IF_ERROR(readArray(f, "constants.features", 0, 64));
    for (size_t i = 0; i < f->array.size(); ++i) {
      const JsonValue &e = f->array[i];
      std::string where = indexKey("constants.features", i);
      if (!e.isString() || std::find(knownFeatures.begin(), knownFeatures.end(),
                                     e.string) == knownFeatures.end())
        return ObjectReader::err(where, "expected a feature (" +
                                            joinNames(knownFeatures) +
                                            "), got " + e.describe());
      if (std::find(out.features.begin(), out.features.end(), e.string) !=
          out.features.end())
        return ObjectReader::err(where,
                                 "duplicate feature \"" + e.string + "\"");
      out.features.push_back(e.string);
    }
  } else {
    return r.missing("features");
  }
  // Any other key is an extra integer constant the kernels specialise on.
  static const std::set<std::string> reserved = {"b", "L", "nc", "num_sms", "h",
                                                 "p", "n", "g",  "Q"};
  static const std::set<std::string> named = {
      "nheads",     "headdim", "dstate",      "ngroups",
      "chunk_size", "dtype",   "state_dtype", "features"};
  for (const JsonValue::Member &m : v.object) {
    if (named.count(m.first) || m.first.rfind("x-", 0) == 0)
      continue;
    std::string where = "constants." + m.first;
    if (!isIdentifier(m.first) || reserved.count(m.first))
      return ObjectReader::err(where, "not usable as a constant name");
    int64_t value;
    SSD_RETURN_IF_ERROR(
        ObjectReader::readInteger(m.second, where, value, INT64_MIN));
    out.extra.emplace_back(m.first, value);
  }
  return Status::success();
}

Status readTensor(const JsonValue &v, const std::string &path, TensorSpec &t) {
  ObjectReader r(v, path);
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(r.string("name", t.name));
  const auto &known = knownTensorNames();
  if (std::find(known.begin(), known.end(), t.name) == known.end())
    return ObjectReader::err(r.key("name"),
                             "unknown tensor \"" + t.name +
                                 "\" (known: " + joinNames(known) + ")");
  SSD_RETURN_IF_ERROR(readDType(r, "dtype", t.dtype, true));
  const JsonValue *shape;
  SSD_RETURN_IF_ERROR(r.required("shape", shape));
  SSD_RETURN_IF_ERROR(readExprList(shape, r.key("shape"), t.shape, 0, 8));
  SSD_RETURN_IF_ERROR(r.integer("alignment", t.alignment, false, 1));
  if (!isPowerOfTwo(t.alignment))
    return ObjectReader::err(r.key("alignment"),
                             "expected a power of two, got " +
                                 std::to_string(t.alignment));
  SSD_RETURN_IF_ERROR(r.choice("layout", kLayoutNames, t.layout));
  SSD_RETURN_IF_ERROR(r.boolean("optional", t.optional));
  SSD_RETURN_IF_ERROR(r.boolean("output", t.output));
  return r.noUnknownKeys();
}

Status readWorkspace(const JsonValue &v, const std::string &path,
                     WorkspaceSpec &w) {
  ObjectReader r(v, path);
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(r.string("name", w.name));
  if (!isIdentifier(w.name))
    return ObjectReader::err(r.key("name"),
                             "\"" + w.name + "\" is not an identifier");
  bool hasSize = v.find("size") != nullptr;
  if (const JsonValue *shape = r.get("shape")) {
    SSD_RETURN_IF_ERROR(readExprList(shape, r.key("shape"), w.shape, 1, 8));
    SSD_RETURN_IF_ERROR(readDType(r, "dtype", w.dtype, true));
  } else if (v.find("dtype")) {
    return ObjectReader::err(r.key("dtype"), "only meaningful with \"shape\"");
  }
  if (hasSize) {
    SSD_RETURN_IF_ERROR(r.expr("size", w.size));
  } else if (w.shape.empty()) {
    return ObjectReader::err(path, "needs \"size\" (bytes) or \"shape\" and "
                                   "\"dtype\"");
  } else {
    // Bytes of a dense array of the shape.
    w.sizeGiven = false;
    std::string text = std::to_string(dtypeBytes(w.dtype));
    for (const Expr &e : w.shape)
      text += "*(" + e.text() + ")";
    w.size = *Expr::parse(text);
  }
  SSD_RETURN_IF_ERROR(r.integer("alignment", w.alignment, false, 1));
  if (!isPowerOfTwo(w.alignment))
    return ObjectReader::err(r.key("alignment"),
                             "expected a power of two, got " +
                                 std::to_string(w.alignment));
  SSD_RETURN_IF_ERROR(r.boolean("zero_init", w.zeroInit));
  return r.noUnknownKeys();
}

Status readTensorMap(ObjectReader &r, const Manifest &m, ParamSpec &p) {
  TensorMapSpec &tm = p.tensorMap;
  SSD_RETURN_IF_ERROR(r.string("tensor", p.name));
  const TensorSpec *t = m.findTensor(p.name);
  if (!t)
    return ObjectReader::err(r.key("tensor"), "no tensor named \"" + p.name +
                                                  "\" in \"tensors\"");
  size_t rank = t->shape.size();
  if (rank < 1 || rank > 5)
    return ObjectReader::err(r.key("tensor"),
                             "TMA copies tensors of rank 1 to 5; \"" + p.name +
                                 "\" has rank " + std::to_string(rank));
  if (t->layout == Layout::Strided)
    return ObjectReader::err(r.key("tensor"),
                             "TMA needs an innermost stride of 1; tensor \"" +
                                 p.name + "\" is declared strided");
  const JsonValue *box;
  SSD_RETURN_IF_ERROR(r.required("box", box));
  SSD_RETURN_IF_ERROR(readIntList(box, r.key("box"), tm.box, rank, rank, 1));
  for (size_t i = 0; i < rank; ++i)
    if (tm.box[i] > 256)
      return ObjectReader::err(indexKey(r.key("box"), i),
                               "TMA box sizes are at most 256, got " +
                                   std::to_string(tm.box[i]));
  tm.elementStrides.assign(rank, 1);
  if (const JsonValue *es = r.get("element_strides")) {
    SSD_RETURN_IF_ERROR(readIntList(es, r.key("element_strides"),
                                    tm.elementStrides, rank, rank, 1));
    for (size_t i = 0; i < rank; ++i)
      if (tm.elementStrides[i] > 8)
        return ObjectReader::err(indexKey(r.key("element_strides"), i),
                                 "TMA element strides are at most 8");
  }
  SSD_RETURN_IF_ERROR(r.choice("swizzle", kSwizzleNames, tm.swizzle));
  SSD_RETURN_IF_ERROR(r.choice("interleave", kInterleaveNames, tm.interleave));
  SSD_RETURN_IF_ERROR(
      r.choice("l2_promotion", kL2PromotionNames, tm.l2Promotion));
  SSD_RETURN_IF_ERROR(r.choice("oob_fill", kOobFillNames, tm.oobFill));
  SSD_RETURN_IF_ERROR(r.choice("pass", kPassNames, tm.byValue));
  SSD_RETURN_IF_ERROR(r.integer("panel_dim", tm.panelDim, false));
  if (tm.panelDim >= 0) {
    // A dimension the map adds: at most 5 in all, beside one that is not
    // the innermost.
    if (rank < 2 || rank > 4)
      return ObjectReader::err(r.key("panel_dim"),
                               "a panel dimension needs a tensor of rank 2 to "
                               "4; \"" +
                                   p.name + "\" has rank " +
                                   std::to_string(rank));
    if (tm.panelDim > int64_t(rank) - 2)
      return ObjectReader::err(
          r.key("panel_dim"),
          "expected a dimension from 0 to " + std::to_string(rank - 2) +
              " (not the innermost), got " + std::to_string(tm.panelDim));
  }

  // The innermost box row must fit the swizzle span and, without interleave,
  // be a whole number of 16-byte units (cuTensorMapEncodeTiled's rules).
  int64_t innerBytes = tm.box[rank - 1] * int64_t(dtypeBytes(t->dtype));
  if (tm.interleave == Interleave::None) {
    if (innerBytes % 16 != 0)
      return ObjectReader::err(r.key("box"),
                               "the innermost box row is " +
                                   std::to_string(innerBytes) +
                                   " bytes; TMA needs a multiple of 16");
    int64_t span = tm.swizzle == Swizzle::B32    ? 32
                   : tm.swizzle == Swizzle::B64  ? 64
                   : tm.swizzle == Swizzle::B128 ? 128
                                                 : 0;
    if (span && innerBytes > span)
      return ObjectReader::err(r.key("box"), "the innermost box row is " +
                                                 std::to_string(innerBytes) +
                                                 " bytes, more than the " +
                                                 std::to_string(span) +
                                                 "-byte swizzle span");
  } else if (tm.interleave == Interleave::B32 && tm.swizzle == Swizzle::B32) {
    return ObjectReader::err(r.key("swizzle"),
                             "32B interleave does not allow 32B swizzle");
  }
  return Status::success();
}

Status readParam(const JsonValue &v, const std::string &path, const Manifest &m,
                 ParamSpec &p) {
  ObjectReader r(v, path);
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(
      r.choice("kind", kParamKindNames, p.kind, /*isRequired=*/true));
  switch (p.kind) {
  case ParamKind::Tensor:
    SSD_RETURN_IF_ERROR(r.string("name", p.name));
    if (!m.findTensor(p.name))
      return ObjectReader::err(r.key("name"), "no tensor named \"" + p.name +
                                                  "\" in \"tensors\"");
    break;
  case ParamKind::Workspace: {
    SSD_RETURN_IF_ERROR(r.string("name", p.name));
    const WorkspaceSpec *w = m.findWorkspace(p.name);
    if (!w)
      return ObjectReader::err(r.key("name"), "no workspace named \"" + p.name +
                                                  "\" in \"workspaces\"");
    SSD_RETURN_IF_ERROR(r.choice("abi", kAbiNames, p.abi));
    if (p.abi == Abi::Memref && w->shape.empty())
      return ObjectReader::err(r.key("abi"), "a memref workspace needs "
                                             "\"shape\" on workspace \"" +
                                                 p.name + "\"");
    break;
  }
  case ParamKind::Scalar:
    SSD_RETURN_IF_ERROR(r.string("name", p.name));
    SSD_RETURN_IF_ERROR(
        r.choice("type", kScalarTypeNames, p.scalarType, /*isRequired=*/true));
    SSD_RETURN_IF_ERROR(r.expr("value", p.value));
    break;
  case ParamKind::TensorMap:
    SSD_RETURN_IF_ERROR(readTensorMap(r, m, p));
    break;
  }
  if (p.kind == ParamKind::Tensor)
    SSD_RETURN_IF_ERROR(r.choice("abi", kAbiNames, p.abi));
  return r.noUnknownKeys();
}

Status readDims(ObjectReader &r, std::string_view k, std::array<Expr, 3> &out,
                int &rank, bool isRequired) {
  const JsonValue *v = r.get(k);
  if (!v)
    return isRequired ? r.missing(k) : Status::success();
  std::vector<Expr> dims;
  SSD_RETURN_IF_ERROR(readExprList(v, r.key(k), dims, 1, 3));
  for (size_t i = 0; i < dims.size(); ++i)
    out[i] = dims[i];
  rank = static_cast<int>(dims.size());
  return Status::success();
}

Status readKernel(const JsonValue &v, const std::string &path,
                  const Manifest &m, KernelSpec &k) {
  ObjectReader r(v, path);
  SSD_RETURN_IF_ERROR(r.expectObject());
  SSD_RETURN_IF_ERROR(r.string("name", k.name));
  if (k.name.empty())
    return ObjectReader::err(r.key("name"), "empty kernel name");
  SSD_RETURN_IF_ERROR(readDims(r, "grid", k.grid, k.gridRank, true));
  SSD_RETURN_IF_ERROR(readDims(r, "block", k.block, k.blockRank, true));
  SSD_RETURN_IF_ERROR(r.expr("shared_memory", k.sharedMemory, false));
  SSD_RETURN_IF_ERROR(r.expr("when", k.when, false));
  if (const JsonValue *c = r.get("cluster")) {
    std::vector<int64_t> dims;
    SSD_RETURN_IF_ERROR(readIntList(c, r.key("cluster"), dims, 1, 3, 1));
    for (size_t i = 0; i < dims.size(); ++i)
      k.cluster[i] = dims[i];
    k.clusterRank = static_cast<int>(dims.size());
  }
  const JsonValue *params;
  SSD_RETURN_IF_ERROR(r.required("params", params));
  SSD_RETURN_IF_ERROR(readArray(params, r.key("params"), 0, 1024));
  for (size_t i = 0; i < params->array.size(); ++i) {
    ParamSpec p;
    SSD_RETURN_IF_ERROR(
        readParam(params->array[i], indexKey(r.key("params"), i), m, p));
    k.params.push_back(std::move(p));
  }
  return r.noUnknownKeys();
}

//===----------------------------------------------------------------------===//
// Cross-checks
//===----------------------------------------------------------------------===//

/// Every symbol an expression reads must be a constant, a symbol some tensor
/// shape binds, a derived symbol defined earlier, or num_sms.
class SymbolScope {
public:
  std::set<std::string> names;

  Status check(const Expr &e, const std::string &where) const {
    for (const std::string &s : e.symbols())
      if (!names.count(s))
        return ObjectReader::err(where, "unknown symbol '" + s +
                                            "' in expression '" + e.text() +
                                            "'");
    return Status::success();
  }
};

Status crossCheck(Manifest &m) {
  SymbolScope scope;
  for (const auto &[name, value] : m.constantSymbols())
    scope.names.insert(name);
  scope.names.insert("num_sms");
  for (const TensorSpec &t : m.tensors)
    for (const Expr &e : t.shape)
      if (auto s = e.asSymbol())
        scope.names.insert(*s);
  // nc is the chunk count unless the manifest defines it otherwise.
  bool definesNc = std::any_of(m.derived.begin(), m.derived.end(),
                               [](const auto &d) { return d.first == "nc"; });
  if (!definesNc && scope.names.count("L") && !scope.names.count("nc")) {
    m.derived.insert(m.derived.begin(), {"nc", *Expr::parse("ceildiv(L, Q)")});
    m.ncImplied = true;
  }
  for (const auto &[name, e] : m.derived) {
    std::string where = "derived." + name;
    if (scope.names.count(name))
      return ObjectReader::err(where, "'" + name + "' is already defined");
    SSD_RETURN_IF_ERROR(scope.check(e, where));
    scope.names.insert(name);
  }
  for (size_t i = 0; i < m.tensors.size(); ++i)
    for (size_t d = 0; d < m.tensors[i].shape.size(); ++d)
      SSD_RETURN_IF_ERROR(
          scope.check(m.tensors[i].shape[d],
                      indexKey(indexKey("tensors", i) + ".shape", d)));
  for (size_t i = 0; i < m.workspaces.size(); ++i) {
    std::string base = indexKey("workspaces", i);
    SSD_RETURN_IF_ERROR(scope.check(m.workspaces[i].size, base + ".size"));
    for (size_t d = 0; d < m.workspaces[i].shape.size(); ++d)
      SSD_RETURN_IF_ERROR(
          scope.check(m.workspaces[i].shape[d], indexKey(base + ".shape", d)));
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelSpec &k = m.kernels[i];
    std::string base = indexKey("kernels", i);
    for (size_t d = 0; d < 3; ++d) {
      SSD_RETURN_IF_ERROR(scope.check(k.grid[d], indexKey(base + ".grid", d)));
      SSD_RETURN_IF_ERROR(
          scope.check(k.block[d], indexKey(base + ".block", d)));
    }
    SSD_RETURN_IF_ERROR(scope.check(k.sharedMemory, base + ".shared_memory"));
    SSD_RETURN_IF_ERROR(scope.check(k.when, base + ".when"));
    for (size_t p = 0; p < k.params.size(); ++p)
      if (k.params[p].kind == ParamKind::Scalar)
        SSD_RETURN_IF_ERROR(scope.check(
            k.params[p].value, indexKey(base + ".params", p) + ".value"));
    int64_t clusterSize = k.cluster[0] * k.cluster[1] * k.cluster[2];
    if (clusterSize > 16)
      return ObjectReader::err(base + ".cluster",
                               "a cluster holds at most 16 blocks, got " +
                                   std::to_string(clusterSize));
  }
  return Status::success();
}

} // namespace

Expected<Manifest> ssd::artifact::parseManifest(std::string_view json) {
  Expected<JsonValue> doc = parseJson(json);
  if (!doc.ok())
    return doc.status();
  return readManifest(*doc);
}

Expected<Manifest> ssd::artifact::readManifest(const JsonValue &doc) {
  Manifest m;
  ObjectReader r(doc, "");
  if (!doc.isObject())
    return Status::error("manifest: expected an object, got " + doc.describe());

  std::string format;
  SSD_RETURN_IF_ERROR(r.string("format", format));
  if (format != "ssd-artifact")
    return ObjectReader::err("format", "expected \"ssd-artifact\", got \"" +
                                           format + "\"");
  SSD_RETURN_IF_ERROR(r.integer("format_version", m.formatVersion, true, 1));
  if (m.formatVersion != kManifestFormatVersion)
    return ObjectReader::err(
        "format_version",
        "this runtime reads version " + std::to_string(kManifestFormatVersion) +
            ", the artifact is version " + std::to_string(m.formatVersion));
  SSD_RETURN_IF_ERROR(r.string("target", m.target));
  if (m.target.rfind("sm_", 0) != 0 || m.target.size() < 5 ||
      !std::isdigit(static_cast<unsigned char>(m.target[3])))
    return ObjectReader::err("target", "expected an sm_XY[a] target, got \"" +
                                           m.target + "\"");

  const JsonValue *v;
  SSD_RETURN_IF_ERROR(r.required("compiler", v));
  SSD_RETURN_IF_ERROR(readCompiler(*v, m.compiler));
  SSD_RETURN_IF_ERROR(r.required("constants", v));
  SSD_RETURN_IF_ERROR(readConstants(*v, m.constants));

  if (const JsonValue *d = r.get("derived")) {
    if (!d->isObject())
      return ObjectReader::err("derived",
                               "expected an object, got " + d->describe());
    for (const JsonValue::Member &mem : d->object) {
      if (!isIdentifier(mem.first))
        return ObjectReader::err("derived." + mem.first, "not an identifier");
      Expr e = Expr::constant(0);
      SSD_RETURN_IF_ERROR(
          ObjectReader::readExpr(mem.second, "derived." + mem.first, e));
      m.derived.emplace_back(mem.first, e);
    }
  }

  SSD_RETURN_IF_ERROR(r.required("tensors", v));
  SSD_RETURN_IF_ERROR(readArray(v, "tensors", 1, 64));
  for (size_t i = 0; i < v->array.size(); ++i) {
    TensorSpec t;
    SSD_RETURN_IF_ERROR(readTensor(v->array[i], indexKey("tensors", i), t));
    if (m.findTensor(t.name))
      return ObjectReader::err(indexKey("tensors", i) + ".name",
                               "duplicate tensor \"" + t.name + "\"");
    m.tensors.push_back(std::move(t));
  }

  if (const JsonValue *w = r.get("workspaces")) {
    SSD_RETURN_IF_ERROR(readArray(w, "workspaces", 0, 64));
    for (size_t i = 0; i < w->array.size(); ++i) {
      WorkspaceSpec ws;
      SSD_RETURN_IF_ERROR(
          readWorkspace(w->array[i], indexKey("workspaces", i), ws));
      if (m.findWorkspace(ws.name))
        return ObjectReader::err(indexKey("workspaces", i) + ".name",
                                 "duplicate workspace \"" + ws.name + "\"");
      m.workspaces.push_back(std::move(ws));
    }
  }

  SSD_RETURN_IF_ERROR(r.required("kernels", v));
  SSD_RETURN_IF_ERROR(readArray(v, "kernels", 1, 64));
  for (size_t i = 0; i < v->array.size(); ++i) {
    KernelSpec k;
    SSD_RETURN_IF_ERROR(readKernel(v->array[i], indexKey("kernels", i), m, k));
    m.kernels.push_back(std::move(k));
  }

  SSD_RETURN_IF_ERROR(r.noUnknownKeys());
  SSD_RETURN_IF_ERROR(crossCheck(m));
  return m;
}
