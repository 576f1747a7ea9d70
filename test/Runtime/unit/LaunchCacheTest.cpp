//===- LaunchCacheTest.cpp - Keys and eviction of prepared launches -------===//

#include "LaunchCache.h"

#include <gtest/gtest.h>

using namespace ssd::rt;

namespace {

ArgumentMap twoTensors() {
  ArgumentMap args;
  args["x"] = TensorArg{
      reinterpret_cast<void *>(0x1000), DType::BF16, {2, 128, 8, 64}, {}, 0};
  args["y"] = TensorArg{
      reinterpret_cast<void *>(0x9000), DType::BF16, {2, 128, 8, 64}, {}, 0};
  return args;
}

const void *kContext = reinterpret_cast<const void *>(0x10);
constexpr uint64_t kContextId = 1;

TEST(LaunchKey, EqualForEqualArguments) {
  EXPECT_EQ(LaunchKey::of(kContext, kContextId, 0, twoTensors()),
            LaunchKey::of(kContext, kContextId, 0, twoTensors()));
}

TEST(LaunchKey, EveryPartOfAnArgumentCounts) {
  LaunchKey base = LaunchKey::of(kContext, kContextId, 0, twoTensors());
  auto differs = [&](auto change) {
    ArgumentMap args = twoTensors();
    change(args);
    return LaunchKey::of(kContext, kContextId, 0, args) != base;
  };
  EXPECT_TRUE(differs([](ArgumentMap &a) {
    a["x"].devicePtr = reinterpret_cast<void *>(0x2000);
  }));
  EXPECT_TRUE(differs([](ArgumentMap &a) { a["x"].dtype = DType::F16; }));
  EXPECT_TRUE(differs([](ArgumentMap &a) { a["x"].shape[1] = 256; }));
  EXPECT_TRUE(differs([](ArgumentMap &a) {
    a["x"].strides = {65536, 512, 64, 1};
  }));
  EXPECT_TRUE(differs([](ArgumentMap &a) { a["x"].device = 1; }));
  // The same tensor under another name is another argument set.
  EXPECT_TRUE(differs([](ArgumentMap &a) {
    a["z"] = a["y"];
    a.erase("y");
  }));
  EXPECT_TRUE(differs([](ArgumentMap &a) { a.erase("y"); }));
  // A dimension moved from the shape into the strides is not the same key.
  EXPECT_TRUE(differs([](ArgumentMap &a) {
    a["x"].shape = {2, 128, 8};
    a["x"].strides = {64, 1, 1};
  }));
}

TEST(LaunchKey, ContextAndDeviceCount) {
  LaunchKey base = LaunchKey::of(kContext, kContextId, 0, twoTensors());
  EXPECT_NE(LaunchKey::of(reinterpret_cast<const void *>(0x20), kContextId, 0,
                          twoTensors()),
            base);
  EXPECT_NE(LaunchKey::of(kContext, kContextId, 1, twoTensors()), base);
  // The same handle, another context (one created where a destroyed one was).
  EXPECT_NE(LaunchKey::of(kContext, 7, 0, twoTensors()), base);
  EXPECT_EQ(LaunchKey::of(kContext, 7, 0, twoTensors()),
            LaunchKey::of(kContext, 7, 0, twoTensors()));
}

LaunchKey keyWithLength(int64_t length) {
  ArgumentMap args = twoTensors();
  args["x"].shape[1] = length;
  return LaunchKey::of(kContext, kContextId, 0, args);
}

TEST(LaunchCache, FindsWhatWasInserted) {
  LaunchCache<int> cache(4);
  EXPECT_EQ(cache.find(keyWithLength(1)), nullptr);
  cache.insert(keyWithLength(1), std::make_shared<const int>(11));
  cache.insert(keyWithLength(2), std::make_shared<const int>(22));
  ASSERT_NE(cache.find(keyWithLength(1)), nullptr);
  EXPECT_EQ(*cache.find(keyWithLength(1)), 11);
  EXPECT_EQ(*cache.find(keyWithLength(2)), 22);
  EXPECT_EQ(cache.find(keyWithLength(3)), nullptr);
}

TEST(LaunchCache, InsertReplacesTheSameKey) {
  LaunchCache<int> cache(4);
  cache.insert(keyWithLength(1), std::make_shared<const int>(11));
  std::shared_ptr<const int> held = cache.find(keyWithLength(1));
  cache.insert(keyWithLength(1), std::make_shared<const int>(12));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(*cache.find(keyWithLength(1)), 12);
  EXPECT_EQ(*held, 11); // A launch holding the old value keeps it.
}

TEST(LaunchCache, EvictsTheLeastRecentlyUsed) {
  LaunchCache<int> cache(3);
  for (int i = 1; i <= 3; ++i)
    cache.insert(keyWithLength(i), std::make_shared<const int>(i));
  ASSERT_NE(cache.find(keyWithLength(1)), nullptr); // 1 is now the newest.
  cache.insert(keyWithLength(4), std::make_shared<const int>(4));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find(keyWithLength(2)), nullptr);
  EXPECT_NE(cache.find(keyWithLength(1)), nullptr);
  EXPECT_NE(cache.find(keyWithLength(3)), nullptr);
  EXPECT_NE(cache.find(keyWithLength(4)), nullptr);
}

} // namespace
