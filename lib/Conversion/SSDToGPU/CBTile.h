//===- CBTile.h - one tile of a chunk's CB = C B^T --------------*- C++ -*-===//
//
// The bmm building block shared by the unfused ssd_bmm kernel and the fused
// bmm item: a T x T tile (rows i0.., columns j0..) of the chunk's Q x Q
// matrix CB[i, j] = C_i . B_j, over dstate. Padding tokens load as zero
// rows, so their products are zero; with seq_idx the store zeroes pairs of
// tokens from different sequences.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_CBTILE_H
#define SSD_LIB_CONVERSION_SSDTOGPU_CBTILE_H

#include "TileMatmul.h"

namespace ssd {
namespace gpu_lowering {

/// Where the tile's rows come from.
struct CBTile {
  Value batch, group, c;
  ChunkRange r;
};

/// Rows first.. of `mat` (C or B, token-major) as tokens of the chunk, zero
/// past its end; with `vectors`, with 16-byte fills.
TileOperand cbRows(Emitter &e, const CBTile &t, Value mat, Value first,
                   bool vectors);

/// CB[i, j] = v (i, j chunk positions), zero across sequences with seq_idx.
void storeCB(Emitter &e, const KernelFunc &k, const CBTile &t, Value i,
             Value j, Value v);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_CBTILE_H
