//===- CommandLine.h - ssd-run and ssd-make-case flags ----------*- C++ -*-===//
//
// The two tools read their flags with cxxopts (Debian's libcxxopts-dev, one
// header). cxxopts reports errors by throwing; this wrapper keeps it, and the
// exceptions, inside CommandLine.cpp (the one file built with exceptions: the
// LLVM configuration builds the tools without) and returns the flags as
// strings or an error naming the flag, in the tools' convention (Expected).
// The tools convert and check the values themselves, so that a bad value is
// reported with its flag.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_TOOLS_SSDRUN_COMMANDLINE_H
#define SSD_TOOLS_SSDRUN_COMMANDLINE_H

#include "ssd/Runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ssd::cli {

/// One flag of a tool.
struct Flag {
  enum Kind {
    /// --name or --name=true|false|1|0; no separate value.
    Switch,
    /// --name VALUE or --name=VALUE; given again, the last value counts.
    Value,
    /// --name A,B,C (or several times): the comma-separated items, in order.
    List,
  };
  /// The name without dashes: one letter is a short flag (-o), longer names
  /// are long flags (--chunk-size).
  std::string name;
  Kind kind;
};

/// How a tool spells its flags.
struct Syntax {
  /// llvm::cl's spellings as well: -name for --name, --o for -o, and -o=V.
  bool singleDashLong = false;
  /// The letter that also asks for help (-h), none with '\0'.
  char helpLetter = 'h';
};

/// The flags given on a command line (those not given are absent).
class ParsedFlags {
public:
  bool has(const std::string &name) const { return values.count(name) != 0; }
  /// A Value flag's last value, or `fallback` when the flag is not given.
  std::string value(const std::string &name,
                    const std::string &fallback = "") const;
  /// A List flag's items, empty when the flag is not given.
  std::vector<std::string> list(const std::string &name) const;
  /// A Switch, false when not given; true after --help.
  bool on(const std::string &name) const;

private:
  friend rt::Expected<ParsedFlags> parse(const std::vector<Flag> &,
                                         const std::vector<std::string> &,
                                         const Syntax &);
  std::map<std::string, std::vector<std::string>> values;
};

/// Reads `args` (without the program name) against `flags` (plus help:
/// --help, and -h unless the syntax says otherwise, as the Switch "help").
/// Errors: an unknown flag ("unknown argument '--bogus'"), a flag without
/// its value ("--case needs a value"), an argument that is no flag
/// ("unexpected argument 'x'"), a Switch given a value other than
/// true/false/1/0.
rt::Expected<ParsedFlags> parse(const std::vector<Flag> &flags,
                                const std::vector<std::string> &args,
                                const Syntax &syntax = Syntax());

/// How a flag is written in messages: -o, --chunk-size.
std::string spelling(const std::string &name);

/// Decimal integers in [lo, hi]; the error names the flag and the text.
rt::Expected<int64_t> toInteger(const std::string &flag,
                                const std::string &text, int64_t lo,
                                int64_t hi);
/// A decimal unsigned 64-bit integer.
rt::Expected<uint64_t> toUnsigned(const std::string &flag,
                                  const std::string &text);
/// A floating-point number (strtod's syntax, inf included; not out of the
/// range of double).
rt::Expected<double> toDouble(const std::string &flag, const std::string &text);

} // namespace ssd::cli

#endif // SSD_TOOLS_SSDRUN_COMMANDLINE_H
