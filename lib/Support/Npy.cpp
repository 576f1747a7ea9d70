//===- Npy.cpp - numpy .npy files -----------------------------------------===//
#include "ssd/Support/Npy.h"

#include "Format.h"
#include "ssd/Support/FileBatch.h"

#include <cerrno>
#include <cstdio>
#include <string_view>

#include <cstring>
#include <limits>

using ssd::artifact::Expected;
using ssd::artifact::Status;
using namespace ssd;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

const char *ssd::npyDTypeDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  default:
    return "?";
  }
}

std::string ssd::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

int64_t ssd::shapeNumElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim))
      return -1;
    count *= dim;
  }
  return count;
}

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

template <typename T>
static T loadLE(const uint8_t *p) {
  return loadLittleEndian<T>(p);
}

std::vector<float> NpyArray::toFloat() const {
  size_t count = bytes.size() / dtypeBytes(dtype);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == DType::F32)
      values[i] = bitCast<float>(loadLE<uint32_t>(&bytes[4 * i]));
    else
      values[i] = static_cast<float>(bitCast<double>(loadLE<uint64_t>(&bytes[8 * i])));
  }
  return values;
}

std::vector<int32_t> NpyArray::toInt32() const {
  size_t count = bytes.size() / dtypeBytes(dtype);
  std::vector<int32_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == DType::I32)
      values[i] = loadLE<int32_t>(&bytes[4 * i]);
    else
      values[i] = static_cast<int32_t>(loadLE<int64_t>(&bytes[8 * i]));
  }
  return values;
}

bool NpyArray::fitsInt32() const {
  if (dtype != DType::I64)
    return dtype == DType::I32;
  for (size_t i = 0; i < bytes.size() / 8; ++i) {
    int64_t v = loadLE<int64_t>(&bytes[8 * i]);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// The header dictionary, e.g.
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser for the Python literal subset numpy writes.
class HeaderParser {
public:
  HeaderParser(std::string_view text) : rest(text) {}

  /// Parses the dictionary; returns a description of the problem on failure.
  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (!consume('}')) {
      std::string key;
      SSD_RETURN_IF_ERROR(parseString(key));
      if (!consume(':'))
        return fail("expected ':' after key '" + key + "'");
      if ((key == "descr" && haveDescr) ||
          (key == "fortran_order" && haveOrder) ||
          (key == "shape" && haveShape))
        return fail("duplicate key '" + key + "'");
      if (key == "descr") {
        SSD_RETURN_IF_ERROR(parseString(header.descr));
        haveDescr = true;
      } else if (key == "fortran_order") {
        SSD_RETURN_IF_ERROR(parseBool(header.fortranOrder));
        haveOrder = true;
      } else if (key == "shape") {
        SSD_RETURN_IF_ERROR(parseShape(header.shape));
        haveShape = true;
      } else {
        return fail("unknown key '" + key + "'");
      }
      if (!consume(',') && !peek('}'))
        return fail("expected ',' or '}'");
    }
    if (!haveDescr || !haveOrder || !haveShape)
      return fail("missing key '" +
                  std::string(!haveDescr   ? "descr"
                              : !haveOrder ? "fortran_order"
                                           : "shape") +
                  "'");
    return header;
  }

private:
  void skipSpace() {
    size_t start = rest.find_first_not_of(" \t\r\n");
    rest.remove_prefix(start == std::string_view::npos ? rest.size() : start);
  }
  bool peek(char c) {
    skipSpace();
    return !rest.empty() && rest.front() == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    rest.remove_prefix(1);
    return true;
  }
  Status fail(const std::string &message) {
    return Status::error("malformed header: " + message);
  }
  Status parseString(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return fail("expected a quoted string");
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    out = std::string(rest.substr(1, end - 1));
    rest.remove_prefix(end + 1);
    return Status::success();
  }
  Status parseBool(bool &out) {
    skipSpace();
    if (rest.substr(0, 4) == "True") {
      out = true;
      rest.remove_prefix(4);
    } else if (rest.substr(0, 5) == "False") {
      out = false;
      rest.remove_prefix(5);
    }
    else {
      return fail("expected True or False");
    }
    return Status::success();
  }
  Status parseShape(std::vector<int64_t> &out) {
    if (!consume('('))
      return fail("expected '(' to start the shape");
    while (!consume(')')) {
      skipSpace();
      size_t digits = rest.find_first_not_of("0123456789");
      if (digits == 0 || rest.empty())
        return fail("expected a non-negative dimension in the shape");
      if (digits == std::string_view::npos)
        digits = rest.size();
      int64_t dim = 0;
      for (char ch : rest.substr(0, digits)) {
        if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return fail("dimension too large in the shape");
        dim = dim * 10 + (ch - '0');
      }
      out.push_back(dim);
      rest.remove_prefix(digits);
      if (!consume(',') && !peek(')'))
        return fail("expected ',' or ')' in the shape");
    }
    return Status::success();
  }

  std::string_view rest;
};
} // namespace

static Status fileError(const std::string &name, const std::string &problem) {
  return Status::error(name + ": " + problem);
}

static Expected<DType> parseDescr(const std::string &name,
                                  const std::string &descr) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64})
    if (descr == npyDTypeDescr(dtype))
      return dtype;
  // Single-byte types carry '|' and are endian-free; '=' means native, which
  // numpy writes as '<' on little-endian machines anyway.
  if (descr.rfind(">", 0) == 0)
    return fileError(name, "big-endian dtype '" + descr +
                               "' is not supported (expected little endian)");
  return fileError(name, "unsupported dtype '" + descr +
                             "' (expected <f4, <f8, <i4 or <i8)");
}

