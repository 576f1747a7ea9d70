//===- LayerSpec.h - what an SSD layer is compiled for ----------*- C++ -*-===//
//
// The specialisation of one SSD layer: the static sizes, the chunk size, the
// element types and the optional inputs compiled in ("features"). The AOT
// compiler builds its IR from one, the artifact manifest records it as its
// `constants`, and ssd-run derives one from a case folder to check that an
// artifact fits the case. Plain C++17: it builds in the runtime-only
// configuration.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_SUPPORT_LAYERSPEC_H
#define SSD_SUPPORT_LAYERSPEC_H

#include "ssd/Artifact/DType.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ssd {

struct SSDCase;

/// The feature names of the command line and the manifest, in canonical
/// order: D, Dhp, z, dt_bias, softplus, dt_limit, initial_states, seq_idx,
/// varlen.
const std::vector<std::string> &knownFeatures();

struct LayerSpec {
  int64_t nheads = 0, headdim = 0, dstate = 0, ngroups = 1;
  int64_t chunkSize = 128;
  /// Element type of x, B, C, z and y: F32, BF16 or F16.
  artifact::DType dtype = artifact::DType::F32;
  /// Element type of initial_states and final_states: F32 or F16.
  artifact::DType stateDtype = artifact::DType::F32;
  /// A subset of knownFeatures(), kept in canonical order.
  std::vector<std::string> features;
  /// The clamp of the processed dt; used when `dt_limit` is a feature.
  double dtLimitLo = 0.0;
  double dtLimitHi = std::numeric_limits<double>::infinity();

  bool has(const std::string &feature) const;
  /// Adds a feature (no-op when present), keeping canonical order.
  void add(const std::string &feature);
};

/// Parses a comma list of features into `spec` (canonical order, duplicates
/// ignored). Returns an error message naming the unknown feature, or "".
std::string parseFeatures(const std::string &list, LayerSpec &spec);

/// Checks sizes, types and feature combinations. Returns an error message
/// naming the problem, or "" when the spec is valid.
std::string validateLayerSpec(const LayerSpec &spec);

/// The layer a case computes, at the given chunk size and element types.
LayerSpec layerSpecOfCase(const SSDCase &c, int64_t chunkSize,
                          artifact::DType dtype,
                          artifact::DType stateDtype);

/// "D,z,dt_bias": the features as a comma list.
std::string joinFeatures(const std::vector<std::string> &features);

} // namespace ssd

#endif // SSD_SUPPORT_LAYERSPEC_H
