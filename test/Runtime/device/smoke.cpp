//===- smoke.cpp - The runtime on a real GPU ------------------------------===//
//
// Launches the artifact built from kernels.cu + manifest.json through the
// runtime, checks y = 3x + 1 exactly, then checks that bad arguments fail
// with the runtime's messages on a real device. Prints one PASS or FAIL line
// per check; exits non-zero on any FAIL. Usage: smoke ARTIFACT_DIR
//
//===----------------------------------------------------------------------===//

#include "ssd-c/Runtime.h"
#include "ssd/Runtime/Runtime.h"

#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace ssd::rt;

namespace {

int failures = 0;

void report(bool ok, const std::string &what, const std::string &detail = "") {
  std::printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  failures += !ok;
}

bool cuOk(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return true;
  const char *name = "?";
  cuGetErrorName(r, &name);
  report(false, what, name);
  return false;
}

/// The launch must fail, and its message must contain `needle`.
void expectError(const Status &s, const std::string &needle,
                 const std::string &what) {
  if (s.ok())
    report(false, what, "launch succeeded");
  else
    report(s.message().find(needle) != std::string::npos, what, s.message());
}

constexpr int64_t kH = 4, kP = 32;

struct Problem {
  int64_t b, L;
  std::vector<float> x;
  CUdeviceptr dx = 0, dy = 0;
  size_t bytes() const { return x.size() * sizeof(float); }
  ArgumentMap args() const {
    ArgumentMap a;
    a["x"] = {reinterpret_cast<void *>(dx), DType::F32, {b, L, kH, kP}, {}, 0};
    a["y"] = {reinterpret_cast<void *>(dy), DType::F32, {b, L, kH, kP}, {}, 0};
    return a;
  }
};

bool makeProblem(Problem &p, int64_t b, int64_t L) {
  p.b = b;
  p.L = L;
  p.x.resize(size_t(b * L * kH * kP));
  for (size_t i = 0; i < p.x.size(); ++i)
    p.x[i] = float(int64_t(i * 37 % 1001) - 500) / 64.0f;
  // One extra element keeps zero-sized problems allocatable.
  return cuOk(cuMemAlloc(&p.dx, p.bytes() + 16), "cuMemAlloc x") &&
         cuOk(cuMemAlloc(&p.dy, p.bytes() + 16), "cuMemAlloc y") &&
         (p.x.empty() ||
          cuOk(cuMemcpyHtoD(p.dx, p.x.data(), p.bytes()), "copy x")) &&
         cuOk(cuMemsetD8(p.dy, 0xff, p.bytes() + 16), "poison y");
}

/// y must be 2x + (x + 1), rounded as the kernels round.
void checkResult(const Problem &p, CUstream stream, const std::string &what) {
  if (!cuOk(cuStreamSynchronize(stream), (what + ": kernels ran").c_str()))
    return;
  std::vector<float> y(p.x.size());
  if (!y.empty() && !cuOk(cuMemcpyDtoH(y.data(), p.dy, p.bytes()), "copy y"))
    return;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    float want = 2.0f * p.x[i];
    want = want + (p.x[i] + 1.0f);
    if (std::memcmp(&want, &y[i], sizeof(float)) != 0 && !bad++)
      first = i;
  }
  report(bad == 0, what,
         bad ? std::to_string(bad) + " wrong values, first at " +
                   std::to_string(first) + ": " + std::to_string(y[first])
             : std::to_string(y.size()) + " values exact");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT_DIR\n", argv[0]);
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  if (!cuOk(cuInit(0), "cuInit") ||
      !cuOk(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !cuOk(cuDevicePrimaryCtxRetain(&ctx, dev), "primary context") ||
      !cuOk(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
      !cuOk(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
    return 1;

  Expected<Artifact> artifact = Artifact::load(argv[1]);
  report(artifact.ok(), "load artifact",
         artifact.ok() ? "" : artifact.message());
  if (!artifact.ok())
    return 1;
  Expected<DeviceInfo> device = currentDevice();
  report(device.ok(), "query device",
         device.ok() ? "sm_" + std::to_string(device->computeMajor) +
                           std::to_string(device->computeMinor) + ", " +
                           std::to_string(device->smCount) + " SMs"
                     : device.message());

  // L = 100 is not a multiple of the 16-row TMA box: the last tile reads
  // past L and relies on the out-of-bounds fill.
  Problem p;
  if (!makeProblem(p, 2, 100))
    return 1;
  Status s = artifact->launch(p.args(), stream);
  report(s.ok(), "launch (auto workspace)", s.ok() ? "" : s.message());
  checkResult(p, stream, "y = 3x + 1 (auto workspace)");

  // Again with a caller workspace: the counter must be zeroed per launch.
  Expected<uint64_t> wsBytes = artifact->workspaceSize(p.args());
  report(wsBytes.ok() && *wsBytes >= 4, "workspace size",
         wsBytes.ok() ? std::to_string(*wsBytes) + " bytes"
                      : wsBytes.message());
  CUdeviceptr ws = 0;
  cuOk(cuMemAlloc(&ws, 256), "cuMemAlloc workspace");
  cuOk(cuMemsetD8(ws, 0x5a, 256), "poison workspace");
  cuOk(cuMemsetD8(p.dy, 0xff, p.bytes()), "poison y");
  for (int i = 0; i < 2; ++i) {
    s = artifact->launch(p.args(), stream, {reinterpret_cast<void *>(ws), 256});
    report(s.ok(), "launch (caller workspace) #" + std::to_string(i + 1),
           s.ok() ? "" : s.message());
  }
  checkResult(p, stream, "y = 3x + 1 (caller workspace, twice)");

  // Through the C interface.
  SsdRtArtifact c = nullptr;
  SsdRtError err = ssdRtArtifactLoad(argv[1], &c);
  report(!err, "C API load", err ? ssdRtErrorGetMessage(err) : "");
  if (!err) {
    int64_t shape[] = {p.b, p.L, kH, kP};
    SsdRtTensor t[] = {
        {"x", reinterpret_cast<void *>(p.dx), SSD_RT_F32, 4, shape, nullptr, 0},
        {"y", reinterpret_cast<void *>(p.dy), SSD_RT_F32, 4, shape, nullptr,
         0}};
    cuOk(cuMemsetD8(p.dy, 0xff, p.bytes()), "poison y");
    err = ssdRtArtifactLaunch(c, t, 2, stream, nullptr, 0);
    report(!err, "C API launch", err ? ssdRtErrorGetMessage(err) : "");
    ssdRtErrorDestroy(err);
    checkResult(p, stream, "y = 3x + 1 (C API)");
    ssdRtArtifactDestroy(c);
  }

  // An empty sequence: every kernel with an empty grid is skipped.
  Problem empty;
  if (makeProblem(empty, 2, 0)) {
    s = artifact->launch(empty.args(), stream);
    report(s.ok(), "launch with L = 0", s.ok() ? "" : s.message());
    report(cuStreamSynchronize(stream) == CUDA_SUCCESS, "L = 0 ran");
  }

  // Argument checks against real pointers.
  std::vector<float> host(p.x);
  ArgumentMap a = p.args();
  a["x"].devicePtr = host.data();
  expectError(artifact->launch(a, stream), "is not CUDA device memory",
              "host pointer rejected");
  a = p.args();
  a["y"].shape[1] = p.L + 1;
  expectError(artifact->launch(a, stream),
              "tensor argument 'y': dimension 1 (L) is 101, but L = 100 from x",
              "inconsistent L rejected");
  a = p.args();
  a["x"].dtype = DType::F16;
  expectError(artifact->launch(a, stream), "dtype is f16, expected f32",
              "wrong dtype rejected");
  a = p.args();
  a["x"].devicePtr = reinterpret_cast<char *>(p.dx) + 4;
  expectError(artifact->launch(a, stream), "is not aligned to 16 bytes",
              "misaligned pointer rejected");
  a = p.args();
  a["x"].strides = {p.L * kH * kP, kH * kP, 1, kH};
  expectError(artifact->launch(a, stream), "are not contiguous",
              "non-contiguous strides rejected");
  a = p.args();
  a["y"].devicePtr = a["x"].devicePtr;
  expectError(artifact->launch(a, stream), "overlaps 'x'", "aliasing rejected");
  a = p.args();
  a.erase("y");
  expectError(artifact->launch(a, stream), "missing tensor argument 'y'",
              "missing tensor rejected");
  a = p.args();
  a["y"].device = 1;
  expectError(artifact->launch(a, stream), "is on device 1",
              "wrong device rejected");
  expectError(
      artifact->launch(p.args(), stream, {reinterpret_cast<void *>(ws), 2}),
      "workspace: 2 bytes given", "small workspace rejected");
  report(cuStreamSynchronize(stream) == CUDA_SUCCESS,
         "stream healthy after rejected launches");

  std::printf("%s: %d check(s) failed\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
