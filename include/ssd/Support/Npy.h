//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes numpy `.npy` files of format 1.0 (and reads 2.0/3.0
// headers): little endian, C order, element types float32, float64, int32
// and int64. Every error names the file and the problem. Plain C++17 (no
// LLVM), so that the runtime-only build reads and writes cases too.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_SUPPORT_NPY_H
#define SSD_SUPPORT_NPY_H

#include "ssd/Artifact/DType.h"
#include "ssd/Artifact/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ssd {

/// The project's element types; a `.npy` file holds F32, F64, I32 or I64.
using artifact::DType;
using artifact::dtypeBytes;

/// The numpy type string of `dtype` (`<f4`, `<f8`, `<i4`, `<i8`), or "?"
/// for a type .npy files do not hold here.
const char *npyDTypeDescr(DType dtype);

/// A shape as text: `(2, 64, 4)`, `(5,)` or `()`.
std::string formatShape(const std::vector<int64_t> &shape);

/// The number of elements of `shape`, or -1 when it overflows int64.
int64_t shapeNumElements(const std::vector<int64_t> &shape);

/// The contents of one `.npy` file: its element type, shape and the raw
/// little-endian bytes of its elements in C order.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const { return shapeNumElements(shape); }
  bool isFloat() const { return dtype == DType::F32 || dtype == DType::F64; }

  /// The elements as float32 (float64 elements are rounded). Only valid for
  /// a floating-point array.
  std::vector<float> toFloat() const;
  /// The elements as int32. Only valid for an integer array; int64 elements
  /// must fit (see `fitsInt32`).
  std::vector<int32_t> toInt32() const;
  /// Whether every int64 element fits in int32 (always true for int32).
  bool fitsInt32() const;
};

/// Parses the bytes of a `.npy` file; `name` is used in error messages.
artifact::Expected<NpyArray> parseNpy(const std::string &name,
                                const std::vector<uint8_t> &contents);

/// Reads and parses the `.npy` file at `path`.
artifact::Expected<NpyArray> readNpy(const std::string &path);

/// Serialises an array as a format 1.0 `.npy` file.
std::vector<uint8_t> serializeNpy(DType dtype,
                                  const std::vector<int64_t> &shape,
                                  const std::vector<uint8_t> &bytes);

/// Writes a float32 (or int32) `.npy` file; the data size must match `shape`.
/// One float32 array for writeNpyFiles.
struct NpyOutput {
  std::string path;
  std::vector<int64_t> shape;
  const std::vector<float> *data = nullptr;
};
/// Writes the arrays as one: each to a temporary, then all renamed into
/// place; on failure none of them is left behind.
artifact::Status writeNpyFiles(const std::vector<NpyOutput> &outputs);

/// The bytes of the .npy file `path` would hold (for writing several files
/// as one); fails when `data` does not fill `shape`.
artifact::Expected<std::vector<uint8_t>> encodeNpy(const std::string &path,
                                             const std::vector<int64_t> &shape,
                                             const std::vector<float> &data);
artifact::Expected<std::vector<uint8_t>> encodeNpy(const std::string &path,
                                             const std::vector<int64_t> &shape,
                                             const std::vector<int32_t> &data);
artifact::Status writeNpy(const std::string &path, const std::vector<int64_t> &shape,
                    const std::vector<float> &data);
artifact::Status writeNpy(const std::string &path, const std::vector<int64_t> &shape,
                    const std::vector<int32_t> &data);

} // namespace ssd

#endif // SSD_SUPPORT_NPY_H
