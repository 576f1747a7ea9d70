//===- ArtifactTest.cpp - Loading artifacts; no CUDA driver ---------------===//
//
// Loading needs no GPU. Launching does: here the driver is pointed at a
// library that does not exist, so every launch must fail cleanly with
// "CUDA driver not found", on machines with and without a GPU alike.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "TestManifest.h"
#include "ssd-c/Runtime.h"
#include "ssd/Runtime/Device.h"
#include "ssd/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace ssd::rt;
using ssd::rt::test::kManifest;

extern "C" int ssdRtCHeaderCheck(const char *missingDir);

namespace {

constexpr const char *kNoDriver = "libssd-rt-test-no-such-driver.so.1";

// Before any test runs, so the process-wide driver is never the real one.
const bool driverHidden = setenv("SSD_RT_CUDA_DRIVER", kNoDriver, 1) == 0;

const char kCubin[] = "\x7f"
                      "ELF-not-really-a-cubin";

/// A fresh artifact directory under the test's temporary directory.
class ArtifactDir {
public:
  ArtifactDir(const std::string &manifest, const std::string &cubin) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/ssd-rt-test-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    EXPECT_NE(mkdtemp(buf.data()), nullptr);
    path = buf.data();
    if (!manifest.empty())
      std::ofstream(path + "/manifest.json") << manifest;
    if (!cubin.empty())
      std::ofstream(path + "/kernels.cubin", std::ios::binary) << cubin;
  }
  ~ArtifactDir() {
    unlink((path + "/manifest.json").c_str());
    unlink((path + "/kernels.cubin").c_str());
    rmdir(path.c_str());
  }
  std::string path;
};

ArgumentMap smallProblem() {
  ArgumentMap args;
  auto add = [&](const char *name, uintptr_t address, DType t,
                 std::vector<int64_t> shape) {
    args[name] = TensorArg{reinterpret_cast<void *>(address), t, shape, {}, 0};
  };
  add("x", 0x100000, DType::BF16, {1, 128, 8, 64});
  add("dt", 0x200000, DType::F32, {1, 128, 8});
  add("A", 0x300000, DType::F32, {8});
  add("B", 0x400000, DType::BF16, {1, 128, 2, 128});
  add("C", 0x500000, DType::BF16, {1, 128, 2, 128});
  add("D", 0x600000, DType::F32, {8});
  add("y", 0x700000, DType::BF16, {1, 128, 8, 64});
  add("final_states", 0x800000, DType::F32, {1, 8, 64, 128});
  return args;
}

TEST(Driver, NotFound) {
  Expected<std::unique_ptr<Driver>> d = loadDriver(kNoDriver);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(
      d.message().rfind(std::string("CUDA driver not found: cannot load ") +
                            kNoDriver + " (",
                        0),
      0u)
      << d.message();
  EXPECT_NE(d.message().find("needs an NVIDIA GPU and driver"),
            std::string::npos);
}

TEST(Driver, NotFoundIsReportedByEveryEntryPoint) {
  ASSERT_TRUE(driverHidden);
  Status s = driverAvailable();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("CUDA driver not found", 0), 0u) << s.message();
  Expected<DeviceInfo> dev = currentDevice();
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.message(), s.message());
}

TEST(GraphReplay, MisuseAndAMissingDriverAreErrors) {
  ASSERT_TRUE(driverHidden);
  GraphReplay g;
  EXPECT_EQ(g.size(), 0u);
  bool enqueued = false;
  Status s = g.record([&](void *) {
    enqueued = true;
    return Status::success();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "GraphReplay::record before init");
  EXPECT_FALSE(enqueued);
  Status r = g.replay(0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "GraphReplay::replay: no graph 0 (0 recorded)");
  Status i = g.init();
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.message().rfind("CUDA driver not found", 0), 0u) << i.message();
  EXPECT_EQ(g.stream(), nullptr);
}

TEST(Artifact, LoadsFromADirectory) {
  ArtifactDir dir(kManifest, kCubin);
  Expected<Artifact> a = Artifact::load(dir.path);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->origin(), dir.path);
  EXPECT_EQ(a->manifest().kernels.size(), 2u);
  // Planning is pure: it works without a driver.
  Expected<LaunchPlan> plan = a->plan(smallProblem(), DeviceInfo());
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->symbols.at("nc"), 1);
}

