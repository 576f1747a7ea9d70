//===- Case.cpp - golden case folders -------------------------------------===//
#include "ssd/Support/Case.h"

#include "ssd/Support/Npy.h"

#include "Format.h"
#include "ssd/Support/FileBatch.h"

#include "ssd/Artifact/Json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>

using namespace ssd;
using ssd::artifact::Expected;
using ssd::artifact::JsonValue;
using ssd::artifact::Status;

/// Concatenates strings and integers into a message.
static void appendTo(std::string &out, const std::string &s) { out += s; }
static void appendTo(std::string &out, const char *s) { out += s; }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
static void appendTo(std::string &out, T v) { out += std::to_string(v); }
template <typename... Ts> static std::string cat(const Ts &...parts) {
  std::string out;
  (appendTo(out, parts), ...);
  return out;
}

static const std::vector<std::string> kInputNames = {
    "x",       "dt",      "A",       "B",          "C",          "D",
    "z",       "dt_bias", "initial_states", "seq_idx", "cu_seqlens"};

const std::vector<std::string> &ssd::caseInputNames() { return kInputNames; }

static bool isIntInput(const std::string &name) {
  return name == "seq_idx" || name == "cu_seqlens";
}

static bool isRequiredInput(const std::string &name) {
  return name == "x" || name == "dt" || name == "A" || name == "B" || name == "C";
}

static FloatTensor *floatInput(SSDCase &c, const std::string &name) {
  const std::pair<const char *, FloatTensor *> inputs[] = {
      {"x", &c.x},       {"dt", &c.dt},           {"A", &c.A},
      {"B", &c.B},       {"C", &c.C},             {"D", &c.D},
      {"z", &c.z},       {"dt_bias", &c.dtBias},  {"initial_states", &c.initialStates}};
  for (auto [key, tensor] : inputs)
    if (name == key)
      return tensor;
  return nullptr;
}

static const FloatTensor *floatInput(const SSDCase &c, const std::string &name) {
  return floatInput(const_cast<SSDCase &>(c), name);
}

static const IntTensor *intInput(const SSDCase &c, const std::string &name) {
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
  for (const std::string &name : kInputNames) {
    const FloatTensor *f = floatInput(*this, name);
    const IntTensor *i = intInput(*this, name);
    if ((f && f->present()) || (i && i->present()))
      names.push_back(name);
  }
  return names;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static std::string npyPath(const std::string &dir, const std::string &name) {
  return joinPath(dir, name + ".npy");
}

static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

static Status caseError(const std::string &file, const std::string &problem) {
  return Status::error(file + ": " + problem);
}

/// The multi-index of flat position `flat` in `shape`, as text.
static std::string formatIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return formatShape(index);
}

static Status checkShape(const std::string &dir, const std::string &name,
                         const std::vector<int64_t> &actual,
                         const std::vector<int64_t> &expected,
                         const std::string &symbols, size_t dataSize) {
  if (actual != expected)
    return caseError(npyPath(dir, name),
                     "shape " + formatShape(actual) + " does not match " +
                         symbols + " = " + formatShape(expected));
  if (shapeNumElements(actual) != static_cast<int64_t>(dataSize))
    return caseError(npyPath(dir, name),
                     "holds " + std::to_string(dataSize) + " values for shape " +
                         formatShape(actual));
  return Status::success();
}

static Status checkFinite(const std::string &dir, const std::string &name,
                          const FloatTensor &t) {
  for (size_t i = 0; i < t.data.size(); ++i)
    if (float v = t.data[i]; !std::isfinite(v))
      return caseError(npyPath(dir, name),
                       "element " + formatIndex(t.shape, i) + " is " +
                           (std::isnan(v) ? "nan" : "infinite"));
  return Status::success();
}

/// The size fields of case.json, in file order.
static std::array<std::pair<const char *, int64_t>, 6>
sizeFields(const SSDCase &c) {
  return {{{"batch", c.batch},
           {"seqlen", c.seqlen},
           {"nheads", c.nheads},
           {"headdim", c.headdim},
           {"ngroups", c.ngroups},
           {"dstate", c.dstate}}};
}

