//===- KernelMemoryTest.cpp - the compiled CPU kernels' heap --------------===//
#include "ssd/CpuJit/KernelMemory.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

using namespace ssd;
namespace km = ssd::kernel_memory;

namespace {

constexpr size_t kLarge = size_t(1) << 20;

bool alignedTo(void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

struct KernelMemoryTest : ::testing::Test {
  void SetUp() override {
    km::setCacheLimit(0); // start from an empty cache
    km::setCacheLimit(uint64_t(64) << 20);
  }
};

TEST_F(KernelMemoryTest, LargeBlocksAreReusedAcrossCalls) {
  void *first = km::allocate(kLarge);
  ASSERT_NE(first, nullptr);
  std::memset(first, 0xab, kLarge);
  km::release(first);
  km::Stats before = km::stats();
  EXPECT_GE(before.cachedBytes, kLarge);
  // A slightly larger size of the same size class (an eighth of 2 MiB).
  void *again = km::allocate(kLarge + 1000);
  km::Stats after = km::stats();
  EXPECT_EQ(again, first);
  EXPECT_EQ(after.reused, before.reused + 1);
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_LT(after.cachedBytes, before.cachedBytes);
  km::release(again);
}

TEST_F(KernelMemoryTest, SmallBlocksAreNotCached) {
  km::Stats before = km::stats();
  void *small = km::allocate(100);
  ASSERT_NE(small, nullptr);
  km::release(small);
  km::Stats after = km::stats();
  EXPECT_EQ(after.cachedBytes, before.cachedBytes);
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_EQ(after.reused, before.reused);
}

TEST_F(KernelMemoryTest, CapIsKept) {
  km::setCacheLimit(kLarge + kLarge / 2);
  void *a = km::allocate(kLarge);
  void *b = km::allocate(kLarge);
  km::release(a);
  km::release(b); // beyond the cap: back to libc
  EXPECT_LE(km::stats().cachedBytes, kLarge + kLarge / 2);
  km::setCacheLimit(0);
  EXPECT_EQ(km::stats().cachedBytes, 0u);
  void *c = km::allocate(kLarge);
  km::release(c);
  EXPECT_EQ(km::stats().cachedBytes, 0u);
}

TEST_F(KernelMemoryTest, Alignment) {
  for (size_t alignment : {16, 64, 128, 4096}) {
    for (size_t size : {size_t(8), size_t(100000), kLarge}) {
      void *p = km::allocateAligned(alignment, size);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(alignedTo(p, alignment)) << alignment << " " << size;
      std::memset(p, 1, size);
      km::release(p);
    }
  }
  void *small = km::allocate(24);
  EXPECT_TRUE(alignedTo(small, 16));
  km::release(small);
  void *p = nullptr;
  EXPECT_EQ(km::allocateAlignedPosix(&p, 256, kLarge), 0);
  EXPECT_TRUE(alignedTo(p, 256));
  km::release(p);
  EXPECT_EQ(km::allocateAlignedPosix(&p, 24, 8), EINVAL);
  EXPECT_EQ(km::allocateAligned(48, 8), nullptr);
}

TEST_F(KernelMemoryTest, ZeroedAndResized) {
  // A reused block is not zero; calloc's must be.
  void *dirty = km::allocate(kLarge);
  std::memset(dirty, 0xff, kLarge);
  km::release(dirty);
  auto *zeroed = static_cast<unsigned char *>(km::allocateZeroed(kLarge, 1));
  ASSERT_NE(zeroed, nullptr);
  for (size_t i = 0; i < kLarge; i += 4093)
    ASSERT_EQ(zeroed[i], 0) << i;
  zeroed[0] = 7;
  zeroed[99] = 9;
  auto *grown = static_cast<unsigned char *>(km::reallocate(zeroed, 4 * kLarge));
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(grown[0], 7);
  EXPECT_EQ(grown[99], 9);
  auto *shrunk = static_cast<unsigned char *>(km::reallocate(grown, 100));
  EXPECT_EQ(shrunk[99], 9);
  km::release(shrunk);
  EXPECT_EQ(km::allocateZeroed(SIZE_MAX / 2, 4), nullptr);
}

TEST_F(KernelMemoryTest, ThreadsShareTheCache) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) {
        void *p = km::allocate(kLarge + (i % 3) * 70000);
        static_cast<char *>(p)[0] = 1;
        km::release(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  km::Stats s = km::stats();
  EXPECT_GT(s.reused, 0u);
  EXPECT_LE(s.cachedBytes, uint64_t(64) << 20);
}

TEST_F(KernelMemoryTest, SymbolsNameTheHeap) {
  std::vector<std::string> names;
  for (auto [name, address] : km::symbols()) {
    names.push_back(name);
    EXPECT_NE(address, nullptr) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"malloc", "calloc",
                                             "aligned_alloc", "posix_memalign",
                                             "realloc", "free"}));
}

TEST(KernelMemoryDeathTest, ForeignAndDoubleFreesAbortWithAMessage) {
  EXPECT_DEATH(
      {
        void *p = km::allocate(kLarge);
        km::release(p);
        km::release(p);
      },
      "not a live block of its heap");
}

} // namespace
