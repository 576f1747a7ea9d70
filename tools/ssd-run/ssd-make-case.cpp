//===- ssd-make-case.cpp - write a random case folder ---------------------===//
//
// Writes a case folder in the golden format with deterministic random inputs
// and, unless --no-expected, the expected outputs computed by the
// independent reference recurrence. Tests use it to build cases of any shape
// without shared data or numpy.
//
//===----------------------------------------------------------------------===//
#include "ssd/Reference/Reference.h"
#include "ssd/Support/Case.h"
#include "ssd/Support/RandomCase.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace ssd;
namespace cl = llvm::cl;

static cl::OptionCategory caseCategory("ssd-make-case options");

static cl::opt<std::string> outDir("o", cl::desc("output case folder"),
                                   cl::value_desc("DIR"), cl::Required,
                                   cl::cat(caseCategory));
static cl::opt<std::string> name("name",
                                 cl::desc("case name (default: random)"),
                                 cl::init("random"), cl::cat(caseCategory));
static cl::opt<int64_t> batch("batch", cl::init(1), cl::cat(caseCategory));
static cl::opt<int64_t> seqlen("seqlen", cl::init(64), cl::cat(caseCategory));
static cl::opt<int64_t> nheads("nheads", cl::init(2), cl::cat(caseCategory));
static cl::opt<int64_t> headdim("headdim", cl::init(4), cl::cat(caseCategory));
static cl::opt<int64_t> ngroups("ngroups", cl::init(1), cl::cat(caseCategory));
static cl::opt<int64_t> dstate("dstate", cl::init(8), cl::cat(caseCategory));
static cl::opt<uint64_t> seed("seed", cl::init(0), cl::cat(caseCategory));
static cl::list<std::string> features(
    "features", cl::CommaSeparated,
    cl::desc("optional inputs: D,Dhp,z,dt_bias,softplus,initial_states"),
    cl::cat(caseCategory));
static cl::list<double> dtLimit("dt-limit", cl::CommaSeparated,
                                cl::desc("LO,HI clamp of the processed dt"),
                                cl::cat(caseCategory));
static cl::list<int64_t> seqIdxCuts("seq-idx-cuts", cl::CommaSeparated,
                                    cl::desc("tokens where seq_idx increments"),
                                    cl::cat(caseCategory));
static cl::list<int32_t> cuSeqlens("cu-seqlens", cl::CommaSeparated,
                                   cl::desc("cu_seqlens (selects varlen)"),
                                   cl::cat(caseCategory));
static cl::list<double> aRange("a-range", cl::CommaSeparated,
                               cl::desc("LO,HI range of A (default -4,-0.5)"),
                               cl::cat(caseCategory));
static cl::list<double> dtRange("dt-range", cl::CommaSeparated,
                                cl::desc("LO,HI range of the (softplus'd) dt"),
                                cl::cat(caseCategory));
static cl::opt<bool>
    noExpected("no-expected", cl::desc("do not write y.npy, final_states.npy"),
               cl::cat(caseCategory));

/// The most elements one tensor of a generated case may hold (1 GiB of
/// float32).
static constexpr int64_t kMaxCaseElements = int64_t(1) << 28;

static int fail(const llvm::Twine &message) {
  llvm::errs() << "ssd-make-case: error: " << message << "\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(caseCategory);
  // Flag errors exit with 2, as in ssd-run and ssd-compile (cl's own exit
  // status would be 1).
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "write a random SSD case folder\n",
                                   &llvm::errs()))
    return 2;

  RandomCaseOptions o;
  o.batch = batch;
  o.seqlen = seqlen;
  o.nheads = nheads;
  o.headdim = headdim;
  o.ngroups = ngroups;
  o.dstate = dstate;
  o.seed = seed;
  for (const std::string &feature : features) {
    bool *flag = llvm::StringSwitch<bool *>(feature)
                     .Case("D", &o.D)
                     .Case("Dhp", &o.Dhp)
                     .Case("z", &o.z)
                     .Case("dt_bias", &o.dtBias)
                     .Case("softplus", &o.softplus)
                     .Case("initial_states", &o.initialStates)
                     .Default(nullptr);
    if (!flag)
      return fail("--features: unknown feature '" + feature + "'");
    *flag = true;
  }
  auto pair = [](cl::list<double> &list, const char *flag, double &lo,
                 double &hi) -> bool {
    if (list.empty())
      return true;
    if (list.size() != 2) {
      fail(llvm::Twine(flag) + " needs LO,HI");
      return false;
    }
    lo = list[0];
    hi = list[1];
    return true;
  };
  if (!pair(dtLimit, "--dt-limit", o.dtLimitLo, o.dtLimitHi) ||
      !pair(aRange, "--a-range", o.aMin, o.aMax) ||
      !pair(dtRange, "--dt-range", o.dtMin, o.dtMax))
    return 2;
  o.seqIdxCuts.assign(seqIdxCuts.begin(), seqIdxCuts.end());
  o.cuSeqlens.assign(cuSeqlens.begin(), cuSeqlens.end());

  if (o.batch <= 0 || o.seqlen <= 0 || o.nheads <= 0 || o.headdim <= 0 ||
      o.ngroups <= 0 || o.dstate <= 0)
    return fail("sizes must be positive");
  // The case is built in memory: refuse sizes whose tensors cannot be, with
  // the tensor and its element count, instead of failing an allocation.
  for (auto [tensor, dims] :
       {std::pair{"x", std::vector<int64_t>{o.batch, o.seqlen, o.nheads,
                                            o.headdim}},
        std::pair{"B", std::vector<int64_t>{o.batch, o.seqlen, o.ngroups,
                                            o.dstate}},
        std::pair{"final_states", std::vector<int64_t>{o.batch, o.nheads,
                                                       o.headdim, o.dstate}}}) {
    int64_t elements = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(elements, d, &elements) ||
          elements > kMaxCaseElements)
        return fail(llvm::Twine("sizes too large: ") + tensor +
                    " would hold more than " + llvm::Twine(kMaxCaseElements) +
                    " elements");
  }
  SSDCase c = makeRandomCase(o);
  c.name = name;
  c.note = "random case written by ssd-make-case (seed " +
           std::to_string(seed) + ")";
  if (artifact::Status s = validateCase(c, outDir); !s.ok())
    return fail(s.message());
  if (!noExpected) {
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
