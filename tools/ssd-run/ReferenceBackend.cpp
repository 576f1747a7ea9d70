//===- ReferenceBackend.cpp - ssd-run --reference -------------------------===//
#include "ReferenceBackend.h"

#include "ssd/Reference/Reference.h"

#include <algorithm>
#include <chrono>

using namespace ssd;

static void roundAll(FloatTensor &t, DType kind) {
  for (float &v : t.data)
    v = roundTo(kind, v);
}

static std::vector<float> roundOut(const std::vector<double> &values,
                                   DType kind) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = roundTo(kind, static_cast<float>(values[i]));
  return out;
}

RunOutputs ssd::runReferenceBackend(const SSDCase &c, const RunConfig &config) {
  SSDCase rounded = c;
  for (FloatTensor *t : {&rounded.x, &rounded.B, &rounded.C, &rounded.z})
    roundAll(*t, config.dtype);
  roundAll(rounded.initialStates, config.stateDtype);
  ReferenceResult r;
  std::vector<double> runMs;
  for (int64_t i = 0; i < std::max<int64_t>(config.repeat, 1); ++i) {
    auto start = std::chrono::steady_clock::now();
    r = runReference(rounded);
    runMs.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  return {roundOut(r.y, config.dtype),
          roundOut(r.finalStates, config.stateDtype), std::move(runMs)};
}
