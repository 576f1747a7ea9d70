//===- Json.h - A small JSON reader and printer -----------------*- C++ -*-===//
//
// The runtime must build without any dependency beyond the C++ library, so
// manifests and case files are read and written with this code. The parser
// accepts RFC 8259 JSON, keeps object keys in document order, rejects
// duplicate keys and reports errors with a line and column.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_ARTIFACT_JSON_H
#define SSD_ARTIFACT_JSON_H

#include "ssd/Artifact/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ssd::artifact {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  Kind kind = Kind::Null;
  bool boolean = false;
  /// Numbers keep their integer value exactly when they are written without
  /// fraction or exponent and fit in int64_t.
  bool isInteger = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<Member> object;

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  static JsonValue makeBool(bool value);
  static JsonValue makeInteger(int64_t value);
  /// A number with a fraction or exponent; non-finite values print as null.
  static JsonValue makeNumber(double value);
  static JsonValue makeString(std::string value);
  static JsonValue makeArray(std::vector<JsonValue> elements = {});
  static JsonValue makeObject();

  /// The member named `key` of an object, or null when absent.
  const JsonValue *find(std::string_view key) const;
  /// Appends a member to an object; keys stay in the order they are added.
  void add(std::string key, JsonValue value);

  /// "an object", "a string", ...: for messages saying what was found.
  std::string describe() const;
  /// Compact JSON text of this value.
  std::string serialize() const;
};

/// Parses a whole JSON document; trailing non-space text is an error.
Expected<JsonValue> parseJson(std::string_view text);

/// `value` laid out for people: two-space indentation, one member or element
/// per line, except arrays of scalars (shapes, grids), which stay on one line
/// as `[a, b, c]`. No trailing newline.
std::string printJson(const JsonValue &value);

} // namespace ssd::artifact

#endif // SSD_ARTIFACT_JSON_H
