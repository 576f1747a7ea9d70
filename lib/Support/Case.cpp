//===- Case.cpp - golden case folders -------------------------------------===//
#include "ssd/Support/Case.h"

#include "ssd/Support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace llvm;
using namespace ssd;

static const StringRef kInputNames[] = {
    "x",       "dt",      "A",       "B",          "C",          "D",
    "z",       "dt_bias", "initial_states", "seq_idx", "cu_seqlens"};

ArrayRef<StringRef> ssd::caseInputNames() { return kInputNames; }

static bool isIntInput(StringRef name) {
  return name == "seq_idx" || name == "cu_seqlens";
}

static bool isRequiredInput(StringRef name) {
  return name == "x" || name == "dt" || name == "A" || name == "B" || name == "C";
}

static FloatTensor *floatInput(SSDCase &c, StringRef name) {
  return StringSwitch<FloatTensor *>(name)
      .Case("x", &c.x)
      .Case("dt", &c.dt)
      .Case("A", &c.A)
      .Case("B", &c.B)
      .Case("C", &c.C)
      .Case("D", &c.D)
      .Case("z", &c.z)
      .Case("dt_bias", &c.dtBias)
      .Case("initial_states", &c.initialStates)
      .Default(nullptr);
}

static const FloatTensor *floatInput(const SSDCase &c, StringRef name) {
  return floatInput(const_cast<SSDCase &>(c), name);
}

static const IntTensor *intInput(const SSDCase &c, StringRef name) {
  if (name == "seq_idx")
    return &c.seqIdx;
  if (name == "cu_seqlens")
    return &c.cuSeqlens;
  return nullptr;
}

int64_t SSDCase::numSeqs() const {
  return cuSeqlens.present() ? cuSeqlens.shape[0] - 1 : 0;
}

std::vector<int64_t> SSDCase::tokenShape() const {
  return {batch, seqlen, nheads, headdim};
}

std::vector<int64_t> SSDCase::stateShape() const {
  return {varlen() ? numSeqs() : batch, nheads, headdim, dstate};
}

std::vector<std::string> SSDCase::inputNames() const {
  std::vector<std::string> names;
  for (StringRef name : kInputNames) {
    const FloatTensor *f = floatInput(*this, name);
    const IntTensor *i = intInput(*this, name);
    if ((f && f->present()) || (i && i->present()))
      names.push_back(name.str());
  }
  return names;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static std::string joinPath(StringRef dir, StringRef file) {
  SmallString<256> path(dir);
  sys::path::append(path, file);
  return std::string(path);
}

static std::string npyPath(StringRef dir, StringRef name) {
  return joinPath(dir, (name + ".npy").str());
}

static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

static Error caseError(const Twine &file, const Twine &problem) {
  return createStringError(inconvertibleErrorCode(), file + ": " + problem);
}

/// The multi-index of flat position `flat` in `shape`, as text.
static std::string formatIndex(ArrayRef<int64_t> shape, int64_t flat) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return formatShape(index);
}

static Error checkShape(StringRef dir, StringRef name,
                        ArrayRef<int64_t> actual, ArrayRef<int64_t> expected,
                        StringRef symbols, size_t dataSize) {
  if (actual != expected)
    return caseError(npyPath(dir, name),
                     "shape " + formatShape(actual) + " does not match " +
                         symbols + " = " + formatShape(expected));
  if (shapeNumElements(actual) != static_cast<int64_t>(dataSize))
    return caseError(npyPath(dir, name),
                     "holds " + Twine(dataSize) + " values for shape " +
                         formatShape(actual));
  return Error::success();
}

static Error checkFinite(StringRef dir, StringRef name, const FloatTensor &t) {
  for (auto [i, v] : llvm::enumerate(t.data))
    if (!std::isfinite(v))
      return caseError(npyPath(dir, name),
                       "element " + formatIndex(t.shape, i) + " is " +
                           (std::isnan(v) ? "nan" : "infinite"));
  return Error::success();
}

