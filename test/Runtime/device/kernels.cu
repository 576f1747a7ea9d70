// Kernels of the runtime's device smoke test: y = 3x + 1, computed so that
// every launch feature of the runtime is exercised and verified on the GPU.
//   scale2      pointer and i64 scalar parameters:       y = 2x
//   tma_add1    by-value TMA descriptor (128B swizzle), a 2-block cluster,
//               dynamic shared memory, a zeroed workspace: y += x + 1
//   check_count reads the workspace counter; a wrong count poisons y[0]
// Build: nvcc -cubin -arch=sm_90a -o kernels.cubin kernels.cu

#include <cstdint>
#include <cuda.h>

namespace {
// Shapes the manifest fixes: x, y are [b, L, kH, kP] f32; a TMA box is
// [1, kTileL, kH, kP].
constexpr int kH = 4;
constexpr int kP = 32;
constexpr int kTileL = 16;
constexpr unsigned kTileBytes = kTileL * kH * kP * sizeof(float);

__device__ unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Byte offset of element (row, p) in a tile of 128-byte rows written by TMA
// with 128B swizzle: the 16-byte chunk index is XORed with row % 8.
__device__ unsigned swizzled128(unsigned row, unsigned p) {
  unsigned chunk = (p / 4) ^ (row % 8);
  return row * 128 + chunk * 16 + (p % 4) * 4;
}
} // namespace

extern "C" __global__ void scale2(const float *__restrict__ x,
                                  float *__restrict__ y, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}

extern "C" __global__ void tma_add1(const __grid_constant__ CUtensorMap xMap,
                                    float *y, unsigned *counter, int L) {
  // The swizzle pattern repeats every 1024 bytes: align the tile to it.
  extern __shared__ unsigned char dynamicShared[];
  unsigned char *tile = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<uintptr_t>(dynamicShared) + 1023) & ~uintptr_t(1023));
  __shared__ alignas(8) uint64_t barrier;

  int l0 = blockIdx.x * kTileL;
  int batch = blockIdx.y;
  unsigned bar = sharedAddress(&barrier);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    // Make the initialised barrier visible to the TMA unit.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
        "r"(kTileBytes)
        : "memory");
    // Coordinates innermost first: p, h, l, batch. Rows past L read zeros.
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::
            "r"(sharedAddress(tile)),
        "l"(&xMap), "r"(0), "r"(0), "r"(l0), "r"(batch), "r"(bar)
        : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(bar)
                 : "memory");

  for (unsigned i = threadIdx.x; i < kTileL * kH * kP; i += blockDim.x) {
    unsigned row = i / kP, p = i % kP; // row = l_local * kH + h
    int l = l0 + static_cast<int>(row / kH);
    int h = static_cast<int>(row % kH);
    if (l >= L)
      continue;
    float v = *reinterpret_cast<const float *>(tile + swizzled128(row, p));
    y[((static_cast<long long>(batch) * L + l) * kH + h) * kP + p] += v + 1.0f;
  }

  if (threadIdx.x == 0) {
    unsigned clusterBlocks;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(clusterBlocks));
    // A launch without the 2-block cluster shows up as a wrong count.
    atomicAdd(counter, clusterBlocks == 2 ? 1u : 1000u);
  }
}

extern "C" __global__ void check_count(const unsigned *counter, int expected,
                                       float *y, long long n) {
  if (n > 0 && *counter != static_cast<unsigned>(expected))
    y[0] = __int_as_float(0x7fc00000);
}
