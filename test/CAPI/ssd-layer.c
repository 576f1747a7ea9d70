//===- ssd-layer.c - ssd-c/Layer.h end to end -----------------------------===//
//
// Compiles a small layer for the CPU through libSSDCAPI, runs it at two
// sequence lengths with the same kernel, checks both against the reference
// recurrence, and checks the errors of bad specs and bad tensors.
//
//===----------------------------------------------------------------------===//

/*
 RUN: %cc %s -std=c11 -Wall -Wextra -Werror -I%ssd_src_root/include \
 RUN:   -L%ssd_lib_dir -lSSDCAPI -lm -Wl,-rpath,%ssd_lib_dir -o %t
 RUN: %t 2>&1 | FileCheck %s
*/

#include "ssd-c/Layer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { H = 2, P = 4, N = 8, G = 1, MAXL = 40 };

static float x[MAXL * H * P], dt[MAXL * H], A[H] = {-0.5f, -1.5f};
static float B[MAXL * G * N], C[MAXL * G * N], y[MAXL * H * P], fs[H * P * N];
static double yRef[MAXL * H * P], fsRef[H * P * N];

static float noise(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void report(const char *what, int rc, char *error) {
  printf("%s: %s\n", what, rc == 0 ? "ok" : error);
  ssdLayerFreeMessage(error);
}

/* Runs the kernel and the reference at length L; prints the error. */
static void runAt(SsdCpuKernel kernel, const SsdLayerSpec *spec, int64_t L) {
  unsigned state = (unsigned)L;
  for (int i = 0; i < L * H * P; ++i)
    x[i] = noise(&state);
  for (int i = 0; i < L * H; ++i)
    dt[i] = 0.05f + 0.05f * noise(&state);
  for (int i = 0; i < L * G * N; ++i) {
    B[i] = noise(&state);
    C[i] = noise(&state);
  }
  int64_t xs[] = {1, L, H, P}, dts[] = {1, L, H}, as[] = {H},
          bs[] = {1, L, G, N}, fss[] = {1, H, P, N};
  SsdHostTensor tensors[] = {
      {"x", x, SSD_RT_F32, 4, xs},     {"dt", dt, SSD_RT_F32, 3, dts},
      {"A", A, SSD_RT_F32, 1, as},     {"B", B, SSD_RT_F32, 4, bs},
      {"C", C, SSD_RT_F32, 4, bs},     {"y", y, SSD_RT_F32, 4, xs},
      {"final_states", fs, SSD_RT_F32, 4, fss}};
  char *error = NULL;
  int rc = ssdCpuKernelRun(kernel, tensors, 7, &error);
  report("run", rc, error);
  error = NULL;
  rc = ssdLayerReference(spec, tensors, 5, yRef, fsRef, &error);
  report("reference", rc, error);
  double diff = 0, scale = 0;
  for (int i = 0; i < L * H * P; ++i) {
    diff = fmax(diff, fabs(y[i] - yRef[i]));
    scale = fmax(scale, fabs(yRef[i]));
  }
  printf("L=%d y within 1e-4: %s\n", (int)L, diff <= 1e-4 * scale ? "yes" : "no");

  /* A wrong length in B, then a wrong dtype: refused before running. */
  bs[1] = L - 1;
  error = NULL;
  rc = ssdCpuKernelRun(kernel, tensors, 7, &error);
  report("short B", rc, error);
  bs[1] = L;
  tensors[0].dtype = SSD_RT_BF16;
  error = NULL;
  rc = ssdCpuKernelRun(kernel, tensors, 7, &error);
  report("bf16 x", rc, error);
}

int main(void) {
  SsdLayerSpec spec = {H, P, N, G, 8, "f32", "f32", NULL, 0.0, INFINITY};
  SsdCpuKernel kernel = NULL;
  char *error = NULL;

  SsdLayerSpec bad = spec;
  bad.chunkSize = 24;
  int rc = ssdLayerSpecValidate(&bad, &error);
  report("chunk 24", rc, error);
  // CHECK: chunk 24: chunk_size 24 is not a power of two
  bad = spec;
  bad.features = "D,gate";
  error = NULL;
  rc = ssdCpuKernelCreate(&bad, 0, &kernel, &error);
  report("features", rc, error);
  // CHECK-NEXT: features: unknown feature 'gate'

  error = NULL;
  rc = ssdCpuKernelCreate(&spec, 0, &kernel, &error);
  report("create", rc, error);
  // CHECK-NEXT: create: ok
  runAt(kernel, &spec, 37);
  // CHECK-NEXT: run: ok
  // CHECK-NEXT: reference: ok
  // CHECK-NEXT: L=37 y within 1e-4: yes
  // CHECK-NEXT: short B: tensor 'B': shape (1, 36, 1, 8), expected (1, 37, 1, 8)
  // CHECK-NEXT: bf16 x: tensor 'x': dtype bf16, expected f32
  runAt(kernel, &spec, 5);
  // CHECK-NEXT: run: ok
  // CHECK-NEXT: reference: ok
  // CHECK-NEXT: L=5 y within 1e-4: yes
  ssdCpuKernelDestroy(kernel);
  return 0;
}
