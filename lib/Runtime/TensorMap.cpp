//===- TensorMap.cpp - TMA descriptors of tensor arguments ----------------===//

#include "TensorMap.h"
#include "Driver.h"

#include <algorithm>

using namespace ssd::rt;

static CUtensorMapDataType tmaDataType(DType type) {
  switch (type) {
  case DType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case DType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case DType::I8:
  case DType::U8:
    // TMA has no signed byte type; a byte copy is the same bits.
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

Expected<TensorMapRequest>
ssd::rt::makeTensorMapRequest(const TensorMapSpec &spec,
                              const TensorSpec &tensor, const TensorArg &arg) {
  auto fail = [&](const std::string &what) {
    return Status::error("TMA descriptor of '" + tensor.name + "': " + what);
  };
  size_t rank = arg.shape.size();
  if (rank == 0 || rank > 5 || spec.box.size() != rank)
    return fail("rank " + std::to_string(rank) + " does not match the box");
  TensorMapRequest r;
  r.dataType = tmaDataType(arg.dtype);
  r.address = arg.devicePtr;
  uint64_t elem = dtypeBytes(arg.dtype);
  uint64_t addressAlign = spec.interleave == Interleave::B32 ? 32 : 16;
  if (reinterpret_cast<uintptr_t>(arg.devicePtr) % addressAlign)
    return fail("the address must be " + std::to_string(addressAlign) +
                "-byte aligned");
  std::vector<int64_t> strides = arg.strides;
  if (strides.empty()) {
    strides.assign(rank, 1);
    for (size_t i = rank; i-- > 1;)
      strides[i - 1] = strides[i] * std::max<int64_t>(arg.shape[i], 1);
  }
  if (arg.shape[rank - 1] > 1 && strides[rank - 1] != 1)
    return fail("the innermost stride must be 1, got " +
                std::to_string(strides[rank - 1]));
  for (size_t d = 0; d < rank; ++d) {
    if (arg.shape[d] < 1 || uint64_t(arg.shape[d]) > (uint64_t(1) << 32))
      return fail("dimension " + std::to_string(d) + " is " +
                  std::to_string(arg.shape[d]) + ", TMA needs 1 to 2^32");
    uint64_t bytes = uint64_t(strides[d]) * elem;
    if (d + 1 < rank && (bytes % 16 != 0 || bytes >= (uint64_t(1) << 40)))
      return fail("the stride of dimension " + std::to_string(d) + " is " +
                  std::to_string(bytes) +
                  " bytes; TMA needs a multiple of 16 below 2^40");
  }
  // The map's dimensions, outermost first: the tensor's, or with the
  // innermost read as panels, their index a dimension just outside
  // spec.panelDim whose box takes every panel.
  struct MapDim {
    int64_t size, stride, box, elementStride;
  };
  std::vector<MapDim> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(
        {arg.shape[d], strides[d], spec.box[d], spec.elementStrides[d]});
  if (spec.panelDim >= 0) {
    int64_t width = spec.box[rank - 1], inner = arg.shape[rank - 1];
    if (rank > 4 || size_t(spec.panelDim) + 1 >= rank)
      return fail("a panel dimension beside dimension " +
                  std::to_string(spec.panelDim) + " of a rank-" +
                  std::to_string(rank) +
                  " tensor: it needs rank 2 to 4 and an outer dimension");
    if (inner % width != 0 || inner / width > 256)
      return fail("the innermost dimension is " + std::to_string(inner) +
                  "; panels of " + std::to_string(width) +
                  " elements need 1 to 256 whole panels");
    dims.back().size = width;
    dims.insert(dims.begin() + spec.panelDim,
                {inner / width, width, inner / width, 1});
  }
  // The driver numbers dimensions innermost first.
  r.rank = cuuint32_t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const MapDim &dim = dims[dims.size() - 1 - i];
    r.globalDim[i] = cuuint64_t(dim.size);
    r.boxDim[i] = cuuint32_t(dim.box);
    r.elementStrides[i] = cuuint32_t(dim.elementStride);
    if (i > 0)
      r.globalStrides[i - 1] = cuuint64_t(uint64_t(dim.stride) * elem);
  }
  switch (spec.interleave) {
  case Interleave::None:
    r.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    break;
  case Interleave::B16:
    r.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    break;
  case Interleave::B32:
    r.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    break;
  }
  switch (spec.swizzle) {
  case Swizzle::None:
    r.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    break;
  case Swizzle::B32:
    r.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    break;
  case Swizzle::B64:
    r.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    break;
  case Swizzle::B128:
    r.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    break;
  }
  switch (spec.l2Promotion) {
  case L2Promotion::None:
    r.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    break;
  case L2Promotion::B64:
    r.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    break;
  case L2Promotion::B128:
    r.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    break;
  case L2Promotion::B256:
    r.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    break;
  }
  r.oobFill = spec.oobFill == OobFill::Zero
                  ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
                  : CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  return r;
}

Expected<CUtensorMap> ssd::rt::encodeTensorMap(const Driver &driver,
                                               const TensorMapRequest &r,
                                               const std::string &tensorName) {
  CUtensorMap map;
  CUresult result = driver.cuTensorMapEncodeTiled(
      &map, r.dataType, r.rank, r.address, r.globalDim, r.globalStrides,
      r.boxDim, r.elementStrides, r.interleave, r.swizzle, r.l2Promotion,
      r.oobFill);
  if (result != CUDA_SUCCESS)
    return driver.error(result, "cuTensorMapEncodeTiled for '" + tensorName +
                                    "' failed");
  return map;
}
