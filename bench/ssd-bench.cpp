//===- ssd-bench.cpp - device time of SSD artifacts -----------------------===//
//
//   ssd-bench --run ARTIFACT:B:L [--run ...] [--warmup N] [--iters N]
//             [--rounds R] [--check-heads K] [--check-tokens T] [--what NAME]
//             [--commit HASH] [--results-dir DIR | --json FILE]
//             [--profile DIR] [--timing graph|direct]
//
// With --rounds R > 1 every run is prepared first and then timed once per
// round, the runs taking turns, so that a drift of the machine (clocks,
// heat, other tenants) spreads over all of them alike: the row's ms is the
// median of its rounds, `ms_rounds` lists them. An A/B comparison below the
// few percent that separate two calls needs it.
//
// A varlen artifact (cu_seqlens) runs B sequences of L tokens packed into
// one row, the inputs token for token those of the batched run, so the two
// compare directly (the row's `packed_sequences`).
//
// For each run: generated inputs in the artifact's types (several input and
// output sets, rotated, where one set fits in L2), device time per call with
// CUDA events (median of --iters after --warmup; with --timing graph, the
// default, each call is the replay of a CUDA graph holding the launch's
// device work, the workspace zeroing included, as the torch anchors of
// bench/anchors are timed; with --timing direct each call is
// Artifact::launch between the events, so the device also waits for the
// host's work; each round also records the host's time inside a call
// (`host_us`) and the device time per call of --iters calls enqueued back
// to back between one pair of events (`back_to_back_ms`: the host's work
// overlaps the device's, as for a caller that does not wait)), per kernel
// (each kernel
// launched alone, in order, on the same workspace) and in total, a sampled
// check against the independent reference (K heads of the last batch row
// over the first T tokens; T = 0 checks the whole sequence and the final
// states),
// TFLOP/s of the chunked algorithm's matrix work and GB/s of the minimum
// traffic. Writes bench/results/<date>-<commit>-<what>.json (DESIGN.md).
// With --profile DIR, an artifact built with `ssd-compile --profile` also
// leaves the profile of the checked launch in DIR: its chain items' phase
// clocks in <artifact>-b<B>-L<L>-chain-profile.npy and every item's start
// and end in <artifact>-b<B>-L<L>-item-log.npy (i64, the `chain_profile`
// and `item_log` workspaces; scripts/profile-chain-items.py and
// scripts/profile-item-log.py summarise them).
// Needs only the runtime: it runs on the GPU machine without MLIR.
//
//===----------------------------------------------------------------------===//
#include "Problem.h"

#include "ssd/Reference/Reference.h"
#include "ssd/Runtime/Device.h"
#include "ssd/Runtime/Json.h"
#include "ssd/Runtime/Runtime.h"
#include "ssd/Support/Compare.h"
#include "ssd/Support/FloatBits.h"
#include "ssd/Support/Npy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

using namespace ssd;
using namespace ssd::bench;
using ssd::rt::Expected;
using ssd::rt::Status;