static Error validateSizes(const SSDCase &c, StringRef json) {
  for (auto [key, value] :
       {std::pair<StringRef, int64_t>{"batch", c.batch},
        {"seqlen", c.seqlen},
        {"nheads", c.nheads},
        {"headdim", c.headdim},
        {"ngroups", c.ngroups},
        {"dstate", c.dstate}})
    if (value <= 0)
      return caseError(json, "'" + key + "' must be positive, got " + Twine(value));
  if (c.nheads % c.ngroups != 0)
    return caseError(json, "nheads (" + Twine(c.nheads) +
                               ") must be a multiple of ngroups (" +
                               Twine(c.ngroups) + ")");
  if (std::isnan(c.dtLimitLo) || std::isnan(c.dtLimitHi))
    return caseError(json, "dt_limit must not contain NaN");
  if (c.dtLimitLo < 0)
    return caseError(json, "dt_limit low (" + formatNumber(c.dtLimitLo) +
                               ") must be non-negative");
  if (c.dtLimitLo > c.dtLimitHi)
    return caseError(json, "dt_limit low (" + formatNumber(c.dtLimitLo) +
                               ") exceeds high (" + formatNumber(c.dtLimitHi) + ")");
  return Error::success();
}

static Error validateCuSeqlens(const SSDCase &c, StringRef dir) {
  const IntTensor &cu = c.cuSeqlens;
  std::string file = npyPath(dir, "cu_seqlens");
  if (cu.shape.size() != 1 || cu.shape[0] < 2)
    return caseError(file, "shape " + formatShape(cu.shape) +
                               " must be (num_seqs + 1,) with at least one sequence");
  if (static_cast<int64_t>(cu.data.size()) != cu.shape[0])
    return caseError(file, "holds " + Twine(cu.data.size()) + " values for shape " +
                               formatShape(cu.shape));
  if (c.batch != 1)
    return caseError(file, "cu_seqlens needs batch 1, case.json has batch " +
                               Twine(c.batch));
  if (c.seqIdx.present())
    return caseError(file, "seq_idx and cu_seqlens are mutually exclusive");
  if (cu.data.front() != 0)
    return caseError(file, "must start at 0, starts at " + Twine(cu.data.front()));
  for (size_t i = 1; i < cu.data.size(); ++i)
    if (cu.data[i] < cu.data[i - 1])
      return caseError(file, "must be non-decreasing, element " + Twine(i) +
                                 " is " + Twine(cu.data[i]) + " after " +
                                 Twine(cu.data[i - 1]));
  if (cu.data.back() != c.seqlen)
    return caseError(file, "must end at seqlen " + Twine(c.seqlen) +
                               ", ends at " + Twine(cu.data.back()));
  return Error::success();
}

static Error validateSeqIdx(const SSDCase &c, StringRef dir) {
  const IntTensor &s = c.seqIdx;
  if (Error err = checkShape(dir, "seq_idx", s.shape, {c.batch, c.seqlen},
                             "(batch, seqlen)", s.data.size()))
    return err;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t l = 1; l < c.seqlen; ++l) {
      int32_t prev = s.data[b * c.seqlen + l - 1], cur = s.data[b * c.seqlen + l];
      if (cur < prev)
        return caseError(npyPath(dir, "seq_idx"),
                         "must be non-decreasing along each row, element " +
                             formatShape({b, l}) + " is " + Twine(cur) +
                             " after " + Twine(prev));
    }
  return Error::success();
}

