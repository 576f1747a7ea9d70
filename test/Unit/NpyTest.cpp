//===- NpyTest.cpp - .npy reading and writing ------------------------------===//
#include "TestUtil.h"

#include "ssd/Support/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include "gmock/gmock.h"

#include <cstring>
#include <sys/stat.h>

using namespace ssd;
using ::testing::HasSubstr;

namespace {

/// The bytes of an .npy file with a hand-written header (format 1.0).
std::vector<uint8_t> rawNpy(const std::string &header,
                            const std::vector<uint8_t> &data) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(header.size() & 0xff);
  out.push_back(header.size() >> 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  ssd::artifact::Expected<NpyArray> array = parseNpy("t.npy", bytes);
  if (array.ok())
    return "no error";
  return array.message();
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

} // namespace

TEST(Npy, FloatRoundTrip) {
  test::TempDir dir;
  std::vector<float> values = {1.0f, -2.5f, 3.25f, 0.0f, 1e-30f, -7.0f};
  ASSERT_EQ(test::errorMessage(writeNpy(dir.file("a.npy"), {2, 3}, values)), "");
  ssd::artifact::Expected<NpyArray> array = readNpy(dir.file("a.npy"));
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_EQ(array->dtype, DType::F32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array->toFloat(), values);
}

TEST(Npy, IntRoundTripAndDataAlignment) {
  test::TempDir dir;
  std::vector<int32_t> values = {0, 5, 64, 65, 150};
  ASSERT_EQ(test::errorMessage(writeNpy(dir.file("i.npy"), {5}, values)), "");
  ssd::artifact::Expected<NpyArray> array = readNpy(dir.file("i.npy"));
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_EQ(array->dtype, DType::I32);
  EXPECT_EQ(array->toInt32(), values);
  // numpy aligns the data to 64 bytes and ends the header with a newline.
  std::vector<uint8_t> bytes = serializeNpy(DType::I32, {5}, {});
  EXPECT_EQ(bytes.size() % 64, 0u);
  EXPECT_EQ(bytes.back(), '\n');
}

TEST(Npy, ScalarAndEmptyShapes) {
  std::vector<uint8_t> scalar = serializeNpy(DType::F32, {}, {0, 0, 128, 63});
  ssd::artifact::Expected<NpyArray> array = parseNpy("s.npy", scalar);
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_TRUE(array->shape.empty());
  EXPECT_EQ(array->toFloat(), std::vector<float>{1.0f});
  std::vector<uint8_t> empty = serializeNpy(DType::F32, {0, 4}, {});
  array = parseNpy("e.npy", empty);
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_EQ(array->numElements(), 0);
}

TEST(Npy, ReadsFloat64AndInt64) {
  double d[2] = {1.5, -0.25};
  std::vector<uint8_t> data(16);
  std::memcpy(data.data(), d, 16);
  ssd::artifact::Expected<NpyArray> array = parseNpy(
      "d.npy",
      rawNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", data));
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_EQ(array->toFloat(), (std::vector<float>{1.5f, -0.25f}));

  int64_t i[2] = {7, -3};
  std::memcpy(data.data(), i, 16);
  array = parseNpy(
      "i.npy",
      rawNpy("{\"shape\": (2,), \"descr\": \"<i8\", \"fortran_order\": False}", data));
  ASSERT_TRUE(array.ok()) << array.message();
  EXPECT_TRUE(array->fitsInt32());
  EXPECT_EQ(array->toInt32(), (std::vector<int32_t>{7, -3}));

  i[0] = int64_t(1) << 40;
  std::memcpy(data.data(), i, 16);
  array = parseNpy(
      "i.npy",
      rawNpy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,)}", data));
  ASSERT_TRUE(array.ok());
  EXPECT_FALSE(array->fitsInt32());
}

TEST(Npy, BadMagic) {
  std::vector<uint8_t> bytes = serializeNpy(DType::F32, {1}, {0, 0, 0, 0});
  bytes[1] = 'X';
  EXPECT_THAT(parseError(bytes), HasSubstr("t.npy: bad magic"));
  EXPECT_THAT(parseError({}), HasSubstr("t.npy: bad magic"));
}

TEST(Npy, UnsupportedDtypes) {
  std::vector<uint8_t> two(2);
  EXPECT_THAT(
      parseError(rawNpy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,)}", two)),
      HasSubstr("t.npy: unsupported dtype '<f2'"));
  std::vector<uint8_t> four(4);
  EXPECT_THAT(
      parseError(rawNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", four)),
      HasSubstr("t.npy: big-endian dtype '>f4'"));
  EXPECT_THAT(
      parseError(rawNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}", four)),
      HasSubstr("unsupported dtype '|b1'"));
}

TEST(Npy, FortranOrder) {
  std::vector<uint8_t> data(16);
  EXPECT_THAT(
      parseError(rawNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", data)),
      HasSubstr("t.npy: fortran_order arrays are not supported"));
}

TEST(Npy, TruncatedAndTrailingData) {
  std::vector<uint8_t> bytes =
      serializeNpy(DType::F32, {2, 2}, std::vector<uint8_t>(16));
  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 3);
  EXPECT_THAT(parseError(truncated),
              HasSubstr("t.npy: truncated data: shape (2, 2) <f4 needs 16 bytes, file has 13"));
  bytes.push_back(0);
  EXPECT_THAT(parseError(bytes), HasSubstr("t.npy: 1 bytes of trailing data"));
  std::vector<uint8_t> header(bytes.begin(), bytes.begin() + 20);
  EXPECT_THAT(parseError(header), HasSubstr("t.npy: truncated header"));
}

TEST(Npy, MalformedHeaders) {
  std::vector<uint8_t> four(4);
  EXPECT_THAT(parseError(rawNpy("{'descr': '<f4', 'shape': (1,)}", four)),
              HasSubstr("missing key 'fortran_order'"));
  EXPECT_THAT(parseError(rawNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1,), 'extra': 1}",
                                four)),
              HasSubstr("unknown key 'extra'"));
  EXPECT_THAT(parseError(rawNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (-1,)}",
                                four)),
              HasSubstr("expected a non-negative dimension"));
  EXPECT_THAT(parseError(rawNpy("['descr']", four)), HasSubstr("expected '{'"));
  EXPECT_THAT(parseError(rawNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (99999999999, 99999999999, 99999999999)}",
                                four)),
              HasSubstr("too large"));
  EXPECT_THAT(parseError(rawNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1,), 'descr': '<f8'}",
                                four)),
              HasSubstr("duplicate key 'descr'"));
  std::vector<uint8_t> version = serializeNpy(DType::F32, {1}, four);
  version[6] = 9;
  EXPECT_THAT(parseError(version), HasSubstr("unsupported .npy format version 9.0"));
}

