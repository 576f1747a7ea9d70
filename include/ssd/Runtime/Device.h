//===- Device.h - Host-side CUDA helpers for tools and benchmarks -*- C++ -*-===//
//
// What a program that owns no framework needs around Artifact::launch: a
// current context (the device's primary context), device buffers, copies
// and event timing. Resolved from the same dynamically loaded driver as the
// rest of the runtime, so a program using these still starts on machines
// without a GPU and fails only when it asks for one.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_DEVICE_H
#define SSD_RUNTIME_DEVICE_H

#include "ssd/Runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ssd::rt {

/// Makes `device`'s primary context current on the calling thread
/// (retaining it for the life of the process).
Status usePrimaryContext(int device = 0);

/// "NVIDIA H200" and the like, for the current device.
Expected<std::string> currentDeviceName();

/// Device memory; null on size 0.
Expected<void *> deviceAlloc(size_t bytes);
void deviceFree(void *ptr);
Status copyToDevice(void *dst, const void *src, size_t bytes);
Status copyToHost(void *dst, const void *src, size_t bytes);
Status deviceMemset(void *dst, uint8_t value, size_t bytes);
/// Waits for all work of the current context.
Status deviceSynchronize();

/// A device buffer freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(ptr, other.ptr);
    std::swap(size, other.size);
    return *this;
  }
  ~DeviceBuffer() { deviceFree(ptr); }

  static Expected<DeviceBuffer> allocate(size_t bytes) {
    Expected<void *> p = deviceAlloc(bytes);
    if (!p.ok())
      return p.status();
    DeviceBuffer b;
    b.ptr = *p;
    b.size = bytes;
    return b;
  }
  void *get() const { return ptr; }
  size_t bytes() const { return size; }

private:
  void *ptr = nullptr;
  size_t size = 0;
};

/// A CUDA event pair measuring device time on a stream.
class EventTimer {
public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;

  /// Creates the events (once); call before start().
  Status init();
  Status start(void *stream = nullptr);
  Status stop(void *stream = nullptr);
  /// Milliseconds between start and stop (waits for stop).
  Expected<float> elapsedMs();

private:
  void *begin = nullptr;
  void *end = nullptr;
};

/// Work recorded once on a stream of its own and replayed as CUDA graphs:
/// each replay runs a call's work (workspace zeroing, descriptor copies,
/// kernels) back to back on the device, without the host's launch work in
/// between, as a framework replaying a captured model does.
class GraphReplay {
public:
  GraphReplay();
  ~GraphReplay();
  GraphReplay(const GraphReplay &) = delete;
  GraphReplay &operator=(const GraphReplay &) = delete;

  /// Creates the stream (once); call before record().
  Status init();
  void *stream() const { return streamHandle; }
  /// Captures what `enqueue` puts on stream() as graph number size().
  Status record(const std::function<Status(void *stream)> &enqueue);
  size_t size() const { return execs.size(); }
  /// Launches graph `i` on stream().
  Status replay(size_t i);

private:
  void *streamHandle = nullptr;
  std::vector<void *> graphs, execs;
};

} // namespace ssd::rt

#endif // SSD_RUNTIME_DEVICE_H