static Status validateSizes(const SSDCase &c, const std::string &json) {
  // A case may hold no tokens (an empty prefill: y is empty and the final
  // states are the initial ones); every other size must be positive.
  for (auto [key, value] : sizeFields(c)) {
    bool tokens = std::string(key) == "seqlen";
    if (value < 0 || (value == 0 && !tokens))
      return caseError(json, cat("'", key, "' must be ",
                                 tokens ? "non-negative" : "positive", ", got ",
                                 value));
  }
  if (c.nheads % c.ngroups != 0)
    return caseError(json, cat("nheads (", c.nheads,
                               ") must be a multiple of ngroups (", c.ngroups,
                               ")"));
  if (std::isnan(c.dtLimitLo) || std::isnan(c.dtLimitHi))
    return caseError(json, "dt_limit must not contain NaN");
  if (c.dtLimitLo < 0)
    return caseError(json, "dt_limit low (" + formatNumber(c.dtLimitLo) +
                               ") must be non-negative");
  if (c.dtLimitLo > c.dtLimitHi)
    return caseError(json, "dt_limit low (" + formatNumber(c.dtLimitLo) +
                               ") exceeds high (" + formatNumber(c.dtLimitHi) + ")");
  return Status::success();
}

static Status validateCuSeqlens(const SSDCase &c, const std::string &dir) {
  const IntTensor &cu = c.cuSeqlens;
  std::string file = npyPath(dir, "cu_seqlens");
  if (cu.shape.size() != 1 || cu.shape[0] < 2)
    return caseError(file, "shape " + formatShape(cu.shape) +
                               " must be (num_seqs + 1,) with at least one sequence");
  if (static_cast<int64_t>(cu.data.size()) != cu.shape[0])
    return caseError(file, "holds " + std::to_string(cu.data.size()) + " values for shape " +
                               formatShape(cu.shape));
  if (c.batch != 1)
    return caseError(file, "cu_seqlens needs batch 1, case.json has batch " +
                               std::to_string(c.batch));
  if (c.seqIdx.present())
    return caseError(file, "seq_idx and cu_seqlens are mutually exclusive");
  if (cu.data.front() != 0)
    return caseError(file, "must start at 0, starts at " + std::to_string(cu.data.front()));
  for (size_t i = 1; i < cu.data.size(); ++i)
    if (cu.data[i] < cu.data[i - 1])
      return caseError(file, cat("must be non-decreasing, element ", i, " is ",
                                 cu.data[i], " after ", cu.data[i - 1]));
  if (cu.data.back() != c.seqlen)
    return caseError(file, cat("must end at seqlen ", c.seqlen, ", ends at ",
                               cu.data.back()));
  return Status::success();
}

static Status validateSeqIdx(const SSDCase &c, const std::string &dir) {
  const IntTensor &s = c.seqIdx;
  SSD_RETURN_IF_ERROR(checkShape(dir, "seq_idx", s.shape, {c.batch, c.seqlen},
                             "(batch, seqlen)", s.data.size()));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t l = 1; l < c.seqlen; ++l) {
      int32_t prev = s.data[b * c.seqlen + l - 1], cur = s.data[b * c.seqlen + l];
      if (cur < prev)
        return caseError(npyPath(dir, "seq_idx"),
                         cat("must be non-decreasing along each row, element ",
                             formatShape({b, l}), " is ", cur, " after ", prev));
    }
  return Status::success();
}

