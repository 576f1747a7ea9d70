/*===- ssd-c/Runtime.h - C interface of the SSD runtime -----------*- C -*-===*\
|*                                                                            *|
|* Loads an artifact (kernels.cubin + manifest.json) and launches it on a     *|
|* CUDA stream after checking every tensor against the manifest. Functions    *|
|* that can fail return an SsdRtError: NULL on success, otherwise a handle    *|
|* whose message says what failed; release it with ssdRtErrorDestroy.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SSD_C_RUNTIME_H
#define SSD_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SsdRtArtifactImpl *SsdRtArtifact;
typedef struct SsdRtErrorImpl *SsdRtError;

typedef enum SsdRtDType {
  SSD_RT_F32 = 0,
  SSD_RT_F16 = 1,
  SSD_RT_BF16 = 2,
  SSD_RT_F64 = 3,
  SSD_RT_I8 = 4,
  SSD_RT_U8 = 5,
  SSD_RT_I32 = 6,
  SSD_RT_I64 = 7,
} SsdRtDType;

/* A tensor in device memory. `strides` (in elements) may be NULL for a
 * contiguous tensor. */
typedef struct SsdRtTensor {
  const char *name; /* "x", "dt", ..., as in the manifest */
  void *data;
  SsdRtDType dtype;
  int32_t rank;
  const int64_t *shape;
  const int64_t *strides;
  int32_t device;
} SsdRtTensor;

const char *ssdRtErrorGetMessage(SsdRtError error);
void ssdRtErrorDestroy(SsdRtError error);

/* Reads `dir`/manifest.json and `dir`/kernels.cubin; needs no GPU. */
SsdRtError ssdRtArtifactLoad(const char *dir, SsdRtArtifact *artifact);
void ssdRtArtifactDestroy(SsdRtArtifact artifact);

size_t ssdRtArtifactGetNumKernels(SsdRtArtifact artifact);
const char *ssdRtArtifactGetKernelName(SsdRtArtifact artifact, size_t index);
/* The target the cubin was compiled for, e.g. "sm_90a". */
const char *ssdRtArtifactGetTarget(SsdRtArtifact artifact);

/* Workspace bytes a launch with these tensors needs on the current device.
 * Checks the tensors and prepares the launch as ssdRtArtifactLaunch does,
 * so that the launch which follows finds that work done. */
SsdRtError ssdRtArtifactGetWorkspaceSize(SsdRtArtifact artifact,
                                         const SsdRtTensor *tensors,
                                         size_t numTensors, uint64_t *bytes);

/* Launches on `stream` (a CUstream; NULL is the default stream) in the
 * current context. `workspace` may be NULL: the launch then allocates it on
 * the stream. The checks and the preparation of the artifact's last 256
 * tensor sets (the same pointers, dtypes, shapes and strides in the same
 * context) are kept: a repeat only checks the workspace and enqueues. */
SsdRtError ssdRtArtifactLaunch(SsdRtArtifact artifact,
                               const SsdRtTensor *tensors, size_t numTensors,
                               void *stream, void *workspace,
                               uint64_t workspaceBytes);

#ifdef __cplusplus
}
#endif

#endif /* SSD_C_RUNTIME_H */
