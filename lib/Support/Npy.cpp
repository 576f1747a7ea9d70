//===- Npy.cpp - numpy .npy files -----------------------------------------===//
#include "ssd/Support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <limits>

using namespace llvm;
using namespace ssd;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

StringRef ssd::npyDTypeDescr(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::F32:
    return "<f4";
  case NpyDType::F64:
    return "<f8";
  case NpyDType::I32:
    return "<i4";
  case NpyDType::I64:
    return "<i8";
  }
  llvm_unreachable("unknown npy dtype");
}

size_t ssd::npyDTypeSize(NpyDType dtype) {
  return dtype == NpyDType::F32 || dtype == NpyDType::I32 ? 4 : 8;
}

std::string ssd::formatShape(ArrayRef<int64_t> shape) {
  std::string text = "(";
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += std::to_string(dim);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

int64_t ssd::shapeNumElements(ArrayRef<int64_t> shape) {
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
  return support::endian::read<T, llvm::endianness::little>(p);
}

std::vector<float> NpyArray::toFloat() const {
  size_t count = bytes.size() / npyDTypeSize(dtype);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == NpyDType::F32)
      values[i] = bit_cast<float>(loadLE<uint32_t>(&bytes[4 * i]));
    else
      values[i] = static_cast<float>(bit_cast<double>(loadLE<uint64_t>(&bytes[8 * i])));
  }
  return values;
}

std::vector<int32_t> NpyArray::toInt32() const {
  size_t count = bytes.size() / npyDTypeSize(dtype);
  std::vector<int32_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == NpyDType::I32)
      values[i] = loadLE<int32_t>(&bytes[4 * i]);
    else
      values[i] = static_cast<int32_t>(loadLE<int64_t>(&bytes[8 * i]));
  }
  return values;
}