Status ssd::validateCase(const SSDCase &c, const std::string &dir,
                         bool finiteInputs) {
  SSD_RETURN_IF_ERROR(validateSizes(c, joinPath(dir, "case.json")));
  for (const std::string &name : {"x", "dt", "A", "B", "C"})
    if (!floatInput(c, name)->present())
      return caseError(npyPath(dir, name), "required input is missing");
  // Packing first: the state layout depends on the number of sequences.
  if (c.cuSeqlens.present())
    SSD_RETURN_IF_ERROR(validateCuSeqlens(c, dir));
  if (c.seqIdx.present())
    SSD_RETURN_IF_ERROR(validateSeqIdx(c, dir));

  int64_t b = c.batch, L = c.seqlen, h = c.nheads, p = c.headdim,
          g = c.ngroups, n = c.dstate;
  std::string stateSymbols = c.varlen()
                                 ? "(num_seqs, nheads, headdim, dstate)"
                                 : "(batch, nheads, headdim, dstate)";
  struct ShapeRule {
    const std::string &name;
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
    SSD_RETURN_IF_ERROR(checkShape(dir, rule.name, rule.tensor->shape, rule.shape,
                               rule.symbols, rule.tensor->data.size()));
    bool output =
        rule.tensor == &c.expectedY || rule.tensor == &c.expectedFinalStates;
    if (finiteInputs || output)
      SSD_RETURN_IF_ERROR(checkFinite(dir, rule.name, *rule.tensor));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

static Status readSize(const JsonValue &root, const char *key,
                       const std::string &json, int64_t &out) {
  const JsonValue *value = root.find(key);
  if (!value)
    return caseError(json, cat("missing key '", key, "'"));
  if (!value->isNumber() || !value->isInteger)
    return caseError(json, cat("'", key, "' must be an integer"));
  out = value->integer;
  return Status::success();
}

static Status readDtLimit(const JsonValue &value, const std::string &json,
                          SSDCase &c) {
  if (!value.isArray() || value.array.size() != 2)
    return caseError(json, "'dt_limit' must be a list [low, high]");
  const JsonValue &lo = value.array[0], &hi = value.array[1];
  if (!lo.isNumber())
    return caseError(json, "'dt_limit' low must be a number");
  c.dtLimitLo = lo.number;
  if (hi.isNull())
    c.dtLimitHi = std::numeric_limits<double>::infinity();
  else if (hi.isNumber())
    c.dtLimitHi = hi.number;
  else
    return caseError(json, "'dt_limit' high must be a number or null");
  return Status::success();
}

static Status readFloatFile(const std::string &path, FloatTensor &out) {
  Expected<NpyArray> array = readNpy(path);
  if (!array.ok())
    return array.status();
  if (!array->isFloat())
    return caseError(path, cat("dtype ", npyDTypeDescr(array->dtype),
                               " where a float array (<f4) is expected"));
  out.shape = array->shape;
  out.data = array->toFloat();
  // A rank-0 array would read as absent; give it a shape that fails checks.
  if (out.shape.empty())
    out.shape = {0};
  return Status::success();
}

static Status readIntFile(const std::string &path, IntTensor &out) {
  Expected<NpyArray> array = readNpy(path);
  if (!array.ok())
    return array.status();
  if (array->isFloat())
    return caseError(path, cat("dtype ", npyDTypeDescr(array->dtype),
                               " where an int32 array (<i4) is expected"));
  if (!array->fitsInt32())
    return caseError(path, "values do not fit in int32");
  out.shape = array->shape;
  out.data = array->toInt32();
  if (out.shape.empty())
    out.shape = {0};
  return Status::success();
}

static Expected<JsonValue> readJson(const std::string &path) {
  std::string error;
  std::optional<std::vector<uint8_t>> bytes = readBinaryFile(path, error);
  if (!bytes)
    return caseError(path, error);
  Expected<JsonValue> value = artifact::parseJson(
      std::string_view(reinterpret_cast<const char *>(bytes->data()),
                       bytes->size()));
  if (!value.ok())
    return caseError(path, "invalid JSON: " + value.message());
  if (!value->isObject())
    return caseError(path, "must hold a JSON object");
  return value;
}

static bool isKnownInput(const std::string &name) {
  return std::find(kInputNames.begin(), kInputNames.end(), name) !=
         kInputNames.end();
}

Expected<SSDCase> ssd::loadCase(const std::string &dir, bool finiteInputs) {
  if (!isDirectory(dir))
    return caseError(dir, "not a case folder (no such directory)");
  std::string json = joinPath(dir, "case.json");
  Expected<JsonValue> root = readJson(json);
  if (!root.ok())
    return root.status();

  SSDCase c;
  for (auto [key, out] :
       {std::pair<const char *, int64_t *>{"batch", &c.batch},
        {"seqlen", &c.seqlen},
        {"nheads", &c.nheads},
        {"headdim", &c.headdim},
        {"ngroups", &c.ngroups},
        {"dstate", &c.dstate}})
    SSD_RETURN_IF_ERROR(readSize(*root, key, json, *out));
  if (const JsonValue *v = root->find("dt_softplus")) {
    if (!v->isBool())
      return caseError(json, "'dt_softplus' must be true or false");
    c.dtSoftplus = v->boolean;
  }
  if (const JsonValue *v = root->find("dt_limit"))
    if (!v->isNull())
      SSD_RETURN_IF_ERROR(readDtLimit(*v, json, c));
  if (const JsonValue *name = root->find("name"); name && name->isString())
    c.name = name->string;
  else
    c.name = baseName(dir);
  if (const JsonValue *note = root->find("note"); note && note->isString())
    c.note = note->string;
  SSD_RETURN_IF_ERROR(validateSizes(c, json));

  const JsonValue *inputs = root->find("inputs");
  if (!inputs || !inputs->isArray())
    return caseError(json, "missing list 'inputs'");
  std::set<std::string> listed;
  for (const JsonValue &entry : inputs->array) {
    if (!entry.isString())
      return caseError(json, "'inputs' must hold strings");
    if (!isKnownInput(entry.string))
      return caseError(json, "unknown input '" + entry.string + "' in 'inputs'");
    if (!listed.insert(entry.string).second)
      return caseError(json, "input '" + entry.string + "' listed twice");
  }
  for (const std::string &name : kInputNames)
    if (isRequiredInput(name) && !listed.count(name))
      return caseError(json,
                       "required input '" + name + "' not listed in 'inputs'");

  for (const std::string &name : kInputNames) {
    if (!listed.count(name))
      continue;
    Status st = isIntInput(name)
                    ? readIntFile(npyPath(dir, name),
                                  name == "seq_idx" ? c.seqIdx : c.cuSeqlens)
                    : readFloatFile(npyPath(dir, name), *floatInput(c, name));
    SSD_RETURN_IF_ERROR(st);
  }
  for (auto [name, out] :
       {std::pair<const char *, FloatTensor *>{"y", &c.expectedY},
        {"final_states", &c.expectedFinalStates}}) {
    std::string path = npyPath(dir, name);
    if (fileExists(path))
      SSD_RETURN_IF_ERROR(readFloatFile(path, *out));
  }
  SSD_RETURN_IF_ERROR(validateCase(c, dir, finiteInputs));
  return c;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static std::string quoted(const std::string &text) {
  JsonValue v;
  v.kind = JsonValue::Kind::String;
  v.string = text;
  return v.serialize();
}

static std::string jsonNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

static std::string jsonList(const std::vector<std::string> &names) {
  std::string text = "[";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + quoted(names[i]);
  return text + "]";
}

Status ssd::writeCase(const SSDCase &c, const std::string &dir) {
  SSD_RETURN_IF_ERROR(validateCase(c, dir));
  if (std::string error = createDirectories(dir); !error.empty())
    return caseError(dir, "cannot create directory: " + error);

  std::vector<std::string> outputs;
  if (c.expectedY.present())
    outputs.push_back("y");
  if (c.expectedFinalStates.present())
    outputs.push_back("final_states");
  std::string hi = std::isinf(c.dtLimitHi) ? "null" : jsonNumber(c.dtLimitHi);
  std::string text = "{\n";
  text += " \"name\": " + quoted(c.name) + ",\n";
  text += " \"note\": " + quoted(c.note) + ",\n";
  for (auto [key, value] : sizeFields(c))
    text += cat(" \"", key, "\": ", value, ",\n");
  text += std::string(" \"dt_softplus\": ") + (c.dtSoftplus ? "true" : "false") +
          ",\n";
  text += " \"dt_limit\": [" + jsonNumber(c.dtLimitLo) + ", " + hi + "],\n";
  text += " \"inputs\": " + jsonList(c.inputNames()) + ",\n";
  text += " \"outputs\": " + jsonList(outputs) + "\n}\n";
  // The folder's files are written as one: a failure leaves none of them.
  FileBatch files;
  files.add(joinPath(dir, "case.json"),
            std::vector<uint8_t>(text.begin(), text.end()));
  auto addNpy = [&](const std::string &name, const auto &t) -> Status {
    std::string path = npyPath(dir, name);
    auto bytes = encodeNpy(path, t.shape, t.data);
    if (!bytes.ok())
      return bytes.status();
    files.add(path, bytes.take());
    return Status::success();
  };
  for (const std::string &name : kInputNames) {
    if (const FloatTensor *t = floatInput(c, name); t && t->present())
      SSD_RETURN_IF_ERROR(addNpy(name, *t));
    else if (const IntTensor *t = intInput(c, name); t && t->present())
      SSD_RETURN_IF_ERROR(addNpy(name, *t));
  }
  for (auto [name, t] :
       {std::pair<const char *, const FloatTensor *>{"y", &c.expectedY},
        {"final_states", &c.expectedFinalStates}})
    if (t->present())
      SSD_RETURN_IF_ERROR(addNpy(name, *t));
  std::string failed, error;
  if (!files.commit(failed, error))
    return caseError(failed, error);
  return Status::success();
}