Error ssd::validateCase(const SSDCase &c, StringRef dir) {
  if (Error err = validateSizes(c, joinPath(dir, "case.json")))
    return err;
  for (StringRef name : {"x", "dt", "A", "B", "C"})
    if (!floatInput(c, name)->present())
      return caseError(npyPath(dir, name), "required input is missing");
  // Packing first: the state layout depends on the number of sequences.
  if (c.cuSeqlens.present())
    if (Error err = validateCuSeqlens(c, dir))
      return err;
  if (c.seqIdx.present())
    if (Error err = validateSeqIdx(c, dir))
      return err;

  int64_t b = c.batch, L = c.seqlen, h = c.nheads, p = c.headdim,
          g = c.ngroups, n = c.dstate;
  std::string stateSymbols = c.varlen()
                                 ? "(num_seqs, nheads, headdim, dstate)"
                                 : "(batch, nheads, headdim, dstate)";
  struct ShapeRule {
    StringRef name;
    const FloatTensor *tensor;
    std::vector<int64_t> shape;
    std::string symbols;
  };
  std::vector<int64_t> dShape = {h};
  std::string dSymbols = "(nheads,)";
  if (c.D.present() && c.D.shape.size() == 2) {
    dShape = {h, p};
    dSymbols = "(nheads, headdim)";
  }
  ShapeRule rules[] = {
      {"x", &c.x, {b, L, h, p}, "(batch, seqlen, nheads, headdim)"},
      {"dt", &c.dt, {b, L, h}, "(batch, seqlen, nheads)"},
      {"A", &c.A, {h}, "(nheads,)"},
      {"B", &c.B, {b, L, g, n}, "(batch, seqlen, ngroups, dstate)"},
      {"C", &c.C, {b, L, g, n}, "(batch, seqlen, ngroups, dstate)"},
      {"D", &c.D, dShape, dSymbols},
      {"z", &c.z, {b, L, h, p}, "(batch, seqlen, nheads, headdim)"},
      {"dt_bias", &c.dtBias, {h}, "(nheads,)"},
      {"initial_states", &c.initialStates, c.stateShape(), stateSymbols},
      {"y", &c.expectedY, {b, L, h, p}, "(batch, seqlen, nheads, headdim)"},
      {"final_states", &c.expectedFinalStates, c.stateShape(), stateSymbols},
  };
  for (const ShapeRule &rule : rules) {
    if (!rule.tensor->present())
      continue;
    if (Error err = checkShape(dir, rule.name, rule.tensor->shape, rule.shape,
                               rule.symbols, rule.tensor->data.size()))
      return err;
    if (Error err = checkFinite(dir, rule.name, *rule.tensor))
      return err;
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

static Error readSize(const json::Object &root, StringRef key, StringRef json,
                      int64_t &out) {
  const json::Value *value = root.get(key);
  if (!value)
    return caseError(json, "missing key '" + key + "'");
  std::optional<int64_t> size = value->getAsInteger();
  if (!size)
    return caseError(json, "'" + key + "' must be an integer");
  out = *size;
  return Error::success();
}

static Error readDtLimit(const json::Value &value, StringRef json, SSDCase &c) {
  const json::Array *limit = value.getAsArray();
  if (!limit || limit->size() != 2)
    return caseError(json, "'dt_limit' must be a list [low, high]");
  std::optional<double> lo = (*limit)[0].getAsNumber();
  if (!lo)
    return caseError(json, "'dt_limit' low must be a number");
  c.dtLimitLo = *lo;
  if ((*limit)[1].kind() == json::Value::Null) {
    c.dtLimitHi = std::numeric_limits<double>::infinity();
  } else if (std::optional<double> hi = (*limit)[1].getAsNumber()) {
    c.dtLimitHi = *hi;
  } else {
    return caseError(json, "'dt_limit' high must be a number or null");
  }
  return Error::success();
}

static Error readFloatFile(StringRef path, FloatTensor &out) {
  Expected<NpyArray> array = readNpy(path);
  if (!array)
    return array.takeError();
  if (!array->isFloat())
    return caseError(path, "dtype " + npyDTypeDescr(array->dtype) +
                               " where a float array (<f4) is expected");
  out.shape = array->shape;
  out.data = array->toFloat();
  // A rank-0 array would read as absent; give it a shape that fails checks.
  if (out.shape.empty())
    out.shape = {0};
  return Error::success();
}

static Error readIntFile(StringRef path, IntTensor &out) {
  Expected<NpyArray> array = readNpy(path);
  if (!array)
    return array.takeError();
  if (array->isFloat())
    return caseError(path, "dtype " + npyDTypeDescr(array->dtype) +
                               " where an int32 array (<i4) is expected");
  if (!array->fitsInt32())
    return caseError(path, "values do not fit in int32");
  out.shape = array->shape;
  out.data = array->toInt32();
  if (out.shape.empty())
    out.shape = {0};
  return Error::success();
}

static Expected<json::Object> readJson(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return caseError(path, "cannot read: " + buffer.getError().message());
  Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value)
    return caseError(path, "invalid JSON: " + toString(value.takeError()));
  json::Object *root = value->getAsObject();
  if (!root)
    return caseError(path, "must hold a JSON object");
  return std::move(*root);
}

Expected<SSDCase> ssd::loadCase(StringRef dir) {
  if (!sys::fs::is_directory(dir))
    return caseError(dir, "not a case folder (no such directory)");
  std::string json = joinPath(dir, "case.json");
  Expected<json::Object> root = readJson(json);
  if (!root)
    return root.takeError();

  SSDCase c;
  for (auto [key, out] :
       {std::pair<StringRef, int64_t *>{"batch", &c.batch},
        {"seqlen", &c.seqlen},
        {"nheads", &c.nheads},
        {"headdim", &c.headdim},
        {"ngroups", &c.ngroups},
        {"dstate", &c.dstate}})
    if (Error err = readSize(*root, key, json, *out))
      return std::move(err);
  if (const json::Value *v = root->get("dt_softplus")) {
    std::optional<bool> flag = v->getAsBoolean();
    if (!flag)
      return caseError(json, "'dt_softplus' must be true or false");
    c.dtSoftplus = *flag;
  }
  if (const json::Value *v = root->get("dt_limit"))
    if (v->kind() != json::Value::Null)
      if (Error err = readDtLimit(*v, json, c))
        return std::move(err);
  if (std::optional<StringRef> name = root->getString("name"))
    c.name = name->str();
  else
    c.name = sys::path::filename(sys::path::remove_leading_dotslash(dir)).str();
  if (std::optional<StringRef> note = root->getString("note"))
    c.note = note->str();
  if (Error err = validateSizes(c, json))
    return std::move(err);

  const json::Array *inputs = root->getArray("inputs");
  if (!inputs)
    return caseError(json, "missing list 'inputs'");
  StringSet<> listed;
  for (const json::Value &entry : *inputs) {
    std::optional<StringRef> name = entry.getAsString();
    if (!name)
      return caseError(json, "'inputs' must hold strings");
    if (!llvm::is_contained(kInputNames, *name))
      return caseError(json, "unknown input '" + *name + "' in 'inputs'");
    if (!listed.insert(*name).second)
      return caseError(json, "input '" + *name + "' listed twice");
  }
  for (StringRef name : kInputNames)
    if (isRequiredInput(name) && !listed.contains(name))
      return caseError(json, "required input '" + name + "' not listed in 'inputs'");

  for (StringRef name : kInputNames) {
    if (!listed.contains(name))
      continue;
    Error err = isIntInput(name)
                    ? readIntFile(npyPath(dir, name),
                                  name == "seq_idx" ? c.seqIdx : c.cuSeqlens)
                    : readFloatFile(npyPath(dir, name), *floatInput(c, name));
    if (err)
      return std::move(err);
  }
  for (auto [name, out] :
       {std::pair<StringRef, FloatTensor *>{"y", &c.expectedY},
        {"final_states", &c.expectedFinalStates}}) {
    std::string path = npyPath(dir, name);
    if (sys::fs::exists(path))
      if (Error err = readFloatFile(path, *out))
        return std::move(err);
  }
  if (Error err = validateCase(c, dir))
    return std::move(err);
  return c;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

Error ssd::writeCase(const SSDCase &c, StringRef dir) {
  if (Error err = validateCase(c, dir))
    return err;
  if (std::error_code ec = sys::fs::create_directories(dir))
    return caseError(dir, "cannot create directory: " + ec.message());

  json::Array inputs, outputs;
  for (const std::string &name : c.inputNames())
    inputs.push_back(name);
  if (c.expectedY.present())
    outputs.push_back("y");
  if (c.expectedFinalStates.present())
    outputs.push_back("final_states");
  json::Value hi = std::isinf(c.dtLimitHi) ? json::Value(nullptr)
                                           : json::Value(c.dtLimitHi);
  json::Object root{{"name", c.name},
                    {"note", c.note},
                    {"batch", c.batch},
                    {"seqlen", c.seqlen},
                    {"nheads", c.nheads},
                    {"headdim", c.headdim},
                    {"ngroups", c.ngroups},
                    {"dstate", c.dstate},
                    {"dt_softplus", c.dtSoftplus},
                    {"dt_limit", json::Array{c.dtLimitLo, std::move(hi)}},
                    {"inputs", std::move(inputs)},
                    {"outputs", std::move(outputs)}};
  std::string json = joinPath(dir, "case.json");
  std::error_code ec;
  raw_fd_ostream os(json, ec, sys::fs::OF_Text);
  if (ec)
    return caseError(json, "cannot write: " + ec.message());
  os << formatv("{0:1}", json::Value(std::move(root))) << "\n";
  os.close();
  if (os.has_error())
    return caseError(json, "cannot write: " + os.error().message());

  for (StringRef name : kInputNames) {
    if (const FloatTensor *t = floatInput(c, name); t && t->present()) {
      if (Error err = writeNpy(npyPath(dir, name), t->shape, t->data))
        return err;
    } else if (const IntTensor *t = intInput(c, name); t && t->present()) {
      if (Error err = writeNpy(npyPath(dir, name), t->shape, t->data))
        return err;
    }
  }
  for (auto [name, t] :
       {std::pair<StringRef, const FloatTensor *>{"y", &c.expectedY},
        {"final_states", &c.expectedFinalStates}})
    if (t->present())
      if (Error err = writeNpy(npyPath(dir, name), t->shape, t->data))
        return err;
  return Error::success();
}
