//===- GPUBackend.cpp - ssd-run --backend gpu -----------------------------===//
#include "GPUBackend.h"
#include "Bytes.h"

#include "ssd/Runtime/Device.h"
#include "ssd/Support/FloatBits.h"

#include <cmath>
#include <map>

using namespace ssd;
using ssd::rt::DType;
using ssd::rt::Expected;
using ssd::rt::Status;

LayerSpec ssd::layerSpecOfRun(const SSDCase &c, const RunConfig &config) {
  return layerSpecOfCase(c, config.chunkSize, config.dtype, config.stateDtype);
}

static std::string number(double v) {
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

Status ssd::checkArtifactFits(const rt::Manifest &m, const LayerSpec &spec) {
  const rt::Constants &k = m.constants;
  auto mismatch = [](const std::string &name, const std::string &has,
                     const std::string &needs) {
    return Status::error("constant '" + name + "' is " + has +
                         " in the artifact, but the run needs " + needs);
  };
  const std::tuple<const char *, int64_t, int64_t> sizes[] = {
      {"nheads", k.nheads, spec.nheads},
      {"headdim", k.headdim, spec.headdim},
      {"dstate", k.dstate, spec.dstate},
      {"ngroups", k.ngroups, spec.ngroups},
      {"chunk_size", k.chunkSize, spec.chunkSize}};
  for (auto [name, has, needs] : sizes)
    if (has != needs)
      return mismatch(name, std::to_string(has), std::to_string(needs));
  if (k.dtype != spec.dtype)
    return mismatch("dtype", rt::dtypeName(k.dtype), rt::dtypeName(spec.dtype));
  if (k.stateDtype != spec.stateDtype)
    return mismatch("state_dtype", rt::dtypeName(k.stateDtype),
                    rt::dtypeName(spec.stateDtype));
  if (k.features != spec.features)
    return mismatch("features", "[" + joinFeatures(k.features) + "]",
                    "[" + joinFeatures(spec.features) + "]");
  if (spec.has("dt_limit")) {
    const rt::JsonValue *limit = m.compiler.options.find("dt_limit");
    double lo = NAN, hi = NAN;
    if (limit && limit->isArray() && limit->array.size() == 2 &&
        limit->array[0].isNumber()) {
      lo = limit->array[0].number;
      hi = limit->array[1].isNull() ? INFINITY : limit->array[1].number;
    }
    if (!(lo == spec.dtLimitLo && hi == spec.dtLimitHi))
      return mismatch(
          "dt_limit",
          limit ? "[" + number(lo) + ", " + number(hi) + "]" : "not recorded",
          "[" + number(spec.dtLimitLo) + ", " + number(spec.dtLimitHi) + "]");
  }
  return Status::success();
}

namespace {
/// One tensor in device memory with its host-side description.
struct DeviceTensor {
  rt::DeviceBuffer buffer;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

size_t countOf(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// The host bytes of float32 `values` in `dtype`.
Expected<std::vector<uint8_t>> encode(const std::vector<float> &values,
                                      DType dtype, const std::string &name) {
  std::vector<uint8_t> bytes;
  if (dtype == DType::F32) {
    bytes.resize(values.size() * 4);
    copyBytes(bytes.data(), values.data(), bytes.size());
  } else if (dtype == DType::BF16 || dtype == DType::F16) {
    std::vector<uint16_t> bits =
        toHalfBits(dtype == DType::BF16 ? DType::BF16 : DType::F16, values);
    bytes.resize(bits.size() * 2);
    copyBytes(bytes.data(), bits.data(), bytes.size());
  } else {
    return Status::error(std::string("tensor '") + name +
                         "': the artifact wants " + rt::dtypeName(dtype) +
                         ", a float input cannot be passed as that");
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t> &bytes, DType dtype) {
  if (dtype == DType::F32) {
    std::vector<float> values(bytes.size() / 4);
    copyBytes(values.data(), bytes.data(), bytes.size());
    return values;
  }
  std::vector<uint16_t> bits(bytes.size() / 2);
  copyBytes(bits.data(), bytes.data(), bytes.size());
  return fromHalfBits(dtype == DType::BF16 ? DType::BF16 : DType::F16, bits);
}

const FloatTensor *floatInput(const SSDCase &c, const std::string &name) {
  const std::pair<const char *, const FloatTensor *> inputs[] = {
      {"x", &c.x},
      {"dt", &c.dt},
      {"A", &c.A},
      {"B", &c.B},
      {"C", &c.C},
      {"D", &c.D},
      {"z", &c.z},
      {"dt_bias", &c.dtBias},
      {"initial_states", &c.initialStates}};
  for (auto [key, t] : inputs)
    if (name == key)
      return t;
  return nullptr;
}
} // namespace

Expected<RunOutputs> ssd::runGPUBackend(const SSDCase &c,
                                        const rt::Artifact &artifact) {
  SSD_RT_RETURN_IF_ERROR(rt::usePrimaryContext(0));
  const rt::Manifest &m = artifact.manifest();
  std::map<std::string, DeviceTensor> tensors;
  rt::ArgumentMap args;

  auto upload = [&](const std::string &name, const std::vector<int64_t> &shape,
                    const std::vector<uint8_t> &bytes, DType dtype) -> Status {
    Expected<rt::DeviceBuffer> buffer =
        rt::DeviceBuffer::allocate(bytes.size());
    if (!buffer.ok())
      return buffer.status().withContext("tensor '" + name + "'");
    SSD_RT_RETURN_IF_ERROR(
        rt::copyToDevice(buffer->get(), bytes.data(), bytes.size()));
    DeviceTensor &t = tensors[name];
    t.buffer = buffer.take();
    t.dtype = dtype;
    t.shape = shape;
    args[name] = {t.buffer.get(), dtype, shape, {}, 0};
    return Status::success();
  };

  for (const std::string &name : c.inputNames()) {
    const rt::TensorSpec *spec = m.findTensor(name);
    if (!spec)
      return Status::error("the artifact takes no tensor '" + name +
                           "', which the case provides");
    if (const FloatTensor *f = floatInput(c, name)) {
      Expected<std::vector<uint8_t>> bytes = encode(f->data, spec->dtype, name);
      if (!bytes.ok())
        return bytes.status();
      SSD_RT_RETURN_IF_ERROR(upload(name, f->shape, *bytes, spec->dtype));
      continue;
    }
    const IntTensor &i = name == "seq_idx" ? c.seqIdx : c.cuSeqlens;
    if (spec->dtype != DType::I32)
      return Status::error("tensor '" + name + "': the artifact wants " +
                           rt::dtypeName(spec->dtype) + ", expected i32");
    std::vector<uint8_t> bytes(i.data.size() * 4);
    copyBytes(bytes.data(), i.data.data(), bytes.size());
    SSD_RT_RETURN_IF_ERROR(upload(name, i.shape, bytes, DType::I32));
  }
  for (auto [name, shape] :
       {std::pair<std::string, std::vector<int64_t>>{"y", c.tokenShape()},
        {"final_states", c.stateShape()}}) {
    const rt::TensorSpec *spec = m.findTensor(name);
    if (!spec)
      return Status::error("the artifact has no output '" + name + "'");
    size_t bytes = countOf(shape) * rt::dtypeBytes(spec->dtype);
    SSD_RT_RETURN_IF_ERROR(
        upload(name, shape, std::vector<uint8_t>(bytes, 0), spec->dtype));
  }

  SSD_RT_RETURN_IF_ERROR(artifact.launch(args, /*stream=*/nullptr));
  SSD_RT_RETURN_IF_ERROR(
      rt::deviceSynchronize().withContext("running " + artifact.origin()));

  RunOutputs out;
  for (auto [name, dest] :
       {std::pair<const char *, std::vector<float> *>{"y", &out.y},
        {"final_states", &out.finalStates}}) {
    DeviceTensor &t = tensors[name];
    std::vector<uint8_t> bytes(t.buffer.bytes());
    SSD_RT_RETURN_IF_ERROR(
        rt::copyToHost(bytes.data(), t.buffer.get(), bytes.size()));
    *dest = decode(bytes, t.dtype);
  }
  return out;
}
