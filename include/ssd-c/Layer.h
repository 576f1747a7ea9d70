/*===- ssd-c/Layer.h - compile and run whole SSD layers from C ----*- C -*-===*\
|*                                                                            *|
|* The layer-level entry points a framework binding needs (the PyTorch op of  *|
|* the Python package uses them through ctypes):                              *|
|*                                                                            *|
|*  - ssdCpuKernelCreate / ssdCpuKernelRun: compile a layer for the host CPU   *|
|*    once (the CPU pipeline, JIT through MLIR's ExecutionEngine; batch,      *|
|*    seqlen and the sequence count stay dynamic) and run it in process on    *|
|*    host buffers;                                                           *|
|*  - ssdLayerCompileArtifact: what ssd-compile does, into an artifact folder *|
|*    that ssd-c/Runtime.h loads and launches on a GPU;                       *|
|*  - ssdLayerReference: the project's independent reference recurrence (in   *|
|*    double precision), for tests.                                           *|
|*                                                                            *|
|* Functions that can fail return 0 on success; otherwise they return -1 and, *|
|* when `error` is not NULL, store a message there that the caller frees      *|
|* with ssdLayerFreeMessage. Nothing here aborts on bad input.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SSD_C_LAYER_H
#define SSD_C_LAYER_H

#include "ssd-c/Runtime.h" /* SsdRtDType */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a layer is specialised on: ssd-compile's layer flags. */
typedef struct SsdLayerSpec {
  int64_t nheads, headdim, dstate, ngroups, chunkSize;
  const char *dtype;      /* x, B, C, z and y: "f32", "bf16" or "f16" */
  const char *stateDtype; /* initial and final states: "f32" or "f16" */
  /* Comma list of ssd-compile --features (D, Dhp, z, dt_bias, softplus,
   * dt_limit, initial_states, seq_idx, varlen); NULL or "" for none. */
  const char *features;
  double dtLimitLo, dtLimitHi; /* read with the dt_limit feature */
} SsdLayerSpec;

/* A C-order (contiguous) host array. `name` is one of x, dt, A, B, C, D, z,
 * dt_bias, initial_states, seq_idx, cu_seqlens (inputs), y, final_states
 * (outputs). */
typedef struct SsdHostTensor {
  const char *name;
  void *data;
  SsdRtDType dtype;
  int32_t rank;
  const int64_t *shape;
} SsdHostTensor;

typedef struct SsdCpuKernelImpl *SsdCpuKernel;

void ssdLayerFreeMessage(char *message);

/* Checks `spec` as ssd-compile does (sizes, dtypes, features). */
int ssdLayerSpecValidate(const SsdLayerSpec *spec, char **error);

/* Compiles the layer for this CPU; `threads` > 0 runs the chunk loops on
 * that many threads (MLIR's async runtime), 0 on the calling thread. */
int ssdCpuKernelCreate(const SsdLayerSpec *spec, int32_t threads,
                       SsdCpuKernel *kernel, char **error);
void ssdCpuKernelDestroy(SsdCpuKernel kernel);

/* Runs the kernel. `tensors` holds every input the spec has and both
 * outputs, in any order; each is checked (presence, dtype, rank, every
 * dimension, cu_seqlens' values) before anything runs. The element types
 * are the layer's: dt, A, D and dt_bias f32, seq_idx and cu_seqlens i32. */
int ssdCpuKernelRun(SsdCpuKernel kernel, const SsdHostTensor *tensors,
                    size_t numTensors, char **error);

/* The artifact of ssd-compile --target TARGET --strategy STRATEGY -o OUTDIR
 * (NULL target: sm_90a; NULL strategy: fused). */
int ssdLayerCompileArtifact(const SsdLayerSpec *spec, const char *target,
                            const char *strategy, const char *outDir,
                            char **error);

/* The reference recurrence over the inputs in `tensors` (float inputs f32,
 * seq_idx and cu_seqlens i32; the spec's dtypes and chunk size are not
 * read). Writes y (shaped like x) and the final states ((b or num_seqs, h,
 * p, n)) in double, C order, into the caller's arrays. */
int ssdLayerReference(const SsdLayerSpec *spec, const SsdHostTensor *tensors,
                      size_t numTensors, double *y, double *finalStates,
                      char **error);

#ifdef __cplusplus
}
#endif

#endif /* SSD_C_LAYER_H */
