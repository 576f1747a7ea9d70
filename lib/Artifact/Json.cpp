//===- Json.cpp - A small JSON reader -------------------------------------===//

#include "ssd/Artifact/Json.h"

#include <cerrno>
#include <cstdlib>

using namespace ssd::artifact;

JsonValue JsonValue::makeBool(bool value) {
  JsonValue v;
  v.kind = Kind::Bool;
  v.boolean = value;
  return v;
}

JsonValue JsonValue::makeInteger(int64_t value) {
  JsonValue v;
  v.kind = Kind::Number;
  v.isInteger = true;
  v.integer = value;
  v.number = static_cast<double>(value);
  return v;
}

JsonValue JsonValue::makeNumber(double value) {
  JsonValue v;
  v.kind = Kind::Number;
  v.number = value;
  return v;
}

JsonValue JsonValue::makeString(std::string value) {
  JsonValue v;
  v.kind = Kind::String;
  v.string = std::move(value);
  return v;
}

JsonValue JsonValue::makeArray(std::vector<JsonValue> elements) {
  JsonValue v;
  v.kind = Kind::Array;
  v.array = std::move(elements);
  return v;
}

JsonValue JsonValue::makeObject() {
  JsonValue v;
  v.kind = Kind::Object;
  return v;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const Member &m : object)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

void JsonValue::add(std::string key, JsonValue value) {
  object.emplace_back(std::move(key), std::move(value));
}

namespace {
/// Recursive-descent parser over the document text. The first error stops
/// parsing; its message carries the line and column where it was found.
class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  Expected<JsonValue> parseDocument() {
    JsonValue v;
    skipSpace();
    if (!parseValue(v, 0))
      return Status::error(error);
    skipSpace();
    if (pos != text.size()) {
      fail("unexpected text after the JSON value");
      return Status::error(error);
    }
    return v;
  }

private:
  // Deep enough for any manifest, shallow enough to keep the stack safe.
  static constexpr int kMaxDepth = 64;

  std::string_view text;
  size_t pos = 0;
  std::string error;

  bool fail(const std::string &what) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error = "line " + std::to_string(line) + ", column " +
            std::to_string(column) + ": " + what;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consumeWord(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  bool parseValue(JsonValue &v, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos >= text.size())
      return fail("unexpected end of input, expected a value");
    char c = text[pos];
    if (c == '{')
      return parseObject(v, depth);
    if (c == '[')
      return parseArray(v, depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::String;
      return parseString(v.string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(v);
    if (consumeWord("true")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = true;
      return true;
    }
    if (consumeWord("false")) {
      v.kind = JsonValue::Kind::Bool;
      return true;
    }
    if (consumeWord("null"))
      return true;
    return fail(std::string("unexpected character '") + c + "'");
  }

  bool parseObject(JsonValue &v, int depth) {
    v.kind = JsonValue::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      std::string key;
      size_t keyPos = pos;
      if (!parseString(key))
        return false;
      if (v.find(key)) {
        pos = keyPos;
        return fail("duplicate key \"" + key + "\"");
      }
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after key \"" + key + "\"");
      ++pos;
      skipSpace();
      JsonValue member;
      if (!parseValue(member, depth + 1))
        return false;
      v.object.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}' in object");
    }
  }

  bool parseArray(JsonValue &v, int depth) {
    v.kind = JsonValue::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      JsonValue element;
      if (!parseValue(element, depth + 1))
        return false;
      v.array.push_back(std::move(element));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']' in array");
    }
  }

  bool parseHex4(unsigned &out) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return fail("invalid hex digit in \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      if (pos >= text.size())
        return fail("unterminated string");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp;
        if (!parseHex4(cp))
          return false;
        // A high surrogate must pair with a following low surrogate.
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned lo;
          if (text.substr(pos, 2) != "\\u")
            return fail("unpaired UTF-16 surrogate in \\u escape");
          pos += 2;
          if (!parseHex4(lo))
            return false;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return fail("unpaired UTF-16 surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("unpaired UTF-16 surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos;
        return fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(JsonValue &v) {
    v.kind = JsonValue::Kind::Number;
    size_t start = pos;
    auto digits = [&] {
      size_t from = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - from;
    };
    if (text[pos] == '-')
      ++pos;
    if (pos < text.size() && text[pos] == '0') {
      ++pos;
    } else if (digits() == 0) {
      return fail("invalid number");
    }
    bool integral = true;
    if (pos < text.size() && text[pos] == '.') {
      integral = false;
      ++pos;
      if (digits() == 0)
        return fail("invalid number: expected digits after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      integral = false;
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("invalid number: expected digits in the exponent");
    }
    std::string lexeme(text.substr(start, pos - start));
    v.number = std::strtod(lexeme.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long i = std::strtoll(lexeme.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        v.isInteger = true;
        v.integer = i;
      }
    }
    return true;
  }
};
} // namespace

Expected<JsonValue> ssd::artifact::parseJson(std::string_view text) {
  return Parser(text).parseDocument();
}
