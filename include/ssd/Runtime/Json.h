//===- Json.h - A small JSON reader for artifact manifests -------*- C++
//-*-===//
//
// The runtime must build without any dependency beyond the C++ library, so it
// reads manifests with this parser. It accepts RFC 8259 JSON, keeps object
// keys in document order, rejects duplicate keys and reports errors with a
// line and column.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_JSON_H
#define SSD_RUNTIME_JSON_H

#include "ssd/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ssd::rt {

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

  /// The member named `key` of an object, or null when absent.
  const JsonValue *find(std::string_view key) const;

  /// "an object", "a string", ...: for messages saying what was found.
  std::string describe() const;
  /// Compact JSON text of this value.
  std::string serialize() const;
};

/// Parses a whole JSON document; trailing non-space text is an error.
Expected<JsonValue> parseJson(std::string_view text);

} // namespace ssd::rt

#endif // SSD_RUNTIME_JSON_H