TEST(Npy, MissingFileNamesThePath) {
  ssd::artifact::Expected<NpyArray> array = readNpy("/nonexistent/dir/q.npy");
  ASSERT_FALSE(array.ok());
  EXPECT_THAT(array.message(),
              HasSubstr("/nonexistent/dir/q.npy: cannot read"));
}

TEST(Npy, RefusesFilesThatAreNotRegular) {
  // /dev/zero would be read until memory runs out; a FIFO would block.
  ssd::artifact::Expected<NpyArray> device = readNpy("/dev/zero");
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.message(), HasSubstr("/dev/zero: cannot read: not a regular file"));
  test::TempDir dir;
  std::string fifo = dir.file("pipe.npy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ssd::artifact::Expected<NpyArray> pipe = readNpy(fifo);
  ASSERT_FALSE(pipe.ok());
  EXPECT_THAT(pipe.message(), HasSubstr("not a regular file"));
}

TEST(Npy, WritesSeveralFilesAllOrNone) {
  test::TempDir dir;
  std::vector<float> values = {1, 2, 3, 4};
  std::vector<NpyOutput> ok = {{dir.file("a.npy"), {4}, &values},
                               {dir.file("b.npy"), {2, 2}, &values}};
  ASSERT_EQ(test::errorMessage(writeNpyFiles(ok)), "");
  EXPECT_TRUE(readNpy(dir.file("b.npy")).ok());
  // The second file cannot be written: the first is not left behind either,
  // nor any temporary.
  std::vector<NpyOutput> broken = {{dir.file("c.npy"), {4}, &values},
                                   {dir.file("missing/d.npy"), {4}, &values}};
  EXPECT_THAT(test::errorMessage(writeNpyFiles(broken)),
              HasSubstr("missing/d.npy"));
  EXPECT_FALSE(readNpy(dir.file("c.npy")).ok());
  EXPECT_FALSE(readNpy(dir.file("c.npy.tmp")).ok());
}

TEST(Npy, WritesFileThatReadsBackByteForByte) {
  test::TempDir dir;
  std::vector<uint8_t> bytes =
      serializeNpy(DType::F32, {3}, std::vector<uint8_t>(12, 1));
  writeBytes(dir.file("b.npy"), bytes);
  ssd::artifact::Expected<NpyArray> array = readNpy(dir.file("b.npy"));
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(array->bytes, std::vector<uint8_t>(12, 1));
}
