//===- Manifest.h - The manifest as the runtime names it --------*- C++ -*-===//
//
// The typed manifest, its parser and its printer live in the artifact
// library (ssd/Artifact/Manifest.h), shared with the compiler that writes
// manifests; the runtime reads them through these names.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_MANIFEST_H
#define SSD_RUNTIME_MANIFEST_H

#include "ssd/Artifact/Manifest.h"
#include "ssd/Runtime/DType.h"
#include "ssd/Runtime/Expr.h"
#include "ssd/Runtime/Json.h"

namespace ssd::rt {
using artifact::Abi;
using artifact::CompilerInfo;
using artifact::Constants;
using artifact::Interleave;
using artifact::KernelSpec;
using artifact::kManifestFormatVersion;
using artifact::knownTensorNames;
using artifact::L2Promotion;
using artifact::Layout;
using artifact::Manifest;
using artifact::OobFill;
using artifact::ParamKind;
using artifact::ParamSpec;
using artifact::parseManifest;
using artifact::printManifest;
using artifact::ScalarType;
using artifact::Swizzle;
using artifact::TensorMapSpec;
using artifact::TensorSpec;
using artifact::WorkspaceSpec;
} // namespace ssd::rt

#endif // SSD_RUNTIME_MANIFEST_H
