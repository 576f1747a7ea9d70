//===- GPUCompile.cpp - compile an artifact for ssd-run (MLIR builds) -----===//
#include "GPUBackend.h"

#include "ssd/Compile/Artifact.h"

#include <cstdlib>

using namespace ssd;

bool ssd::canCompileArtifacts() { return true; }

rt::Expected<std::string>
ssd::compileArtifactForRun(const LayerSpec &spec, const std::string &strategy) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/ssd-run-artifact-XXXXXX";
  if (!mkdtemp(pattern.data()))
    return rt::Status::error("cannot create a temporary directory for the "
                             "artifact under " +
                             pattern);
  CompileOptions options;
  options.target = "sm_90a";
  options.strategy = strategy;
  std::string error = compileArtifact(spec, options, pattern);
  if (!error.empty())
    return rt::Status::error("compiling the case for the GPU failed: " + error);
  return pattern;
}