TEST(Artifact, LaunchWithoutDriverFailsCleanly) {
  ArtifactDir dir(kManifest, kCubin);
  Expected<Artifact> a = Artifact::load(dir.path);
  ASSERT_TRUE(a.ok()) << a.message();
  Status s = a->launch(smallProblem(), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("CUDA driver not found", 0), 0u) << s.message();
  Expected<uint64_t> ws = a->workspaceSize(smallProblem());
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.message().rfind("CUDA driver not found", 0), 0u);
}

TEST(Artifact, MissingFiles) {
  ArtifactDir noManifest("", kCubin);
  Expected<Artifact> a = Artifact::load(noManifest.path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(), "cannot read " + noManifest.path +
                             "/manifest.json: No such file or directory");

  ArtifactDir noCubin(kManifest, "");
  a = Artifact::load(noCubin.path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(), "cannot read " + noCubin.path +
                             "/kernels.cubin: No such file or directory");
}

TEST(Artifact, ErrorsNameTheFile) {
  ArtifactDir bad(test::manifestWith("\"sm_90a\"", "\"sm90\""), kCubin);
  Expected<Artifact> a = Artifact::load(bad.path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(), bad.path + "/manifest.json: target: expected an "
                                    "sm_XY[a] target, got \"sm90\"");

  ArtifactDir notCubin(kManifest, "PTX .version 8.0");
  a = Artifact::load(notCubin.path);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(),
            notCubin.path + "/kernels.cubin: not a cubin (no ELF header)");
}

TEST(Artifact, DeviceSmokeTestManifestPlans) {
  std::ifstream in(SSD_RT_DEVICE_TEST_DIR "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  Expected<Artifact> a = Artifact::fromMemory(
      text, std::vector<char>(kCubin, kCubin + sizeof(kCubin)), "device");
  ASSERT_TRUE(a.ok()) << a.message();
  ArgumentMap args;
  args["x"] = {reinterpret_cast<void *>(0x100000), DType::F32, {2, 100, 4, 32}};
  args["y"] = {reinterpret_cast<void *>(0x200000), DType::F32, {2, 100, 4, 32}};
  Expected<LaunchPlan> plan = a->plan(args, DeviceInfo());
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->kernels.size(), 3u);
  EXPECT_EQ(plan->kernels[0].grid, (std::array<uint32_t, 3>{100, 1, 1}));
  EXPECT_EQ(plan->kernels[1].grid, (std::array<uint32_t, 3>{8, 2, 1}));
  EXPECT_EQ(plan->kernels[1].sharedBytes, 9216u);
  EXPECT_EQ(plan->kernels[2].scalarValues[1], 16);
  EXPECT_EQ(plan->workspaceBytes, 4u);
}

TEST(CApi, LoadQueryAndLaunchWithoutDriver) {
  ArtifactDir dir(kManifest, kCubin);
  SsdRtArtifact artifact = nullptr;
  SsdRtError error = ssdRtArtifactLoad(dir.path.c_str(), &artifact);
  ASSERT_EQ(error, nullptr) << ssdRtErrorGetMessage(error);
  EXPECT_EQ(ssdRtArtifactGetNumKernels(artifact), 2u);
  EXPECT_STREQ(ssdRtArtifactGetKernelName(artifact, 1), "ssd_fused");
  EXPECT_EQ(ssdRtArtifactGetKernelName(artifact, 2), nullptr);
  EXPECT_STREQ(ssdRtArtifactGetTarget(artifact), "sm_90a");

  int64_t shape[] = {1, 128, 8, 64};
  SsdRtTensor tensors[] = {{"x", reinterpret_cast<void *>(0x100000),
                            SSD_RT_BF16, 4, shape, nullptr, 0}};
  error = ssdRtArtifactLaunch(artifact, tensors, 1, nullptr, nullptr, 0);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(std::string(ssdRtErrorGetMessage(error))
                .rfind("CUDA driver not found", 0),
            0u);
  ssdRtErrorDestroy(error);

  SsdRtTensor twice[] = {tensors[0], tensors[0]};
  error = ssdRtArtifactLaunch(artifact, twice, 2, nullptr, nullptr, 0);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(ssdRtErrorGetMessage(error), "tensor argument 'x' given twice");
  ssdRtErrorDestroy(error);

  uint64_t bytes = 0;
  error = ssdRtArtifactGetWorkspaceSize(artifact, tensors, 1, &bytes);
  ASSERT_NE(error, nullptr);
  ssdRtErrorDestroy(error);

  EXPECT_STREQ(ssdRtErrorGetMessage(nullptr), "success");
  ssdRtArtifactDestroy(artifact);
}

TEST(CApi, HeaderIsValidC) {
  EXPECT_TRUE(ssdRtCHeaderCheck("/nonexistent/ssd-artifact"));
}

} // namespace
