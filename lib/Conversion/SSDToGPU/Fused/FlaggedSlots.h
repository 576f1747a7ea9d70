//===- FlaggedSlots.h - state slots that carry their own flags -*- C++ -*-===//
//
// With KernelConfig::flaggedSlots the turn chain's ring of state slots holds
// one 8-byte word per state element: the f32 value in the low half and, in
// the high half, the flag of the state it belongs to (c + 1 for the state at
// the start of chunk c, so that the two states a ring slot holds in turn
// never share a flag). A word is one single-copy-atomic access (a relaxed
// 64-bit load or store at device scope), so a reader that sees the flag it
// waits for sees the value stored with it: a chain step reads its
// predecessor's state word by word as it lands, with no counter, no block
// barrier and no device fence between the two steps (the fenced hand-off
// costs three round trips to L2 per step: the fence's wait for the stores,
// the counter's poll, the loads after it).
// A launch's init items write slot 0 (flag 1) and clear slot 1 (flag 0)
// before they release the turn counter (1), and every reader acquires that
// counter first: no word a previous launch left in the workspace can pass
// for this launch's.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FLAGGEDSLOTS_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FLAGGEDSLOTS_H

#include "../Emit.h"

namespace ssd {
namespace gpu_lowering {
namespace fused {

/// The accesses below take a word's pointer from globalElementPointer
/// (Sync.h) on the i64 slots.

/// Stores the word (value, flag) with a relaxed 64-bit store at device
/// scope; `value` an f32, `flag` an index.
void storeFlagged(Emitter &e, Value ptr, Value value, Value flag);

/// Spins (relaxed 64-bit loads at device scope, kSpinSleepNs between
/// polls) until the word's flag is `flag`, and returns its value (f32).
/// `first`, when given, is a word already loaded from `ptr`: its check
/// comes first, so that a caller can issue its loads together.
Value awaitFlagged(Emitter &e, Value ptr, Value flag, Value first = {});

/// A relaxed 64-bit load at device scope (the word, an i64).
Value loadFlaggedWord(Emitter &e, Value ptr);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_FLAGGEDSLOTS_H
