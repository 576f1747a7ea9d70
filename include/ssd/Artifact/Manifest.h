//===- Manifest.h - The manifest of a compiled SSD artifact -----*- C++ -*-===//
//
// An artifact is a directory holding `kernels.cubin` and `manifest.json`. The
// manifest says what the cubin was compiled for and how to launch it: the
// tensors it takes, the workspaces it needs, and every kernel in launch order
// with its parameter layout and geometry. docs/runtime.md documents the format.
//
// This is the format's one home: the compiler writes manifests with
// printManifest and the runtime reads them with parseManifest; both check
// the same rules. Printing a parsed manifest gives back the text the
// compiler wrote (extension keys, "x-...", are not kept).
//
//===----------------------------------------------------------------------===//

#ifndef SSD_ARTIFACT_MANIFEST_H
#define SSD_ARTIFACT_MANIFEST_H

#include "ssd/Artifact/DType.h"
#include "ssd/Artifact/Expr.h"
#include "ssd/Artifact/Json.h"
#include "ssd/Artifact/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ssd::artifact {

/// The format version this library reads and writes.
constexpr int64_t kManifestFormatVersion = 1;

/// The tensor names an artifact may take (DESIGN.md, "Semantics").
const std::vector<std::string> &knownTensorNames();

struct CompilerInfo {
  std::string name;
  std::string version;
  /// Free-form: the options the artifact was compiled with.
  JsonValue options;
};

/// The specialisation constants: kernels are compiled for these values.
struct Constants {
  int64_t nheads = 0, headdim = 0, dstate = 0, ngroups = 0, chunkSize = 0;
  DType dtype = DType::F32;
  DType stateDtype = DType::F32;
  std::vector<std::string> features;
  /// Further integer constants, usable as symbols in expressions.
  std::vector<std::pair<std::string, int64_t>> extra;
};

enum class Layout {
  Contiguous,      ///< Row-major dense strides.
  InnerContiguous, ///< Innermost stride 1; other strides keep `alignment`.
  Strided,         ///< Any non-negative strides.
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  /// One expression per dimension, outermost first. A bare symbol that is
  /// not a constant (e.g. "b", "L") binds to the size it meets first.
  std::vector<Expr> shape;
  int64_t alignment = 16;
  Layout layout = Layout::Contiguous;
  bool optional = false;
  bool output = false;
};

/// Scratch memory the kernels share; the runtime carves every workspace out
/// of one buffer.
struct WorkspaceSpec {
  std::string name;
  Expr size;               ///< Bytes.
  std::vector<Expr> shape; ///< Element shape; required by memref params.
  DType dtype = DType::U8; ///< Element type of `shape`.
  int64_t alignment = 256;
  bool zeroInit = false; ///< Zeroed on the stream before each launch.
  /// False: `size` was computed from `shape` and is not written.
  bool sizeGiven = true;
};

enum class ParamKind { Tensor, Workspace, Scalar, TensorMap };
/// How a buffer is passed: a bare pointer, or the expanded memref descriptor
/// of MLIR's default calling convention (allocated and aligned pointers,
/// offset, sizes, strides; all i64 after the pointers).
enum class Abi { Pointer, Memref };
enum class ScalarType { I32, I64 };
enum class Swizzle { None, B32, B64, B128 };
enum class Interleave { None, B16, B32 };
enum class L2Promotion { None, B64, B128, B256 };
enum class OobFill { Zero, NaN };

struct TensorMapSpec {
  /// Box of one TMA copy, outermost dimension first like the tensor shape.
  std::vector<int64_t> box;
  /// Traversal strides, outermost first; all 1 when the manifest omits them.
  std::vector<int64_t> elementStrides;
  /// -1, or the dimension (outermost first, not the innermost) just outside
  /// which the map adds a panel dimension: the innermost dimension is read
  /// as panels of box.back() elements, and one copy brings them all, panel
  /// after panel (a [panel][rows][box.back()] block for panelDim the row
  /// dimension), in one TMA instruction instead of one a panel.
  int64_t panelDim = -1;
  Swizzle swizzle = Swizzle::None;
  Interleave interleave = Interleave::None;
  L2Promotion l2Promotion = L2Promotion::None;
  OobFill oobFill = OobFill::Zero;
  /// True: the 128-byte descriptor is a by-value (grid-constant) parameter.
  /// False: the parameter is a pointer to a copy in global memory.
  bool byValue = true;
};

struct ParamSpec {
  ParamKind kind = ParamKind::Tensor;
  /// The tensor, workspace or scalar the parameter passes.
  std::string name;
  Abi abi = Abi::Pointer;
  ScalarType scalarType = ScalarType::I32;
  Expr value = Expr::constant(0); ///< Scalars only.
  TensorMapSpec tensorMap;        ///< TensorMap only.
};

struct KernelSpec {
  std::string name;
  std::array<Expr, 3> grid = {Expr::constant(1), Expr::constant(1),
                              Expr::constant(1)};
  std::array<Expr, 3> block = {Expr::constant(1), Expr::constant(1),
                               Expr::constant(1)};
  Expr sharedMemory = Expr::constant(0);
  std::array<int64_t, 3> cluster = {1, 1, 1};
  std::vector<ParamSpec> params;
  /// The launch condition: the kernel runs where it evaluates to non-zero
  /// (e.g. one of two kernels chosen by a derived symbol).
  Expr when = Expr::constant(1);
  /// How many dimensions of grid, block and cluster the manifest states
  /// (the rest are 1); 0 for cluster: not stated.
  int gridRank = 3, blockRank = 3, clusterRank = 0;
};

struct Manifest {
  int64_t formatVersion = kManifestFormatVersion;
  std::string target; ///< e.g. "sm_90a".
  CompilerInfo compiler;
  Constants constants;
  /// Symbols defined from others, evaluated in order once shapes are bound.
  std::vector<std::pair<std::string, Expr>> derived;
  /// The manifest does not define `nc`; parsing put the chunk count,
  /// ceildiv(L, Q), first in `derived`, and printing leaves it out.
  bool ncImplied = false;
  std::vector<TensorSpec> tensors;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<KernelSpec> kernels;

  const TensorSpec *findTensor(std::string_view name) const;
  const WorkspaceSpec *findWorkspace(std::string_view name) const;
  /// Constants and their short aliases (h, p, n, g, Q) as symbols.
  SymbolTable constantSymbols() const;
};

/// Parses and validates manifest text. Errors name the key, e.g.
/// "kernels[0].params[2].kind: expected one of ...".
Expected<Manifest> parseManifest(std::string_view json);
/// The same from a JSON document already parsed.
Expected<Manifest> readManifest(const JsonValue &document);

/// The JSON document of `manifest`: the header and sections in a fixed
/// order, the members of each entry in alphabetical order, defaults left out.
JsonValue manifestToJson(const Manifest &manifest);
/// The `constants` object of manifestToJson.
JsonValue constantsToJson(const Constants &constants);
/// manifest.json's text: manifestToJson laid out by printJson, with a final
/// newline.
std::string printManifest(const Manifest &manifest);

} // namespace ssd::artifact

#endif // SSD_ARTIFACT_MANIFEST_H