namespace {
struct Run {
  std::string artifact;
  int64_t batch = 1, seqlen = 0;
};

struct Options {
  std::vector<Run> runs;
  int warmup = 10, iters = 50, rounds = 1, checkHeads = 2;
  int64_t checkTokens = 2048;
  int64_t rowPad = 0; // > 0: x, dt, B, C, z as views of padded rows
  std::string what = "unfused", commit = "unknown", resultsDir = "bench/results",
              json, profileDir;
  uint64_t seed = 1;
  bool graphTiming = true; // --timing graph (default) or direct
};

/// H200 L2 is 50 MB: rotate sets until the working set is well beyond it.
constexpr double kRotateBytes = 256e6;
constexpr int kMaxSets = 8;

int usage(const std::string &error) {
  std::cerr << "ssd-bench: error: " << error
            << "\nusage: ssd-bench --run ARTIFACT:B:L [--run ...] [--warmup N] "
               "[--iters N] [--rounds R] [--check-heads K] [--check-tokens T] "
               "[--what NAME] "
               "[--commit HASH] [--results-dir DIR | --json FILE] "
               "[--profile DIR] [--row-pad N] [--timing graph|direct]\n";
  return 2;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string jsonString(const std::string &s) {
  rt::JsonValue v;
  v.kind = rt::JsonValue::Kind::String;
  v.string = s;
  return v.serialize();
}

std::string num(double v) {
  if (!std::isfinite(v))
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

/// The artifact with only kernel `index` (same workspaces and tensors).
Expected<rt::Artifact> kernelOnly(const std::string &dir, size_t index) {
  std::ifstream mf(dir + "/manifest.json"), cf(dir + "/kernels.cubin",
                                               std::ios::binary);
  std::stringstream ms;
  ms << mf.rdbuf();
  std::vector<char> cubin((std::istreambuf_iterator<char>(cf)),
                          std::istreambuf_iterator<char>());
  Expected<rt::JsonValue> tree = rt::parseJson(ms.str());
  if (!tree.ok())
    return tree.status();
  for (auto &[key, value] : tree->object)
    if (key == "kernels") {
      rt::JsonValue one = value.array.at(index);
      value.array = {one};
    }
  return rt::Artifact::fromMemory(tree->serialize(), std::move(cubin),
                                  dir + "#" + std::to_string(index));
}

/// A round's times of one call: the device time from the event before the
/// call to the event after it (the device idles while the host enqueues),
/// the host's time inside the call, and the device time per call of `iters`
/// calls enqueued back to back between one pair of events (the host's work
/// overlaps the device's, as for a caller that does not wait).
struct CallTimes {
  double ms = 0, hostUs = 0, backToBackMs = 0;
};

/// Times `launch` `iters` times after `warmup` calls, the events on
/// `stream`: medians of the calls, then the back-to-back mean.
template <typename F>
Expected<CallTimes> timeIt(int warmup, int iters, F &&launch,
                           void *stream = nullptr) {
  rt::EventTimer timer;
  SSD_RT_RETURN_IF_ERROR(timer.init());
  for (int i = 0; i < warmup; ++i)
    SSD_RT_RETURN_IF_ERROR(launch(i));
  SSD_RT_RETURN_IF_ERROR(rt::deviceSynchronize());
  std::vector<double> ms, hostUs;
  for (int i = 0; i < iters; ++i) {
    SSD_RT_RETURN_IF_ERROR(timer.start(stream));
    auto h0 = std::chrono::steady_clock::now();
    SSD_RT_RETURN_IF_ERROR(launch(i));
    auto h1 = std::chrono::steady_clock::now();
    SSD_RT_RETURN_IF_ERROR(timer.stop(stream));
    Expected<float> t = timer.elapsedMs();
    if (!t.ok())
      return t.status();
    ms.push_back(*t);
    hostUs.push_back(
        std::chrono::duration<double, std::micro>(h1 - h0).count());
  }
  SSD_RT_RETURN_IF_ERROR(timer.start(stream));
  for (int i = 0; i < iters; ++i)
    SSD_RT_RETURN_IF_ERROR(launch(i));
  SSD_RT_RETURN_IF_ERROR(timer.stop(stream));
  Expected<float> all = timer.elapsedMs();
  if (!all.ok())
    return all.status();
  return CallTimes{median(ms), median(hostUs), *all / iters};
}

std::vector<float> download(const rt::TensorArg &t) {
  size_t count = 1;
  for (int64_t d : t.shape)
    count *= d;
  std::vector<float> out(count);
  if (t.dtype == rt::DType::F32) {
    if (!rt::copyToHost(out.data(), t.devicePtr, count * 4).ok())
      return {};
    return out;
  }
  std::vector<uint16_t> bits(count);
  if (!rt::copyToHost(bits.data(), t.devicePtr, count * 2).ok())
    return {};
  return fromHalfBits(t.dtype == rt::DType::BF16 ? DType::BF16 : DType::F16,
                      bits);
}

/// max_rel_err of y (and final states when the whole sequence is checked)
/// over the sampled heads of the last batch row (whose offsets step over
/// every other row: a wrong batch stride shows).
double sampledError(const rt::Manifest &m, const Run &run,
                    const rt::ArgumentMap &args, const Options &o) {
  const rt::Constants &k = m.constants;
  int64_t tokens = o.checkTokens > 0 ? std::min(o.checkTokens, run.seqlen)
                                     : run.seqlen;
  std::vector<int64_t> heads;
  for (int i = 0; i < o.checkHeads && i < k.nheads; ++i)
    heads.push_back(o.checkHeads == 1 ? 0 : i * (k.nheads - 1) / (o.checkHeads - 1));
  int64_t row = run.batch - 1;
  std::vector<ReferenceResult> refs(heads.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < heads.size(); ++i)
    workers.emplace_back([&, i] {
      refs[i] = runReference(
          headCase(m, run.batch, run.seqlen, o.seed, row, heads[i], tokens));
    });
  for (std::thread &w : workers)
    w.join();
  std::vector<float> y = download(args.at("y"));
  std::vector<float> fs = download(args.at("final_states"));
  std::vector<float> gotY, gotS;
  std::vector<double> refY, refS;
  int64_t h = k.nheads, p = k.headdim, n = k.dstate;
  for (size_t i = 0; i < heads.size(); ++i) {
    for (int64_t l = 0; l < tokens; ++l)
      for (int64_t j = 0; j < p; ++j) {
        gotY.push_back(y[((row * run.seqlen + l) * h + heads[i]) * p + j]);
        refY.push_back(refs[i].y[l * p + j]);
      }
    if (tokens == run.seqlen)
      for (int64_t j = 0; j < p * n; ++j) {
        gotS.push_back(fs[(row * h + heads[i]) * p * n + j]);
        refS.push_back(refs[i].finalStates[j]);
      }
  }
  auto err = [](const std::vector<float> &got, const std::vector<double> &ref) {
    std::vector<float> r(ref.begin(), ref.end());
    return maxRelativeError(got, r);
  };
  double e = err(gotY, refY);
  if (!gotS.empty())
    e = std::max(e, err(gotS, refS));
  return e;
}

/// A run ready to time: its artifact, input sets and workspace.
struct Prepared {
  Run run;
  rt::Artifact artifact;
  std::vector<DeviceProblem> problems;
  rt::DeviceBuffer workspaceBuffer;
  rt::Workspace workspace;
  double bytes = 0, flops = 0;
  /// The median of each round's --iters launches.
  std::vector<double> roundMs;
  /// Per round: the host's time in a call, and the device time per call of
  /// calls enqueued back to back (CallTimes).
  std::vector<double> roundHostUs, roundBackToBackMs;
  /// With --timing graph: one graph per input set, recorded at the first
  /// round.
  std::unique_ptr<rt::GraphReplay> graphs;
};

Expected<Prepared> prepare(const Run &run, const Options &o) {
  Expected<rt::Artifact> artifact = rt::Artifact::load(run.artifact);
  if (!artifact.ok())
    return artifact.status();
  const rt::Manifest &m = artifact->manifest();
  double bytes = minimumBytes(m, run.batch, run.seqlen);
  double flops = chunkedFlops(m, run.batch, run.seqlen);
  int sets = std::clamp(int(std::ceil(kRotateBytes / bytes)), 1, kMaxSets);
  std::vector<DeviceProblem> problems;
  for (int s = 0; s < sets; ++s) {
    Expected<DeviceProblem> p =
        makeDeviceProblem(m, run.batch, run.seqlen, o.seed + s, o.rowPad);
    if (!p.ok())
      return p.status();
    problems.push_back(p.take());
  }
  Expected<uint64_t> wsBytes = artifact->workspaceSize(problems[0].args);
  if (!wsBytes.ok())
    return wsBytes.status();
  Expected<rt::DeviceBuffer> ws = rt::DeviceBuffer::allocate(*wsBytes);
  if (!ws.ok())
    return ws.status().withContext("workspace");
  rt::Workspace workspace{ws->get(), *wsBytes};
  return Prepared{run,       artifact.take(), std::move(problems),
                  ws.take(), workspace,       bytes,
                  flops,     {}};
}

/// One round: the median of --iters launches after the warmup, rotating the
/// input sets.
Status timeRound(Prepared &p, const Options &o) {
  size_t sets = p.problems.size();
  if (o.graphTiming && !p.graphs) {
    auto graphs = std::make_unique<rt::GraphReplay>();
    SSD_RT_RETURN_IF_ERROR(graphs->init());
    for (size_t s = 0; s < sets; ++s)
      SSD_RT_RETURN_IF_ERROR(graphs->record([&](void *stream) {
        return p.artifact.launch(p.problems[s].args, stream, p.workspace);
      }));
    p.graphs = std::move(graphs);
  }
  // A call: the replay of its set's graph, or (--timing direct) the launch.
  auto call = [&](int i) {
    if (p.graphs)
      return p.graphs->replay(i % sets);
    return p.artifact.launch(p.problems[i % sets].args, nullptr, p.workspace);
  };
  Expected<CallTimes> total =
      timeIt(o.warmup, o.iters, call, p.graphs ? p.graphs->stream() : nullptr);
  if (!total.ok())
    return total.status();
  p.roundMs.push_back(total->ms);
  p.roundHostUs.push_back(total->hostUs);
  p.roundBackToBackMs.push_back(total->backToBackMs);
  return Status::success();
}

/// "chain_profile" -> "chain-profile".
std::string fileStem(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

/// Writes workspace `name` (`chain_profile` or `item_log`) of the last
/// launch with `args` to `dir` as an i64 .npy; returns its path, or "" when
/// the artifact records no profile.
Expected<std::string> writeProfileWorkspace(const Prepared &p,
                                            const rt::ArgumentMap &args,
                                            const std::string &dir,
                                            const std::string &name) {
  Expected<rt::DeviceInfo> device = rt::currentDevice();
  if (!device.ok())
    return device.status();
  Expected<rt::LaunchPlan> plan = p.artifact.plan(args, *device);
  if (!plan.ok())
    return plan.status();
  const rt::WorkspaceSlot *slot = plan->findWorkspace(name);
  if (!slot)
    return std::string();
  std::vector<uint8_t> bytes(slot->bytes);
  SSD_RT_RETURN_IF_ERROR(rt::copyToHost(
      bytes.data(), static_cast<char *>(p.workspace.devicePtr) + slot->offset,
      bytes.size()));
  const Run &run = p.run;
  std::string path = dir + "/" +
                     run.artifact.substr(run.artifact.find_last_of('/') + 1) +
                     "-b" + std::to_string(run.batch) + "-L" +
                     std::to_string(run.seqlen) + "-" + fileStem(name) + ".npy";
  std::vector<uint8_t> npy = serializeNpy(DType::I64, slot->shape, bytes);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(npy.data()),
            static_cast<std::streamsize>(npy.size()));
  if (!out)
    return rt::Status::error("cannot write " + path);
  return path;
}

/// Times each kernel alone, checks the outputs and prints and returns the
/// run's JSON row.
Expected<std::string> finish(Prepared &p, const Options &o) {
  const Run &run = p.run;
  const rt::Manifest &m = p.artifact.manifest();
  size_t sets = p.problems.size();
  Expected<rt::DeviceInfo> device = rt::currentDevice();
  if (!device.ok())
    return device.status();
  Expected<rt::LaunchPlan> plan = p.artifact.plan(p.problems[0].args, *device);
  if (!plan.ok())
    return plan.status();
  std::string kernels;
  for (size_t kIndex = 0; kIndex < m.kernels.size(); ++kIndex) {
    // A kernel whose launch condition does not hold here is not timed.
    if (!plan->kernels[kIndex].selected)
      continue;
    Expected<rt::Artifact> one = kernelOnly(run.artifact, kIndex);
    if (!one.ok())
      return one.status();
    // Kernels before this one fill the workspace it reads.
    Expected<CallTimes> t = timeIt(o.warmup / 2, o.iters, [&](int i) {
      return one->launch(p.problems[i % sets].args, nullptr, p.workspace);
    });
    if (!t.ok())
      return t.status();
    kernels += (kernels.empty() ? "" : ", ") +
               jsonString(m.kernels[kIndex].name) + ": " + num(t->ms);
  }
  // A clean run on set 0 for the check.
  SSD_RT_RETURN_IF_ERROR(
      p.artifact.launch(p.problems[0].args, nullptr, p.workspace));
  SSD_RT_RETURN_IF_ERROR(rt::deviceSynchronize());
  std::vector<std::pair<std::string, std::string>> profiles;
  if (!o.profileDir.empty()) {
    for (const char *name : {"chain_profile", "item_log"}) {
      Expected<std::string> path =
          writeProfileWorkspace(p, p.problems[0].args, o.profileDir, name);
      if (!path.ok())
        return path.status();
      if (!path->empty())
        profiles.emplace_back(name, *path);
    }
    if (profiles.empty())
      std::fprintf(stderr,
                   "ssd-bench: note: %s records no profile "
                   "(compile it with ssd-compile --profile)\n",
                   run.artifact.c_str());
  }
  double err =
      o.checkHeads > 0 ? sampledError(m, run, p.problems[0].args, o) : NAN;

  const rt::Constants &k = m.constants;
  double ms = median(p.roundMs);
  double bytes = p.bytes, flops = p.flops;
  std::printf("%-28s b=%-2lld L=%-7lld Q=%-4lld %8.4f ms %7.2f TFLOP/s %7.1f GB/s "
              "max_rel_err=%.3e sets=%zu",
              run.artifact.substr(run.artifact.find_last_of('/') + 1).c_str(),
              (long long)run.batch, (long long)run.seqlen,
              (long long)k.chunkSize, ms, flops / ms / 1e9, bytes / ms / 1e6,
              err, sets);
  auto list = [](const std::vector<double> &v) {
    std::string out;
    for (double r : v)
      out += (out.empty() ? "" : ", ") + num(r);
    return "[" + out + "]";
  };
  if (p.roundMs.size() > 1) {
    auto [lo, hi] = std::minmax_element(p.roundMs.begin(), p.roundMs.end());
    std::printf(" rounds=%zu spread=%.4f-%.4f", p.roundMs.size(), *lo, *hi);
  }
  std::printf(" host=%.1fus back-to-back=%.4fms", median(p.roundHostUs),
              median(p.roundBackToBackMs));
  std::printf("\n");
  std::fflush(stdout);
  // A compiler option the manifest records, else `absent`.
  auto option = [&](const char *name, const char *absent) {
    const auto *v = m.compiler.options.find(name);
    return jsonString(v ? v->string : absent);
  };
  std::ostringstream row;
  row << "{\"strategy\": " << option("strategy", "unfused")
      << ", \"kernel\": " << option("kernel", "")
      << ", \"state_chain\": " << option("state_chain", "")
      << ", \"artifact\": "
      << jsonString(run.artifact.substr(run.artifact.find_last_of('/') + 1))
      << ", \"batch\": " << run.batch << ", \"seqlen\": " << run.seqlen
      << ", \"packed_sequences\": " << (packsSequences(m) ? "true" : "false")
      << ", \"nheads\": " << k.nheads << ", \"headdim\": " << k.headdim
      << ", \"dstate\": " << k.dstate << ", \"ngroups\": " << k.ngroups
      << ", \"chunk_size\": " << k.chunkSize
      << ", \"dtype\": " << jsonString(rt::dtypeName(k.dtype))
      << ", \"state_dtype\": " << jsonString(rt::dtypeName(k.stateDtype))
      << ", \"ms\": " << num(ms) << ", \"max_rel_err\": " << num(err)
      << ", \"tflops\": " << num(flops / ms / 1e9)
      << ", \"gbps\": " << num(bytes / ms / 1e6) << ", \"kernels_ms\": {"
      << kernels << "}, \"min_bytes\": " << num(bytes)
      << ", \"flops\": " << num(flops) << ", \"input_sets\": " << sets
      << ", \"rounds\": " << p.roundMs.size()
      << ", \"ms_rounds\": " << list(p.roundMs)
      << ", \"host_us\": " << num(median(p.roundHostUs))
      << ", \"host_us_rounds\": " << list(p.roundHostUs)
      << ", \"back_to_back_ms\": " << num(median(p.roundBackToBackMs))
      << ", \"back_to_back_ms_rounds\": " << list(p.roundBackToBackMs)
      << ", \"warmup\": " << o.warmup << ", \"iters\": " << o.iters
      << ", \"check_heads\": " << o.checkHeads
      << ", \"check_tokens\": " << o.checkTokens
      << ", \"timing\": " << jsonString(o.graphTiming ? "graph" : "direct")
      << ", \"row_pad\": " << o.rowPad;
  for (const auto &[name, path] : profiles)
    row << ", " << jsonString(name) << ": " << jsonString(path);
  row << "}";
  return row.str();
}
} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--run") {
      std::string v = value();
      size_t c2 = v.rfind(':'), c1 = c2 == std::string::npos ? c2 : v.rfind(':', c2 - 1);
      if (c1 == std::string::npos)
        return usage("--run: expected ARTIFACT:B:L, got '" + v + "'");
      Run r{v.substr(0, c1), std::atoll(v.substr(c1 + 1, c2 - c1 - 1).c_str()),
            std::atoll(v.substr(c2 + 1).c_str())};
      if (r.batch <= 0 || r.seqlen <= 0)
        return usage("--run: bad B or L in '" + v + "'");
      o.runs.push_back(r);
    } else if (a == "--timing") {
      std::string v = value();
      if (v != "graph" && v != "direct")
        return usage("--timing: expected graph or direct, got '" + v + "'");
      o.graphTiming = v == "graph";
    } else if (a == "--warmup") {
      o.warmup = std::atoi(value().c_str());
    } else if (a == "--iters") {
      o.iters = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--rounds") {
      o.rounds = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--check-heads") {
      o.checkHeads = std::atoi(value().c_str());
    } else if (a == "--check-tokens") {
      o.checkTokens = std::atoll(value().c_str());
    } else if (a == "--what") {
      o.what = value();
    } else if (a == "--commit") {
      o.commit = value();
    } else if (a == "--results-dir") {
      o.resultsDir = value();
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--profile") {
      o.profileDir = value();
    } else if (a == "--row-pad") {
      o.rowPad = std::atoll(value().c_str());
      if (o.rowPad < 0)
        return usage("--row-pad: expected N >= 0");
    } else if (a == "--seed") {
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  if (o.runs.empty())
    return usage("no --run given");
  if (Status s = rt::usePrimaryContext(0); !s.ok()) {
    std::cerr << "ssd-bench: error: " << s.message() << "\n";
    return 3;
  }
  Expected<std::string> gpu = rt::currentDeviceName();
  char date[16];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  std::string path = o.json.empty() ? o.resultsDir + "/" + date + "-" +
                                          o.commit + "-" + o.what + ".json"
                                    : o.json;
  // The file is rewritten after every run, so a run cut short by a time
  // limit keeps the rows it measured.
  std::vector<std::string> rows;
  auto write = [&]() {
    std::ofstream out(path);
    out << "{\"commit\": " << jsonString(o.commit) << ", \"gpu\": "
        << jsonString(gpu.ok() ? *gpu : "unknown") << ", \"date\": "
        << jsonString(date) << ", \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i)
      out << "  " << rows[i] << (i + 1 < rows.size() ? ",\n" : "\n");
    out << "]}\n";
    return static_cast<bool>(out);
  };
  int status = 0;
  auto failed = [&](const Run &run, const std::string &message) {
    std::cerr << "ssd-bench: error: " << run.artifact << " b=" << run.batch
              << " L=" << run.seqlen << ": " << message << "\n";
    status = 3;
  };
  // Prepares runs [begin, end), times them --rounds times (the runs taking
  // turns), then checks each and writes its row; false when the file cannot
  // be written.
  auto benchGroup = [&](size_t begin, size_t end) -> bool {
    std::vector<Prepared> prepared;
    for (size_t r = begin; r < end; ++r) {
      const Run &run = o.runs[r];
      std::fprintf(stderr, "ssd-bench: preparing %s b=%lld L=%lld\n",
                   run.artifact.c_str(), static_cast<long long>(run.batch),
                   static_cast<long long>(run.seqlen));
      Expected<Prepared> p = prepare(run, o);
      if (!p.ok())
        failed(run, p.message());
      else
        prepared.push_back(p.take());
    }
    std::vector<bool> timed(prepared.size(), true);
    for (int r = 0; r < o.rounds; ++r) {
      for (size_t i = 0; i < prepared.size(); ++i)
        if (timed[i]) {
          // Named before it runs: a launch that never completes (a ring
          // that deadlocks) leaves its run as the log's last line.
          std::fprintf(stderr,
                       "ssd-bench: round %d/%d: timing %s b=%lld L=%lld\n",
                       r + 1, o.rounds, prepared[i].run.artifact.c_str(),
                       static_cast<long long>(prepared[i].run.batch),
                       static_cast<long long>(prepared[i].run.seqlen));
          if (Status t = timeRound(prepared[i], o); !t.ok()) {
            failed(prepared[i].run, t.message());
            timed[i] = false;
          }
        }
      // The rows come after the last round and its checks: each round's
      // times go to stderr as they are measured, so that a run cut short
      // by a time limit still leaves them in its log.
      for (size_t i = 0; i < prepared.size(); ++i)
        if (timed[i])
          std::fprintf(stderr,
                       "ssd-bench: round %d/%d: %s b=%lld L=%lld %.4f ms\n",
                       r + 1, o.rounds, prepared[i].run.artifact.c_str(),
                       static_cast<long long>(prepared[i].run.batch),
                       static_cast<long long>(prepared[i].run.seqlen),
                       prepared[i].roundMs.back());
    }
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (!timed[i])
        continue;
      Expected<std::string> row = finish(prepared[i], o);
      if (!row.ok()) {
        failed(prepared[i].run, row.message());
        continue;
      }
      rows.push_back(*row);
      if (!write())
        return false;
    }
    return true;
  };
  // One round: one run at a time, so that only one run's buffers are held.
  // More: all runs at once, so that they take turns in every round.
  size_t step = o.rounds == 1 ? 1 : o.runs.size();
  for (size_t begin = 0; begin < o.runs.size(); begin += step)
    if (!benchGroup(begin, begin + step)) {
      std::cerr << "ssd-bench: error: " << path << ": cannot write\n";
      return 2;
    }
  if (!write()) {
    std::cerr << "ssd-bench: error: " << path << ": cannot write\n";
    return 2;
  }
  std::cout << "wrote " << path << "\n";
  return status;
}
