//===- HostBuffer.cpp - host data behind a memref argument ----------------===//
#include "HostBuffer.h"
#include "Bytes.h"

#include "ssd/Support/FloatBits.h"

#include <cassert>

using namespace ssd;

HostBuffer::HostBuffer(const KernelArg &arg) : karg(arg), count(1) {
  for (int64_t dim : arg.shape)
    count *= dim;
  size_t bytes = count * dtypeBytes(arg.dtype);
  words.assign((bytes + 3) / 4 + 1, 0); // never empty: a valid pointer
  int64_t rank = arg.shape.size();
  desc.assign(3 + 2 * rank, 0);
  auto base = reinterpret_cast<intptr_t>(words.data());
  desc[0] = base; // allocated
  desc[1] = base; // aligned
  desc[2] = 0;    // offset
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc[3 + d] = arg.shape[d];
    desc[3 + rank + d] = stride;
    stride *= arg.shape[d];
  }
}

void HostBuffer::store(llvm::ArrayRef<float> values) {
  assert(static_cast<int64_t>(values.size()) == count && "size mismatch");
  if (karg.dtype == DType::F32) {
    copyBytes(words.data(), values.data(), count * sizeof(float));
    return;
  }
  std::vector<uint16_t> bits = toHalfBits(
      karg.dtype, std::vector<float>(values.begin(), values.end()));
  copyBytes(words.data(), bits.data(), count * sizeof(uint16_t));
}

void HostBuffer::store(llvm::ArrayRef<int32_t> values) {
  assert(karg.dtype == DType::I32 &&
         static_cast<int64_t>(values.size()) == count && "bad int buffer");
  copyBytes(words.data(), values.data(), count * sizeof(int32_t));
}

std::vector<float> HostBuffer::load() const {
  if (karg.dtype == DType::F32) {
    std::vector<float> values(count);
    copyBytes(values.data(), words.data(), count * sizeof(float));
    return values;
  }
  std::vector<uint16_t> bits(count);
  copyBytes(bits.data(), words.data(), count * sizeof(uint16_t));
  return fromHalfBits(karg.dtype, bits);
}
