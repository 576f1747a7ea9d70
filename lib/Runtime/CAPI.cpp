//===- CAPI.cpp - C interface of the SSD runtime --------------------------===//

#include "ssd-c/Runtime.h"
#include "ssd/Runtime/Runtime.h"

#include <new>

using namespace ssd::rt;

struct SsdRtErrorImpl {
  std::string message;
};

struct SsdRtArtifactImpl {
  Artifact artifact;
};

static SsdRtError makeError(const Status &s) {
  if (s.ok())
    return nullptr;
  return new (std::nothrow) SsdRtErrorImpl{s.message()};
}

static Expected<ArgumentMap> toArguments(const SsdRtTensor *tensors,
                                         size_t count) {
  ArgumentMap args;
  for (size_t i = 0; i < count; ++i) {
    const SsdRtTensor &t = tensors[i];
    if (!t.name)
      return Status::error("tensor " + std::to_string(i) + " has no name");
    if (t.dtype < SSD_RT_F32 || t.dtype > SSD_RT_I64)
      return Status::error(std::string("tensor argument '") + t.name +
                           "': invalid dtype code " + std::to_string(t.dtype));
    if (t.rank < 0 || (t.rank > 0 && !t.shape))
      return Status::error(std::string("tensor argument '") + t.name +
                           "': invalid rank or missing shape");
    TensorArg a;
    a.devicePtr = t.data;
    a.dtype = static_cast<DType>(t.dtype);
    a.shape.assign(t.shape, t.shape + t.rank);
    if (t.strides)
      a.strides.assign(t.strides, t.strides + t.rank);
    a.device = t.device;
    if (!args.emplace(t.name, std::move(a)).second)
      return Status::error(std::string("tensor argument '") + t.name +
                           "' given twice");
  }
  return args;
}

// The C enum follows DType's order.
static_assert(int(DType::F32) == SSD_RT_F32 &&
                  int(DType::BF16) == SSD_RT_BF16 &&
                  int(DType::I64) == SSD_RT_I64,
              "SsdRtDType must mirror ssd::rt::DType");

extern "C" {

const char *ssdRtErrorGetMessage(SsdRtError error) {
  return error ? error->message.c_str() : "success";
}

void ssdRtErrorDestroy(SsdRtError error) { delete error; }

SsdRtError ssdRtArtifactLoad(const char *dir, SsdRtArtifact *artifact) {
  if (!dir || !artifact)
    return makeError(Status::error("ssdRtArtifactLoad: null argument"));
  *artifact = nullptr;
  Expected<Artifact> a = Artifact::load(dir);
  if (!a.ok())
    return makeError(a.status());
  *artifact = new (std::nothrow) SsdRtArtifactImpl{a.take()};
  return *artifact ? nullptr : makeError(Status::error("out of memory"));
}

void ssdRtArtifactDestroy(SsdRtArtifact artifact) { delete artifact; }

size_t ssdRtArtifactGetNumKernels(SsdRtArtifact artifact) {
  return artifact->artifact.manifest().kernels.size();
}

const char *ssdRtArtifactGetKernelName(SsdRtArtifact artifact, size_t index) {
  const auto &kernels = artifact->artifact.manifest().kernels;
  return index < kernels.size() ? kernels[index].name.c_str() : nullptr;
}

const char *ssdRtArtifactGetTarget(SsdRtArtifact artifact) {
  return artifact->artifact.manifest().target.c_str();
}

SsdRtError ssdRtArtifactGetWorkspaceSize(SsdRtArtifact artifact,
                                         const SsdRtTensor *tensors,
                                         size_t numTensors, uint64_t *bytes) {
  Expected<ArgumentMap> args = toArguments(tensors, numTensors);
  if (!args.ok())
    return makeError(args.status());
  Expected<uint64_t> size = artifact->artifact.workspaceSize(*args);
  if (!size.ok())
    return makeError(size.status());
  *bytes = *size;
  return nullptr;
}

SsdRtError ssdRtArtifactLaunch(SsdRtArtifact artifact,
                               const SsdRtTensor *tensors, size_t numTensors,
                               void *stream, void *workspace,
                               uint64_t workspaceBytes) {
  Expected<ArgumentMap> args = toArguments(tensors, numTensors);
  if (!args.ok())
    return makeError(args.status());
  return makeError(
      artifact->artifact.launch(*args, stream, {workspace, workspaceBytes}));
}

} // extern "C"
