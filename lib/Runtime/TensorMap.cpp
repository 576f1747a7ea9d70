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
  r.rank = cuuint32_t(rank);
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
  // The driver numbers dimensions innermost first.
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i;
    if (arg.shape[d] < 1 || uint64_t(arg.shape[d]) > (uint64_t(1) << 32))
      return fail("dimension " + std::to_string(d) + " is " +
                  std::to_string(arg.shape[d]) + ", TMA needs 1 to 2^32");
    r.globalDim[i] = cuuint64_t(arg.shape[d]);
    r.boxDim[i] = cuuint32_t(spec.box[d]);
    r.elementStrides[i] = cuuint32_t(spec.elementStrides[d]);
    if (i == 0)
      continue;
    uint64_t bytes = uint64_t(strides[d]) * elem;
    if (bytes % 16 != 0 || bytes >= (uint64_t(1) << 40))
      return fail("the stride of dimension " + std::to_string(d) + " is " +
                  std::to_string(bytes) +
                  " bytes; TMA needs a multiple of 16 below 2^40");
    r.globalStrides[i - 1] = cuuint64_t(bytes);
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
