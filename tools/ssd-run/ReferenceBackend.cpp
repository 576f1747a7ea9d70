//===- ReferenceBackend.cpp - ssd-run --reference -------------------------===//
#include "ReferenceBackend.h"

#include "ssd/Reference/Reference.h"

using namespace ssd;

static void roundAll(FloatTensor &t, ElementKind kind) {
  for (float &v : t.data)
    v = roundTo(kind, v);
}

static std::vector<float> roundOut(const std::vector<double> &values,
                                   ElementKind kind) {
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
  ReferenceResult r = runReference(rounded);
  return {roundOut(r.y, config.dtype), roundOut(r.finalStates, config.stateDtype)};
}