bool NpyArray::fitsInt32() const {
  if (dtype != NpyDType::I64)
    return dtype == NpyDType::I32;
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
  HeaderParser(StringRef text) : rest(text) {}

  /// Parses the dictionary; returns a description of the problem on failure.
  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (!consume('}')) {
      std::string key;
      if (Error err = parseString(key))
        return std::move(err);
      if (!consume(':'))
        return fail("expected ':' after key '" + key + "'");
      if (key == "descr") {
        if (Error err = parseString(header.descr))
          return std::move(err);
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (Error err = parseBool(header.fortranOrder))
          return std::move(err);
        haveOrder = true;
      } else if (key == "shape") {
        if (Error err = parseShape(header.shape))
          return std::move(err);
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
  void skipSpace() { rest = rest.ltrim(" \t\r\n"); }
  bool peek(char c) {
    skipSpace();
    return !rest.empty() && rest.front() == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    rest = rest.drop_front();
    return true;
  }
  Error fail(const Twine &message) {
    return createStringError(inconvertibleErrorCode(), "malformed header: " + message);
  }
  Error parseString(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return fail("expected a quoted string");
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return fail("unterminated string");
    out = rest.slice(1, end).str();
    rest = rest.drop_front(end + 1);
    return Error::success();
  }
  Error parseBool(bool &out) {
    skipSpace();
    if (rest.consume_front("True"))
      out = true;
    else if (rest.consume_front("False"))
      out = false;
    else
      return fail("expected True or False");
    return Error::success();
  }
  Error parseShape(std::vector<int64_t> &out) {
    if (!consume('('))
      return fail("expected '(' to start the shape");
    while (!consume(')')) {
      skipSpace();
      size_t digits = rest.find_first_not_of("0123456789");
      if (digits == 0 || rest.empty())
        return fail("expected a non-negative dimension in the shape");
      int64_t dim;
      if (rest.take_front(digits).getAsInteger(10, dim))
        return fail("dimension too large in the shape");
      out.push_back(dim);
      rest = rest.drop_front(digits == StringRef::npos ? rest.size() : digits);
      if (!consume(',') && !peek(')'))
        return fail("expected ',' or ')' in the shape");
    }
    return Error::success();
  }

  StringRef rest;
};
} // namespace

static Error fileError(StringRef name, const Twine &problem) {
  return createStringError(inconvertibleErrorCode(), name + ": " + problem);
}

static Expected<NpyDType> parseDescr(StringRef name, StringRef descr) {
  for (NpyDType dtype : {NpyDType::F32, NpyDType::F64, NpyDType::I32, NpyDType::I64})
    if (descr == npyDTypeDescr(dtype))
      return dtype;
  // Single-byte types carry '|' and are endian-free; '=' means native, which
  // numpy writes as '<' on little-endian machines anyway.
  if (descr.starts_with(">"))
    return fileError(name, "big-endian dtype '" + descr +
                               "' is not supported (expected little endian)");
  return fileError(name, "unsupported dtype '" + descr +
                             "' (expected <f4, <f8, <i4 or <i8)");
}

Expected<NpyArray> ssd::parseNpy(StringRef name, ArrayRef<uint8_t> contents) {
  if (contents.size() < kMagicSize ||
      std::memcmp(contents.data(), kMagic, kMagicSize) != 0)
    return fileError(name, "bad magic: not a numpy .npy file");
  if (contents.size() < kMagicSize + 2)
    return fileError(name, "truncated header");
  uint8_t major = contents[kMagicSize];
  if (major < 1 || major > 3)
    return fileError(name, "unsupported .npy format version " +
                               Twine(unsigned(major)) + "." +
                               Twine(unsigned(contents[kMagicSize + 1])));
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lenBytes;
  if (contents.size() < prefix)
    return fileError(name, "truncated header");
  uint64_t headerLen = major == 1 ? loadLE<uint16_t>(&contents[kMagicSize + 2])
                                  : loadLE<uint32_t>(&contents[kMagicSize + 2]);
  if (contents.size() - prefix < headerLen)
    return fileError(name, "truncated header (declares " + Twine(headerLen) +
                               " bytes, file has " +
                               Twine(contents.size() - prefix) + ")");
  StringRef text(reinterpret_cast<const char *>(&contents[prefix]), headerLen);
  Expected<NpyHeader> header = HeaderParser(text).parse();
  if (!header)
    return fileError(name, toString(header.takeError()));
  if (header->fortranOrder)
    return fileError(name, "fortran_order arrays are not supported (expected C order)");
  Expected<NpyDType> dtype = parseDescr(name, header->descr);
  if (!dtype)
    return dtype.takeError();

  NpyArray array;
  array.dtype = *dtype;
  array.shape = std::move(header->shape);
  int64_t count = array.numElements();
  size_t itemSize = npyDTypeSize(array.dtype);
  if (count < 0 || static_cast<uint64_t>(count) >
                       std::numeric_limits<uint64_t>::max() / itemSize)
    return fileError(name, "shape " + formatShape(array.shape) + " is too large");
  uint64_t expected = static_cast<uint64_t>(count) * itemSize;
  uint64_t actual = contents.size() - prefix - headerLen;
  if (actual < expected)
    return fileError(name, "truncated data: shape " + formatShape(array.shape) +
                               " " + header->descr + " needs " + Twine(expected) +
                               " bytes, file has " + Twine(actual));
  if (actual > expected)
    return fileError(name, Twine(actual - expected) +
                               " bytes of trailing data after shape " +
                               formatShape(array.shape) + " " + header->descr);
  const uint8_t *data = contents.data() + prefix + headerLen;
  array.bytes.assign(data, data + expected);
  return array;
}

Expected<NpyArray> ssd::readNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(path, "cannot read: " + buffer.getError().message());
  ArrayRef<uint8_t> contents(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      (*buffer)->getBufferSize());
  return parseNpy(path, contents);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::vector<uint8_t> ssd::serializeNpy(NpyDType dtype, ArrayRef<int64_t> shape,
                                       ArrayRef<uint8_t> bytes) {
  std::string header = "{'descr': '" + npyDTypeDescr(dtype).str() +
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
static Error writeTyped(StringRef path, NpyDType dtype, ArrayRef<int64_t> shape,
                        ArrayRef<T> data) {
  if (shapeNumElements(shape) != static_cast<int64_t>(data.size()))
    return fileError(path, "internal error: " + Twine(data.size()) +
                               " values do not fill shape " + formatShape(shape));
  std::vector<uint8_t> bytes(data.size() * sizeof(T));
  for (auto [i, value] : llvm::enumerate(data)) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    support::endian::write<Bits, llvm::endianness::little>(
        &bytes[i * sizeof(T)], bit_cast<Bits>(value));
  }
  std::vector<uint8_t> file = serializeNpy(dtype, shape, bytes);
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return fileError(path, "cannot write: " + ec.message());
  os.write(reinterpret_cast<const char *>(file.data()), file.size());
  os.close();
  if (os.has_error())
    return fileError(path, "cannot write: " + os.error().message());
  return Error::success();
}

Error ssd::writeNpy(StringRef path, ArrayRef<int64_t> shape, ArrayRef<float> data) {
  return writeTyped(path, NpyDType::F32, shape, data);
}

Error ssd::writeNpy(StringRef path, ArrayRef<int64_t> shape, ArrayRef<int32_t> data) {
  return writeTyped(path, NpyDType::I32, shape, data);
}