Expected<NpyArray> ssd::parseNpy(const std::string &name,
                                const std::vector<uint8_t> &contents) {
  if (contents.size() < kMagicSize ||
      std::memcmp(contents.data(), kMagic, kMagicSize) != 0)
    return fileError(name, "bad magic: not a numpy .npy file");
  if (contents.size() < kMagicSize + 2)
    return fileError(name, "truncated header");
  uint8_t major = contents[kMagicSize];
  if (major < 1 || major > 3)
    return fileError(name, "unsupported .npy format version " +
                               std::to_string(unsigned(major)) + "." +
                               std::to_string(unsigned(contents[kMagicSize + 1])));
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lenBytes;
  if (contents.size() < prefix)
    return fileError(name, "truncated header");
  uint64_t headerLen = major == 1 ? loadLE<uint16_t>(&contents[kMagicSize + 2])
                                  : loadLE<uint32_t>(&contents[kMagicSize + 2]);
  if (contents.size() - prefix < headerLen)
    return fileError(name, "truncated header (declares " + std::to_string(headerLen) +
                               " bytes, file has " +
                               std::to_string(contents.size() - prefix) + ")");
  std::string_view text(reinterpret_cast<const char *>(&contents[prefix]),
                        headerLen);
  Expected<NpyHeader> header = HeaderParser(text).parse();
  if (!header.ok())
    return fileError(name, header.message());
  if (header->fortranOrder)
    return fileError(name, "fortran_order arrays are not supported (expected C order)");
  Expected<DType> dtype = parseDescr(name, header->descr);
  if (!dtype.ok())
    return dtype.status();

  NpyArray array;
  array.dtype = *dtype;
  array.shape = std::move(header->shape);
  int64_t count = array.numElements();
  size_t itemSize = dtypeBytes(array.dtype);
  if (count < 0 || static_cast<uint64_t>(count) >
                       std::numeric_limits<uint64_t>::max() / itemSize)
    return fileError(name, "shape " + formatShape(array.shape) + " is too large");
  uint64_t expected = static_cast<uint64_t>(count) * itemSize;
  uint64_t actual = contents.size() - prefix - headerLen;
  if (actual < expected)
    return fileError(name, "truncated data: shape " + formatShape(array.shape) +
                               " " + header->descr + " needs " + std::to_string(expected) +
                               " bytes, file has " + std::to_string(actual));
  if (actual > expected)
    return fileError(name, std::to_string(actual - expected) +
                               " bytes of trailing data after shape " +
                               formatShape(array.shape) + " " + header->descr);
  const uint8_t *data = contents.data() + prefix + headerLen;
  array.bytes.assign(data, data + expected);
  return array;
}

Expected<NpyArray> ssd::readNpy(const std::string &path) {
  std::string error;
  std::optional<std::vector<uint8_t>> contents = readBinaryFile(path, error);
  if (!contents)
    return fileError(path, error);
  return parseNpy(path, *contents);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::vector<uint8_t> ssd::serializeNpy(DType dtype,
                                       const std::vector<int64_t> &shape,
                                       const std::vector<uint8_t> &bytes) {
  std::string header = std::string("{'descr': '") + npyDTypeDescr(dtype) +
                       "', 'fortran_order': False, 'shape': " +
                       formatShape(shape) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary; the header
  // ends with a newline.
  size_t prefix = kMagicSize + 2 + 2;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

template <typename T>
static Expected<std::vector<uint8_t>>
encodeTyped(const std::string &path, DType dtype,
            const std::vector<int64_t> &shape, const std::vector<T> &data) {
  if (shapeNumElements(shape) != static_cast<int64_t>(data.size()))
    return fileError(path, "internal error: " + std::to_string(data.size()) +
                               " values do not fill shape " + formatShape(shape));
  std::vector<uint8_t> bytes(data.size() * sizeof(T));
  for (size_t i = 0; i < data.size(); ++i)
    storeLittleEndian(&bytes[i * sizeof(T)], data[i]);
  return serializeNpy(dtype, shape, bytes);
}

Expected<std::vector<uint8_t>> ssd::encodeNpy(const std::string &path,
                                              const std::vector<int64_t> &shape,
                                              const std::vector<float> &data) {
  return encodeTyped(path, DType::F32, shape, data);
}

Expected<std::vector<uint8_t>> ssd::encodeNpy(const std::string &path,
                                              const std::vector<int64_t> &shape,
                                              const std::vector<int32_t> &data) {
  return encodeTyped(path, DType::I32, shape, data);
}

Status ssd::writeNpyFiles(const std::vector<NpyOutput> &outputs) {
  FileBatch files;
  for (const NpyOutput &o : outputs) {
    Expected<std::vector<uint8_t>> bytes = encodeNpy(o.path, o.shape, *o.data);
    if (!bytes.ok())
      return bytes.status();
    files.add(o.path, bytes.take());
  }
  std::string failed, error;
  if (!files.commit(failed, error))
    return fileError(failed, error);
  return Status::success();
}

template <typename T>
static Status writeTyped(const std::string &path,
                         const std::vector<int64_t> &shape,
                         const std::vector<T> &data) {
  Expected<std::vector<uint8_t>> bytes = encodeNpy(path, shape, data);
  if (!bytes.ok())
    return bytes.status();
  std::string error;
  if (!writeBinaryFile(path, *bytes, error))
    return fileError(path, error);
  return Status::success();
}

Status ssd::writeNpy(const std::string &path, const std::vector<int64_t> &shape,
                     const std::vector<float> &data) {
  return writeTyped(path, shape, data);
}

Status ssd::writeNpy(const std::string &path, const std::vector<int64_t> &shape,
                     const std::vector<int32_t> &data) {
  return writeTyped(path, shape, data);
}
