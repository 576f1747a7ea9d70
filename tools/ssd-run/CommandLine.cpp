//===- CommandLine.cpp - flag parsing of ssd-run and ssd-make-case --------===//
//
// The only file of the tools that includes cxxopts.hpp, and the only one
// built with exceptions: every cxxopts exception is caught here.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include <cxxopts.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>

using namespace ssd;
using namespace ssd::cli;
using ssd::rt::Expected;
using ssd::rt::Status;

std::string cli::spelling(const std::string &name) {
  return (name.size() == 1 ? "-" : "--") + name;
}

std::string ParsedFlags::value(const std::string &name,
                               const std::string &fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback
                                                  : it->second.back();
}

std::vector<std::string> ParsedFlags::list(const std::string &name) const {
  auto it = values.find(name);
  return it == values.end() ? std::vector<std::string>() : it->second;
}

bool ParsedFlags::on(const std::string &name) const {
  std::string v = value(name, "false");
  return v == "true" || v == "1";
}

namespace {
/// The flags of a tool with help added.
std::vector<Flag> withHelp(const std::vector<Flag> &flags,
                           const Syntax &syntax) {
  std::vector<Flag> all = flags;
  all.push_back({"help", Flag::Switch});
  if (syntax.helpLetter)
    all.push_back({std::string(1, syntax.helpLetter), Flag::Switch});
  return all;
}

const Flag *findFlag(const std::vector<Flag> &flags, const std::string &name) {
  for (const Flag &f : flags)
    if (f.name == name)
      return &f;
  return nullptr;
}

/// Rewrites llvm::cl's spellings of known flags into cxxopts' ones: -name
/// and -name=V into --name and --name=V, --o into -o, -o=V and --o=V into
/// -o V. The value after a flag that takes one is left as it is.
std::vector<std::string> normalize(const std::vector<Flag> &flags,
                                   const std::vector<std::string> &args) {
  std::vector<std::string> out;
  bool valueNext = false, rest = false;
  for (const std::string &arg : args) {
    if (rest || valueNext || arg.size() < 2 || arg[0] != '-') {
      out.push_back(arg);
      valueNext = false;
      continue;
    }
    if (arg == "--") {
      out.push_back(arg);
      rest = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    const Flag *flag = findFlag(flags, body.substr(0, eq));
    if (!flag) {
      out.push_back(arg);
      continue;
    }
    bool takesValue = flag->kind != Flag::Switch;
    if (flag->name.size() == 1) {
      out.push_back("-" + flag->name);
      if (eq != std::string::npos)
        out.push_back(body.substr(eq + 1));
      else
        valueNext = takesValue;
    } else {
      out.push_back("--" + body);
      valueNext = takesValue && eq == std::string::npos;
    }
  }
  return out;
}

/// The argument a leftover of cxxopts comes from: cxxopts splits an unknown
/// -abc into -a, -b, -c; the message names -abc.
std::string originalArgument(const std::string &leftover,
                             const std::vector<std::string> &args) {
  if (leftover.size() != 2 || leftover[0] != '-' || leftover[1] == '-')
    return leftover;
  for (const std::string &arg : args)
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' &&
        arg.find(leftover[1]) != std::string::npos)
      return arg;
  return leftover;
}

Status parseOrThrow(const std::vector<Flag> &flags,
                    const std::vector<std::string> &args,
                    std::map<std::string, std::vector<std::string>> &values) {
  cxxopts::Options options("ssd");
  // Unknown flags and stray arguments come back in unmatched(), in order:
  // reported below with the argument as given.
  options.allow_unrecognised_options();
  auto add = options.add_options();
  for (const Flag &f : flags) {
    // Values stay strings: the tools convert them, with the flag named.
    switch (f.kind) {
    case Flag::Switch:
      add(f.name, "", cxxopts::value<std::string>()->implicit_value("true"));
      break;
    case Flag::Value:
      add(f.name, "", cxxopts::value<std::string>());
      break;
    case Flag::List:
      add(f.name, "", cxxopts::value<std::vector<std::string>>());
      break;
    }
  }
  std::vector<const char *> argv{"ssd"};
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());
  cxxopts::ParseResult result =
      options.parse(static_cast<int>(argv.size()), argv.data());
  if (!result.unmatched().empty()) {
    const std::string &first = result.unmatched().front();
    bool looksLikeFlag = first.size() > 1 && first[0] == '-';
    return Status::error(
        std::string(looksLikeFlag ? "unknown argument '"
                                  : "unexpected argument '") +
        (looksLikeFlag ? originalArgument(first, args) : first) + "'");
  }
  for (const Flag &f : flags) {
    if (!result.count(f.name))
      continue;
    if (f.kind == Flag::List) {
      values[f.name] = result[f.name].as<std::vector<std::string>>();
      continue;
    }
    std::string v = result[f.name].as<std::string>();
    if (f.kind == Flag::Switch && v != "true" && v != "false" && v != "1" &&
        v != "0")
      return Status::error(spelling(f.name) + ": '" + v +
                           "' is not true or false");
    values[f.name] = {v};
  }
  return Status::success();
}
} // namespace

