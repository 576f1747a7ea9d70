//===- Case.h - golden case folders -----------------------------*- C++ -*-===//
//
// A case folder (the format of the shared golden cases) holds `case.json`
// with the sizes and flags, one `.npy` file per input and optionally the
// expected outputs `y.npy` and `final_states.npy`. `loadCase` reads one and
// checks every shape, element type and index relation; its errors read
// `<file>: <problem>`.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_SUPPORT_CASE_H
#define SSD_SUPPORT_CASE_H

#include "ssd/Artifact/Status.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ssd {

/// A float32 array; `present()` is false for an absent optional input.
struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  bool present() const { return !shape.empty(); }
};

/// An int32 array (seq_idx, cu_seqlens).
struct IntTensor {
  std::vector<int64_t> shape;
  std::vector<int32_t> data;
  bool present() const { return !shape.empty(); }
};

/// One SSD problem: sizes, flags, inputs and optionally expected outputs.
struct SSDCase {
  std::string name;
  std::string note;
  int64_t batch = 0, seqlen = 0, nheads = 0, headdim = 0, ngroups = 0,
          dstate = 0;
  bool dtSoftplus = false;
  double dtLimitLo = 0.0;
  double dtLimitHi = std::numeric_limits<double>::infinity();

  // Inputs. x, dt, A, B, C are always present.
  FloatTensor x, dt, A, B, C, D, z, dtBias, initialStates;
  IntTensor seqIdx, cuSeqlens;

  // Expected outputs, when the folder has them.
  FloatTensor expectedY, expectedFinalStates;

  bool varlen() const { return cuSeqlens.present(); }
  /// The number of sequences with cu_seqlens, otherwise 0.
  int64_t numSeqs() const;
  /// (b, L, h, p): the shape of x, z and y.
  std::vector<int64_t> tokenShape() const;
  /// (b, h, p, n), or (s, h, p, n) with cu_seqlens: the shape of the states.
  std::vector<int64_t> stateShape() const;
  /// The names of the inputs present, in case.json's spelling.
  std::vector<std::string> inputNames() const;
};

/// The name of every input a case may list, in case.json's spelling.
const std::vector<std::string> &caseInputNames();

/// Loads and validates the case folder `dir`. `finiteInputs`: the inputs
/// must be finite too (off only to run NaN or infinite inputs through a
/// kernel; expected outputs are always finite).
artifact::Expected<SSDCase> loadCase(const std::string &dir,
                                     bool finiteInputs = true);

/// Checks the sizes, shapes and index relations of a case, and that its
/// values are finite (the inputs' only where `finiteInputs`). `dir` only
/// serves to name files in the messages.
artifact::Status validateCase(const SSDCase &c, const std::string &dir,
                              bool finiteInputs = true);

/// Writes `c` as a case folder (creating `dir`): case.json, the inputs and
/// the expected outputs that are present.
artifact::Status writeCase(const SSDCase &c, const std::string &dir);

} // namespace ssd

#endif // SSD_SUPPORT_CASE_H
