//===- JsonTest.cpp - The manifest JSON reader ----------------------------===//

#include "ssd/Runtime/Json.h"

#include <gtest/gtest.h>

using namespace ssd::rt;

namespace {

std::string errorOf(const std::string &text) {
  Expected<JsonValue> v = parseJson(text);
  EXPECT_FALSE(v.ok()) << "parsed: " << text;
  return v.ok() ? "" : v.message();
}

TEST(Json, ParsesEveryKind) {
  Expected<JsonValue> v = parseJson(
      R"( {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}} )");
  ASSERT_TRUE(v.ok()) << v.message();
  const JsonValue *a = v->find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->array.size(), 7u);
  EXPECT_TRUE(a->array[0].isInteger);
  EXPECT_EQ(a->array[0].integer, 1);
  EXPECT_EQ(a->array[1].integer, -2);
  EXPECT_FALSE(a->array[2].isInteger);
  EXPECT_DOUBLE_EQ(a->array[2].number, 3.5);
  EXPECT_FALSE(a->array[3].isInteger);
  EXPECT_DOUBLE_EQ(a->array[3].number, 1000.0);
  EXPECT_TRUE(a->array[4].isBool() && a->array[4].boolean);
  EXPECT_TRUE(a->array[5].isBool() && !a->array[5].boolean);
  EXPECT_TRUE(a->array[6].isNull());
  EXPECT_EQ(v->find("b")->find("c")->string, "d");
  EXPECT_EQ(v->find("missing"), nullptr);
}

TEST(Json, KeepsKeyOrder) {
  Expected<JsonValue> v = parseJson(R"({"z": 1, "a": 2, "m": 3})");
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->object.size(), 3u);
  EXPECT_EQ(v->object[0].first, "z");
  EXPECT_EQ(v->object[1].first, "a");
  EXPECT_EQ(v->object[2].first, "m");
  EXPECT_EQ(v->serialize(), R"({"z":1,"a":2,"m":3})");
}

TEST(Json, DecodesEscapes) {
  Expected<JsonValue> v = parseJson(R"("a\"b\\c\/\n\t\u00e9\ud83d\ude00")");
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(v->string, "a\"b\\c/\n\t\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(Json, LargeIntegersStayExactOrBecomeDoubles) {
  Expected<JsonValue> v =
      parseJson("[9223372036854775807, 9223372036854775808]");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->array[0].isInteger);
  EXPECT_EQ(v->array[0].integer, INT64_MAX);
  EXPECT_FALSE(v->array[1].isInteger);
}

TEST(Json, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(errorOf("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "line 3, column 7: expected ':' after key \"b\"");
  EXPECT_EQ(errorOf(R"({"a": 1, "a": 2})"),
            "line 1, column 10: duplicate key \"a\"");
  EXPECT_EQ(errorOf("[1, 2"), "line 1, column 6: expected ',' or ']' in array");
  EXPECT_EQ(errorOf("[1,]"), "line 1, column 4: unexpected character ']'");
  EXPECT_EQ(errorOf(R"({"a": 1,})"), "line 1, column 9: expected a string key");
  EXPECT_EQ(errorOf("\"abc"), "line 1, column 5: unterminated string");
  EXPECT_EQ(errorOf(R"("\x")"), "line 1, column 3: invalid escape '\\x'");
  EXPECT_EQ(errorOf(R"("\ud800")"),
            "line 1, column 8: unpaired UTF-16 surrogate in \\u escape");
  EXPECT_EQ(errorOf("01"),
            "line 1, column 2: unexpected text after the JSON value");
  EXPECT_EQ(errorOf("-"), "line 1, column 2: invalid number");
  EXPECT_EQ(errorOf("1."),
            "line 1, column 3: invalid number: expected digits after '.'");
  EXPECT_EQ(errorOf("tru"), "line 1, column 1: unexpected character 't'");
  EXPECT_EQ(errorOf(""),
            "line 1, column 1: unexpected end of input, expected a value");
  EXPECT_EQ(errorOf("{} {}"),
            "line 1, column 4: unexpected text after the JSON value");
  EXPECT_EQ(errorOf("\"a\tb\""),
            "line 1, column 3: control character in string");
}

TEST(Json, RejectsDeepNesting) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_NE(errorOf(deep).find("nesting deeper than 64"), std::string::npos);
}

} // namespace
