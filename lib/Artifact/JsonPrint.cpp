//===- JsonPrint.cpp - JSON text of a JsonValue ---------------------------===//
//
// Two layouts: compact (serialize, for messages and values embedded in
// others) and for people (printJson, the manifest's layout).
//
//===----------------------------------------------------------------------===//

#include "ssd/Artifact/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace ssd::artifact;

std::string JsonValue::describe() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return boolean ? "true" : "false";
  case Kind::Number:
    return "the number " + serialize();
  case Kind::String:
    return "the string \"" + string + "\"";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

static void appendQuoted(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

std::string JsonValue::serialize() const {
  std::string out;
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return boolean ? "true" : "false";
  case Kind::Number: {
    if (isInteger)
      return std::to_string(integer);
    // JSON has no infinities or NaN.
    if (!std::isfinite(number))
      return "null";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", number);
    return buf;
  }
  case Kind::String:
    appendQuoted(out, string);
    return out;
  case Kind::Array:
    out += '[';
    for (size_t i = 0; i < array.size(); ++i) {
      if (i)
        out += ',';
      out += array[i].serialize();
    }
    out += ']';
    return out;
  case Kind::Object:
    out += '{';
    for (size_t i = 0; i < object.size(); ++i) {
      if (i)
        out += ',';
      appendQuoted(out, object[i].first);
      out += ':';
      out += object[i].second.serialize();
    }
    out += '}';
    return out;
  }
  return out;
}

static void printPretty(const JsonValue &v, int indent, std::string &out) {
  std::string pad(indent + 2, ' ');
  bool allScalars =
      std::all_of(v.array.begin(), v.array.end(), [](const JsonValue &e) {
        return !e.isArray() && !e.isObject();
      });
  if (v.isArray() && allScalars) {
    out += '[';
    for (size_t i = 0; i < v.array.size(); ++i)
      out += (i ? ", " : "") + v.array[i].serialize();
    out += ']';
    return;
  }
  if (v.isArray() && !v.array.empty()) {
    out += "[\n";
    for (size_t i = 0; i < v.array.size(); ++i) {
      out += pad;
      printPretty(v.array[i], indent + 2, out);
      out += i + 1 < v.array.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "]";
    return;
  }
  if (v.isObject() && !v.object.empty()) {
    out += "{\n";
    for (size_t i = 0; i < v.object.size(); ++i) {
      out += pad;
      appendQuoted(out, v.object[i].first);
      out += ": ";
      printPretty(v.object[i].second, indent + 2, out);
      out += i + 1 < v.object.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + "}";
    return;
  }
  out += v.serialize();
}

std::string ssd::artifact::printJson(const JsonValue &value) {
  std::string out;
  printPretty(value, 0, out);
  return out;
}
