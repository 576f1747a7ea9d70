//===- KernelCommon.h - pieces shared by the matrix-product kernels -*- C++ -*-===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_KERNELCOMMON_H
#define SSD_LIB_CONVERSION_SSDTOGPU_KERNELCOMMON_H

#include "Kernels.h"

namespace ssd {
namespace gpu_lowering {

inline int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Row/column tile edge for a dimension of size `size`: 64, or the size
/// rounded up to the 16 rows a thread-block tile is built from.
inline int64_t tileEdge(int64_t size) {
  return std::min<int64_t>(64, roundUp(size, 16));
}

/// K slice depth: 32, or 16 for short reductions.
inline int64_t tileDepth(int64_t k) { return k >= 32 ? 32 : 16; }

/// The element type the tensor cores multiply in, or null for SIMT.
inline Type mmaElementType(const SSDProblem &p) {
  if (!p.useMma || p.elementType.isF32())
    return Type();
  return p.elementType;
}

/// The token of position `pos` of a chunk (token 0 when it is padding, so
/// that it can always be loaded and then masked).
inline Value tokenAt(Emitter &e, const ChunkRange &r, Value pos) {
  return e.select(e.lt(pos, r.len), e.add(r.start, pos), e.idx(0));
}

/// Manifest list of the optional buffers among `names` that are present.
inline void addParams(KernelInfo &info, const SSDProblem &p,
                      std::initializer_list<llvm::StringRef> names,
                      bool workspace) {
  for (llvm::StringRef name : names)
    if (p.has(name))
      info.params.push_back({name.str(), workspace});
}

/// The chunk range of the block's chunk for the kernels that read tokens.
inline ChunkRange blockChunk(Emitter &e, const SSDProblem &p,
                             const KernelFunc &k, Value c, Value tokens,
                             Value chunked, int64_t chunkDim) {
  return chunkRange(e, p, c, e.dim(tokens, 1), e.dim(chunked, chunkDim),
                    k.has("cu_seqlens") ? k.arg("cu_seqlens") : Value());
}

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_KERNELCOMMON_H