Expected<ParsedFlags> cli::parse(const std::vector<Flag> &flags,
                                 const std::vector<std::string> &args,
                                 const Syntax &syntax) {
  std::vector<Flag> all = withHelp(flags, syntax);
  std::vector<std::string> given =
      syntax.singleDashLong ? normalize(all, args) : args;
  ParsedFlags parsed;
  try {
    if (Status s = parseOrThrow(all, given, parsed.values); !s.ok())
      return s;
  } catch (const cxxopts::exceptions::missing_argument &) {
    // Only the last argument can miss its value.
    return Status::error(given.back() + " needs a value");
  } catch (const cxxopts::exceptions::exception &e) {
    return Status::error(std::string("bad arguments: ") + e.what());
  } catch (const std::exception &e) {
    return Status::error(std::string("cannot read the arguments: ") + e.what());
  }
  // -h and --help are one switch.
  if (syntax.helpLetter &&
      parsed.values.count(std::string(1, syntax.helpLetter)))
    parsed.values["help"] = parsed.values[std::string(1, syntax.helpLetter)];
  return parsed;
}

Expected<int64_t> cli::toInteger(const std::string &flag,
                                 const std::string &text, int64_t lo,
                                 int64_t hi) {
  bool bounded = lo != INT64_MIN || hi != INT64_MAX;
  auto bad = [&](const char *what) {
    return Status::error(flag + ": '" + text + "' " +
                         (bounded
                              ? "is not an integer in [" + std::to_string(lo) +
                                    ", " + std::to_string(hi) + "]"
                              : std::string(what)));
  };
  size_t digits = !text.empty() && (text[0] == '+' || text[0] == '-');
  if (text.size() <= digits ||
      text.find_first_not_of("0123456789", digits) != std::string::npos)
    return bad("is not an integer");
  errno = 0;
  long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return bad("is out of the range of a 64-bit integer");
  if (v < lo || v > hi)
    return bad("is out of range");
  return int64_t(v);
}

Expected<uint64_t> cli::toUnsigned(const std::string &flag,
                                   const std::string &text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return Status::error(flag + ": '" + text + "' is not an unsigned integer");
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return Status::error(flag + ": '" + text +
                         "' is out of the range of a 64-bit integer");
  return uint64_t(v);
}

Expected<double> cli::toDouble(const std::string &flag,
                               const std::string &text) {
  char *end = nullptr;
  errno = 0;
  double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                 ? 0.0
                 : std::strtod(text.c_str(), &end);
  if (!end || *end)
    return Status::error(flag + ": '" + text + "' is not a number");
  if (errno == ERANGE && std::isinf(v))
    return Status::error(flag + ": '" + text +
                         "' is out of the range of a double");
  return v;
}
