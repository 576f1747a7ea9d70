//===- Problem.h - a generated SSD problem on the device --------*- C++ -*-===//
//
// Inputs of an artifact's layer drawn from a counter-based hash, so any
// element can be regenerated on the host without keeping the arrays (the
// reference check of a long sequence needs only the sampled heads), uploaded
// in the artifact's element types.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_BENCH_PROBLEM_H
#define SSD_BENCH_PROBLEM_H

#include "ssd/Runtime/Device.h"
#include "ssd/Runtime/Runtime.h"
#include "ssd/Support/Case.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ssd::bench {

/// The value of input `name` at flat index `i` (before dtype rounding).
float inputValue(const std::string &name, uint64_t seed, uint64_t i);

/// Whether the artifact's layer takes packed sequences (cu_seqlens): its
/// problem at (b, L) is b sequences of L tokens packed into one row.
bool packsSequences(const rt::Manifest &m);

/// One set of device tensors for an artifact at batch b, length L.
struct DeviceProblem {
  std::map<std::string, rt::DeviceBuffer> buffers;
  rt::ArgumentMap args;
};

/// Allocates and fills the inputs the manifest takes (outputs zeroed). With
/// `rowPad` > 0, each token's row of a tensor the manifest takes as a view
/// (`inner_contiguous`) is followed by `rowPad` unused elements, as in a
/// model's projection buffer; the values are the same.
rt::Expected<DeviceProblem> makeDeviceProblem(const rt::Manifest &m,
                                              int64_t batch, int64_t seqlen,
                                              uint64_t seed,
                                              int64_t rowPad = 0);

/// The case of one head `head` of batch row `row`, over the first `tokens`
/// tokens, with inputs rounded to the artifact's types (for the reference).
SSDCase headCase(const rt::Manifest &m, int64_t batch, int64_t seqlen,
                 uint64_t seed, int64_t row, int64_t head, int64_t tokens);

/// Minimum bytes moved (read x, dt, B, C (z); write y) and the matrix FLOPs
/// of the chunked algorithm (TARGETS.md).
double minimumBytes(const rt::Manifest &m, int64_t batch, int64_t seqlen);
double chunkedFlops(const rt::Manifest &m, int64_t batch, int64_t seqlen);

} // namespace ssd::bench

#endif // SSD_BENCH_PROBLEM_H
