//===- Problem.cpp - a generated SSD problem on the device ----------------===//
#include "Problem.h"

#include "ssd/Support/FloatBits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

using namespace ssd;
using namespace ssd::bench;
using ssd::rt::DType;
using ssd::rt::Expected;
using ssd::rt::Status;

static uint64_t mix(uint64_t z) { // splitmix64
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float uniform(uint64_t key, float lo, float hi) {
  double u = (mix(key) >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(lo + (hi - lo) * u);
}

namespace {
/// The values of one input: its key base and range, computed once per
/// tensor rather than once per element (the fill of a 128K-token x draws
/// 671M values).
struct InputDraw {
  uint64_t base;
  float lo, hi;
  InputDraw(const std::string &name, uint64_t seed)
      : base(mix(std::hash<std::string>{}(name) ^ (seed * 0x100000001b3ull))) {
    if (name == "dt") { // softplus'd to ~0.02-0.3
      lo = -4.0f, hi = -1.0f;
    } else if (name == "A") {
      lo = -4.0f, hi = -0.5f;
    } else if (name == "D") {
      lo = 0.5f, hi = 1.5f;
    } else if (name == "dt_bias") {
      lo = -0.5f, hi = 0.5f;
    } else { // x, B, C, z, initial_states
      lo = -1.0f, hi = 1.0f;
    }
  }
  float operator()(uint64_t i) const { return uniform(base + i, lo, hi); }
};
} // namespace

float ssd::bench::inputValue(const std::string &name, uint64_t seed,
                             uint64_t i) {
  return InputDraw(name, seed)(i);
}

static float roundFor(DType t, float v) {
  if (t == DType::BF16)
    return roundTo(DType::BF16, v);
  if (t == DType::F16)
    return roundTo(DType::F16, v);
  return v;
}

/// The dimensions of a tensor of the manifest at (b, L). A varlen layer
/// (`packed`) takes the b sequences as one row of b L tokens.
static std::vector<int64_t> shapeOf(const rt::Manifest &m,
                                    const std::string &name, int64_t b,
                                    int64_t L, bool packed) {
  const rt::Constants &k = m.constants;
  int64_t h = k.nheads, p = k.headdim, n = k.dstate, g = k.ngroups;
  int64_t rows = packed ? 1 : b, tokens = packed ? b * L : L;
  if (name == "x" || name == "z" || name == "y")
    return {rows, tokens, h, p};
  if (name == "dt")
    return {rows, tokens, h};
  if (name == "B" || name == "C")
    return {rows, tokens, g, n};
  if (name == "cu_seqlens")
    return {b + 1};
  if (name == "initial_states" || name == "final_states")
    return {b, h, p, n};
  if (name == "seq_idx")
    return {b, L};
  if (name == "D") {
    for (const std::string &f : k.features)
      if (f == "Dhp")
        return {h, p};
  }
  return {h}; // A, D, dt_bias
}

bool ssd::bench::packsSequences(const rt::Manifest &m) {
  return m.findTensor("cu_seqlens") != nullptr;
}

Expected<DeviceProblem> ssd::bench::makeDeviceProblem(const rt::Manifest &m,
                                                      int64_t batch,
                                                      int64_t seqlen,
                                                      uint64_t seed,
                                                      int64_t rowPad) {
  DeviceProblem problem;
  // A varlen layer gets the batch's sequences packed into one row
  // (cu_seqlens 0, L, 2L, ..., bL). Every token keeps the flat index it has
  // in the batched problem, so the inputs, the outputs' memory and the
  // check are the batched problem's: varlen and batched layers time alike.
  bool packed = packsSequences(m);
  if (packed && m.findTensor("seq_idx"))
    return Status::error("the benchmark does not generate seq_idx with "
                         "cu_seqlens");
  if (packed && batch * seqlen > INT32_MAX)
    return Status::error("cu_seqlens: " + std::to_string(batch) +
                         " sequences of " + std::to_string(seqlen) +
                         " tokens overflow i32");
  for (const rt::TensorSpec &t : m.tensors) {
    std::vector<int64_t> shape = shapeOf(m, t.name, batch, seqlen, packed);
    if (t.name == "cu_seqlens") {
      if (t.dtype != DType::I32)
        return Status::error("cu_seqlens: expected i32, the manifest says " +
                             std::string(rt::dtypeName(t.dtype)));
      std::vector<int32_t> starts(size_t(batch) + 1);
      for (int64_t s = 0; s <= batch; ++s)
        starts[size_t(s)] = static_cast<int32_t>(s * seqlen);
      Expected<rt::DeviceBuffer> buffer =
          rt::DeviceBuffer::allocate(starts.size() * sizeof(int32_t));
      if (!buffer.ok())
        return buffer.status().withContext("tensor 'cu_seqlens'");
      SSD_RT_RETURN_IF_ERROR(rt::copyToDevice(
          buffer->get(), starts.data(), starts.size() * sizeof(int32_t)));
      problem.args[t.name] = {buffer->get(), t.dtype, shape, {}, 0};
      problem.buffers[t.name] = buffer.take();
      continue;
    }
    // Rows: one per (b, L) token for a padded view, else the whole tensor.
    bool padded = rowPad > 0 && t.layout == rt::Layout::InnerContiguous &&
                  shape.size() >= 3;
    size_t count = 1;
    for (int64_t d : shape)
      count *= static_cast<size_t>(d);
    size_t rowElements = padded ? count / size_t(batch * seqlen) : count;
    size_t rowStride = padded ? rowElements + size_t(rowPad) : rowElements;
    size_t rows = count ? count / rowElements : 0;
    size_t elementBytes = rt::dtypeBytes(t.dtype);
    size_t bytes = rows * rowStride * elementBytes;
    Expected<rt::DeviceBuffer> buffer = rt::DeviceBuffer::allocate(bytes);
    if (!buffer.ok())
      return buffer.status().withContext("tensor '" + t.name + "'");
    if (t.output || t.name == "seq_idx") {
      SSD_RT_RETURN_IF_ERROR(rt::deviceMemset(buffer->get(), 0, bytes));
    } else {
      // Fill in slices of whole rows to bound host memory at long sequences;
      // the padding holds NaN, so a kernel that reads it shows.
      constexpr size_t kSlice = size_t(1) << 26;
      size_t sliceRows = std::max<size_t>(1, kSlice / rowStride);
      std::vector<uint8_t> host;
      InputDraw draw(t.name, seed);
      unsigned threads = std::max(1u, std::thread::hardware_concurrency());
      for (size_t row0 = 0; row0 < rows; row0 += sliceRows) {
        size_t n = std::min(sliceRows, rows - row0);
        host.resize(n * rowStride * elementBytes);
        // Elements [e0, e1) of the slice; an unpadded tensor is one row, so
        // the slice is split by element, not by row.
        auto fillElements = [&](size_t e0, size_t e1) {
          for (size_t e = e0; e < e1; ++e) {
            size_t r = e / rowStride, j = e % rowStride;
            float v =
                j < rowElements ? draw((row0 + r) * rowElements + j) : NAN;
            uint8_t *at = &host[e * elementBytes];
            if (t.dtype == DType::F32) {
              std::memcpy(at, &v, 4);
            } else {
              uint16_t bits =
                  t.dtype == DType::BF16 ? floatToBF16(v) : floatToF16(v);
              std::memcpy(at, &bits, 2);
            }
          }
        };
        // Elements are independent draws: split them over the host's cores.
        size_t elements = n * rowStride;
        std::vector<std::thread> workers;
        size_t per = (elements + threads - 1) / threads;
        for (size_t e0 = 0; e0 < elements; e0 += per)
          workers.emplace_back(fillElements, e0, std::min(elements, e0 + per));
        for (std::thread &w : workers)
          w.join();
        SSD_RT_RETURN_IF_ERROR(rt::copyToDevice(
            static_cast<uint8_t *>(buffer->get()) +
                row0 * rowStride * elementBytes,
            host.data(), host.size()));
      }
    }
    std::vector<int64_t> strides;
    if (padded) {
      strides.assign(shape.size(), 1);
      for (size_t d = shape.size() - 1; d > 2; --d)
        strides[d - 1] = strides[d] * shape[d];
      strides[1] = static_cast<int64_t>(rowStride);
      strides[0] = seqlen * strides[1];
    }
    problem.args[t.name] = {buffer->get(), t.dtype, shape, strides, 0};
    problem.buffers[t.name] = buffer.take();
  }
  return problem;
}

SSDCase ssd::bench::headCase(const rt::Manifest &m, int64_t batch,
                             int64_t seqlen, uint64_t seed, int64_t row,
                             int64_t head, int64_t tokens) {
  const rt::Constants &k = m.constants;
  int64_t h = k.nheads, p = k.headdim, n = k.dstate, g = k.ngroups;
  int64_t group = head / (h / g);
  auto has = [&](const char *f) {
    for (const std::string &x : k.features)
      if (x == f)
        return true;
    return false;
  };
  auto dtypeOf = [&](const char *name) {
    const rt::TensorSpec *t = m.findTensor(name);
    return t ? t->dtype : DType::F32;
  };
  SSDCase c;
  c.name = "head" + std::to_string(head);
  c.batch = 1;
  c.seqlen = tokens;
  c.nheads = 1;
  c.headdim = p;
  c.ngroups = 1;
  c.dstate = n;
  c.dtSoftplus = has("softplus");
  auto fill = [&](FloatTensor &t, const char *name,
                  std::vector<int64_t> shape, auto index) {
    t.shape = shape;
    size_t count = 1;
    for (int64_t d : shape)
      count *= d;
    t.data.resize(count);
    DType type = dtypeOf(name);
    for (size_t i = 0; i < count; ++i)
      t.data[i] = roundFor(type, inputValue(name, seed, index(i)));
  };
  fill(c.x, "x", {1, tokens, 1, p}, [&](size_t i) {
    uint64_t l = i / p, j = i % p;
    return ((row * seqlen + l) * h + head) * p + j;
  });
  fill(c.dt, "dt", {1, tokens, 1}, [&](size_t l) {
    return (row * seqlen + l) * h + head;
  });
  fill(c.A, "A", {1}, [&](size_t) { return uint64_t(head); });
  for (auto [t, name] : {std::pair<FloatTensor *, const char *>{&c.B, "B"},
                         {&c.C, "C"}})
    fill(*t, name, {1, tokens, 1, n}, [&](size_t i) {
      uint64_t l = i / n, j = i % n;
      return ((row * seqlen + l) * g + group) * n + j;
    });
  if (has("D"))
    fill(c.D, "D", {1}, [&](size_t) { return uint64_t(head); });
  if (has("Dhp"))
    fill(c.D, "D", {1, p}, [&](size_t j) { return head * p + j; });
  if (has("z"))
    fill(c.z, "z", {1, tokens, 1, p}, [&](size_t i) {
      uint64_t l = i / p, j = i % p;
      return ((row * seqlen + l) * h + head) * p + j;
    });
  if (has("dt_bias"))
    fill(c.dtBias, "dt_bias", {1}, [&](size_t) { return uint64_t(head); });
  if (has("initial_states"))
    fill(c.initialStates, "initial_states", {1, 1, p, n}, [&](size_t i) {
      return (row * h + head) * p * n + i;
    });
  return c;
}

double ssd::bench::minimumBytes(const rt::Manifest &m, int64_t batch,
                                int64_t seqlen) {
  double perToken = 0;
  for (const rt::TensorSpec &t : m.tensors) {
    double elements = 0;
    const rt::Constants &k = m.constants;
    if (t.name == "x" || t.name == "z" || t.name == "y")
      elements = double(k.nheads) * k.headdim;
    else if (t.name == "dt")
      elements = k.nheads;
    else if (t.name == "B" || t.name == "C")
      elements = double(k.ngroups) * k.dstate;
    perToken += elements * rt::dtypeBytes(t.dtype);
  }
  return perToken * batch * seqlen;
}

double ssd::bench::chunkedFlops(const rt::Manifest &m, int64_t batch,
                                int64_t seqlen) {
  const rt::Constants &k = m.constants;
  double Q = k.chunkSize, h = k.nheads, p = k.headdim, n = k.dstate,
         g = k.ngroups;
  double chunks = std::ceil(double(seqlen) / Q) * batch;
  // C B^T per group; (CB o decay) x, B^T (x o decay) and C s per head.
  double perChunk = g * 2 * Q * Q * n + h * (2 * Q * Q * p + 4 * Q * n * p);
  return chunks * perChunk;
}
