//===- ssd-make-case.cpp - write a random case folder ---------------------===//
//
// Writes a case folder in the golden format with deterministic random inputs
// and, unless --no-expected, the expected outputs computed by the
// independent reference recurrence. Tests use it to build cases of any shape
// without shared data or numpy.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include "ssd/Reference/Reference.h"
#include "ssd/Support/Case.h"
#include "ssd/Support/RandomCase.h"

#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace ssd;
using ssd::rt::Expected;
using ssd::rt::Status;

static const char *usage() {
  return R"(usage: ssd-make-case -o DIR [--name NAME] [--batch B] [--seqlen L]
                     [--nheads H] [--headdim P] [--ngroups G] [--dstate N]
                     [--seed S] [--features F,...] [--dt-limit LO,HI]
                     [--seq-idx-cuts T,...] [--cu-seqlens S,...]
                     [--a-range LO,HI] [--dt-range LO,HI] [--no-expected]

Writes a case folder in the golden format with deterministic random inputs
and, unless --no-expected, the expected outputs computed by the independent
reference recurrence.

  -o DIR               the case folder to write
  --name NAME          the case name (default random)
  --batch B            sequences (default 1)
  --seqlen L           tokens per sequence (default 64; 0: a case without tokens)
  --nheads H           heads (default 2)
  --headdim P          channels per head (default 4)
  --ngroups G          groups of B and C (default 1)
  --dstate N           state size (default 8)
  --seed S             seed of the random inputs (default 0)
  --features F,...     optional inputs: D, Dhp, z, dt_bias, softplus,
                       initial_states
  --dt-limit LO,HI     clamp of the processed dt
  --seq-idx-cuts T,... tokens where seq_idx increments
  --cu-seqlens S,...   cu_seqlens (selects varlen; batch 1)
  --a-range LO,HI      range of A (default -4,-0.5)
  --dt-range LO,HI     range of the (softplus'd) dt (default 0.01,0.5)
  --no-expected        do not write y.npy and final_states.npy
  -h, --help           print this text

A flag's value follows it (--seqlen 128) or joins it with '='
(--seqlen=128); the single-dash spellings (-seqlen 128, -o=DIR) are read
too. The lists are comma-separated and add up when a flag is repeated.

Exit status: 0 written, 2 bad flags or sizes, or the case cannot be written.
)";
}

/// The most elements one tensor of a generated case may hold (1 GiB of
/// float32).
static constexpr int64_t kMaxCaseElements = int64_t(1) << 28;

static int fail(const std::string &message) {
  std::cerr << "ssd-make-case: error: " << message << "\n";
  return 2;
}

/// The case options of the command line; errors name the flag.
static Expected<RandomCaseOptions> caseOptions(const cli::ParsedFlags &flags) {
  RandomCaseOptions o;
  for (auto [flag, field] :
       {std::pair{"batch", &o.batch}, std::pair{"seqlen", &o.seqlen},
        std::pair{"nheads", &o.nheads}, std::pair{"headdim", &o.headdim},
        std::pair{"ngroups", &o.ngroups}, std::pair{"dstate", &o.dstate}}) {
    if (!flags.has(flag))
      continue;
    Expected<int64_t> n = cli::toInteger(cli::spelling(flag), flags.value(flag),
                                         INT64_MIN, INT64_MAX);
    if (!n.ok())
      return n.status();
    *field = *n;
  }
  if (flags.has("seed")) {
    Expected<uint64_t> seed = cli::toUnsigned("--seed", flags.value("seed"));
    if (!seed.ok())
      return seed.status();
    o.seed = *seed;
  }
  for (const std::string &feature : flags.list("features")) {
    bool *flag = feature == "D"                ? &o.D
                 : feature == "Dhp"            ? &o.Dhp
                 : feature == "z"              ? &o.z
                 : feature == "dt_bias"        ? &o.dtBias
                 : feature == "softplus"       ? &o.softplus
                 : feature == "initial_states" ? &o.initialStates
                                               : nullptr;
    if (!flag)
      return Status::error("--features: unknown feature '" + feature +
                           "' (expected D, Dhp, z, dt_bias, softplus or "
                           "initial_states)");
    *flag = true;
  }
  for (auto [flag, lo, hi] :
       {std::tuple{"dt-limit", &o.dtLimitLo, &o.dtLimitHi},
        std::tuple{"a-range", &o.aMin, &o.aMax},
        std::tuple{"dt-range", &o.dtMin, &o.dtMax}}) {
    if (!flags.has(flag))
      continue;
    std::vector<std::string> items = flags.list(flag);
    std::string given;
    for (const std::string &item : items)
      given += (given.empty() ? "" : ",") + item;
    if (items.size() != 2)
      return Status::error(cli::spelling(flag) + " needs LO,HI, got '" + given +
                           "'");
    for (auto [text, field] :
         {std::pair{items[0], lo}, std::pair{items[1], hi}}) {
      Expected<double> v = cli::toDouble(cli::spelling(flag), text);
      if (!v.ok())
        return v.status();
      *field = *v;
    }
  }
  for (const std::string &cut : flags.list("seq-idx-cuts")) {
    Expected<int64_t> v =
        cli::toInteger("--seq-idx-cuts", cut, INT64_MIN, INT64_MAX);
    if (!v.ok())
      return v.status();
    o.seqIdxCuts.push_back(*v);
  }
  for (const std::string &length : flags.list("cu-seqlens")) {
    Expected<int64_t> v =
        cli::toInteger("--cu-seqlens", length, INT32_MIN, INT32_MAX);
    if (!v.ok())
      return v.status();
    o.cuSeqlens.push_back(int32_t(*v));
  }
  return o;
}

