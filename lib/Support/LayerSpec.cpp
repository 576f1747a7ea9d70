//===- LayerSpec.cpp - what an SSD layer is compiled for ------------------===//
#include "ssd/Support/LayerSpec.h"

#include "ssd/Support/Case.h"

#include <algorithm>
#include <cmath>

using namespace ssd;

const std::vector<std::string> &ssd::knownFeatures() {
  static const std::vector<std::string> features = {
      "D",        "Dhp",           "z",       "dt_bias", "softplus",
      "dt_limit", "initial_states", "seq_idx", "varlen"};
  return features;
}

bool LayerSpec::has(const std::string &feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

void LayerSpec::add(const std::string &feature) {
  if (has(feature))
    return;
  features.push_back(feature);
  const std::vector<std::string> &order = knownFeatures();
  auto rank = [&](const std::string &f) {
    return std::find(order.begin(), order.end(), f) - order.begin();
  };
  std::stable_sort(features.begin(), features.end(),
                   [&](const std::string &a, const std::string &b) {
                     return rank(a) < rank(b);
                   });
}

std::string ssd::parseFeatures(const std::string &list, LayerSpec &spec) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos)
      comma = list.size();
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (name.empty())
      continue;
    const std::vector<std::string> &known = knownFeatures();
    if (std::find(known.begin(), known.end(), name) == known.end())
      return "unknown feature '" + name + "' (expected a comma list of " +
             joinFeatures(known) + ")";
    spec.add(name);
  }
  return "";
}

std::string ssd::joinFeatures(const std::vector<std::string> &features) {
  std::string text;
  for (const std::string &f : features)
    text += (text.empty() ? "" : ",") + f;
  return text;
}

static bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string ssd::validateLayerSpec(const LayerSpec &spec) {
  const std::pair<const char *, int64_t> sizes[] = {
      {"nheads", spec.nheads},   {"headdim", spec.headdim},
      {"dstate", spec.dstate},   {"ngroups", spec.ngroups},
      {"chunk_size", spec.chunkSize}};
  for (auto [name, value] : sizes)
    if (value <= 0)
      return std::string(name) + " must be positive, got " +
             std::to_string(value);
  if (spec.nheads % spec.ngroups != 0)
    return "nheads (" + std::to_string(spec.nheads) +
           ") must be a multiple of ngroups (" + std::to_string(spec.ngroups) +
           ")";
  if (!isPowerOfTwo(spec.chunkSize))
    return "chunk_size " + std::to_string(spec.chunkSize) +
           " is not a power of two";
  using artifact::DType;
  if (spec.dtype != DType::F32 && spec.dtype != DType::BF16 &&
      spec.dtype != DType::F16)
    return std::string("dtype '") + artifact::dtypeName(spec.dtype) +
           "' is not one of f32, bf16, f16";
  if (spec.stateDtype != DType::F32 && spec.stateDtype != DType::F16)
    return std::string("state dtype '") +
           artifact::dtypeName(spec.stateDtype) + "' is not one of f32, f16";
  for (const std::string &f : spec.features) {
    const std::vector<std::string> &known = knownFeatures();
    if (std::find(known.begin(), known.end(), f) == known.end())
      return "unknown feature '" + f + "'";
  }
  if (spec.has("D") && spec.has("Dhp"))
    return "features D and Dhp are exclusive (D per head or per channel)";
  if (spec.has("seq_idx") && spec.has("varlen"))
    return "features seq_idx and varlen are exclusive";
  if (std::isnan(spec.dtLimitLo) || std::isnan(spec.dtLimitHi) ||
      spec.dtLimitLo < 0 || spec.dtLimitLo > spec.dtLimitHi)
    return "dt_limit must be 0 <= LO <= HI";
  return "";
}

LayerSpec ssd::layerSpecOfCase(const SSDCase &c, int64_t chunkSize,
                               artifact::DType dtype,
                               artifact::DType stateDtype) {
  LayerSpec spec;
  spec.nheads = c.nheads;
  spec.headdim = c.headdim;
  spec.dstate = c.dstate;
  spec.ngroups = c.ngroups;
  spec.chunkSize = chunkSize;
  spec.dtype = dtype;
  spec.stateDtype = stateDtype;
  if (c.D.present())
    spec.add(c.D.shape.size() == 2 ? "Dhp" : "D");
  if (c.z.present())
    spec.add("z");
  if (c.dtBias.present())
    spec.add("dt_bias");
  if (c.dtSoftplus)
    spec.add("softplus");
  if (c.dtLimitLo != 0.0 ||
      c.dtLimitHi != std::numeric_limits<double>::infinity()) {
    spec.add("dt_limit");
    spec.dtLimitLo = c.dtLimitLo;
    spec.dtLimitHi = c.dtLimitHi;
  }
  if (c.initialStates.present())
    spec.add("initial_states");
  if (c.seqIdx.present())
    spec.add("seq_idx");
  if (c.varlen())
    spec.add("varlen");
  return spec;
}