int main(int argc, char **argv) {
  using cli::Flag;
  cli::Syntax syntax;
  // The flags keep llvm::cl's spellings, which this tool used to read.
  syntax.singleDashLong = true;
  Expected<cli::ParsedFlags> read =
      cli::parse({{"o", Flag::Value},
                  {"name", Flag::Value},
                  {"batch", Flag::Value},
                  {"seqlen", Flag::Value},
                  {"nheads", Flag::Value},
                  {"headdim", Flag::Value},
                  {"ngroups", Flag::Value},
                  {"dstate", Flag::Value},
                  {"seed", Flag::Value},
                  {"features", Flag::List},
                  {"dt-limit", Flag::List},
                  {"seq-idx-cuts", Flag::List},
                  {"cu-seqlens", Flag::List},
                  {"a-range", Flag::List},
                  {"dt-range", Flag::List},
                  {"no-expected", Flag::Switch}},
                 std::vector<std::string>(argv + 1, argv + argc), syntax);
  // Flag errors exit with 2, as in ssd-run and ssd-compile.
  if (!read.ok()) {
    std::cerr << "ssd-make-case: error: " << read.message() << "\n" << usage();
    return 2;
  }
  const cli::ParsedFlags &flags = *read;
  if (flags.on("help")) {
    std::cout << usage();
    return 0;
  }
  std::string outDir = flags.value("o");
  if (outDir.empty()) {
    std::cerr << "ssd-make-case: error: -o DIR is required\n" << usage();
    return 2;
  }
  Expected<RandomCaseOptions> options = caseOptions(flags);
  if (!options.ok())
    return fail(options.message());
  RandomCaseOptions &o = *options;

  if (o.batch <= 0 || o.seqlen < 0 || o.nheads <= 0 || o.headdim <= 0 ||
      o.ngroups <= 0 || o.dstate <= 0)
    return fail("sizes must be positive (seqlen may be 0)");
  // The case is built in memory: refuse sizes whose tensors cannot be, with
  // the tensor and its element count, instead of failing an allocation.
  for (auto [tensor, dims] :
       {std::pair{"x",
                  std::vector<int64_t>{o.batch, o.seqlen, o.nheads, o.headdim}},
        std::pair{"B",
                  std::vector<int64_t>{o.batch, o.seqlen, o.ngroups, o.dstate}},
        std::pair{"final_states", std::vector<int64_t>{o.batch, o.nheads,
                                                       o.headdim, o.dstate}}}) {
    int64_t elements = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(elements, d, &elements) ||
          elements > kMaxCaseElements)
        return fail(std::string("sizes too large: ") + tensor +
                    " would hold more than " +
                    std::to_string(kMaxCaseElements) + " elements");
  }
  SSDCase c = makeRandomCase(o);
  c.name = flags.value("name", "random");
  c.note = "random case written by ssd-make-case (seed " +
           std::to_string(o.seed) + ")";
  if (artifact::Status s = validateCase(c, outDir); !s.ok())
    return fail(s.message());
  if (!flags.on("no-expected")) {
    ReferenceResult r = runReference(c);
    c.expectedY.shape = c.tokenShape();
    c.expectedY.data.assign(r.y.begin(), r.y.end());
    c.expectedFinalStates.shape = c.stateShape();
    c.expectedFinalStates.data.assign(r.finalStates.begin(),
                                      r.finalStates.end());
  }
  if (artifact::Status s = writeCase(c, outDir); !s.ok())
    return fail(s.message());
  return 0;
}
