//===- Status.h - Error values of the artifact and runtime ------*- C++ -*-===//
//
// The artifact library, the runtime and the host support code report every
// failure as a value: a Status (ok or a message) or an Expected<T> (a T or a
// message). No exceptions cross their interfaces, so embedders built with
// -fno-exceptions can use them.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_ARTIFACT_STATUS_H
#define SSD_ARTIFACT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace ssd::artifact {

/// Success, or a human-readable message saying what failed and why.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }

  bool ok() const { return !failed; }
  const std::string &message() const { return msg; }

  /// Prefixes the message with where the failure happened ("x: ...").
  Status withContext(const std::string &context) const {
    return ok() ? *this : error(context + ": " + msg);
  }

private:
  Status() = default;
  bool failed = false;
  std::string msg;
};

/// A value of type T, or the Status saying why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : val(std::move(value)), st(Status::success()) {}
  Expected(Status error) : st(std::move(error)) {
    assert(!st.ok() && "an Expected without a value needs an error");
  }

  bool ok() const { return val.has_value(); }
  const Status &status() const { return st; }
  const std::string &message() const { return st.message(); }

  T &operator*() { return *val; }
  const T &operator*() const { return *val; }
  T *operator->() { return &*val; }
  const T *operator->() const { return &*val; }
  T take() { return std::move(*val); }

private:
  std::optional<T> val;
  Status st;
};

} // namespace ssd::artifact

/// Returns the error of a Status-valued expression from the enclosing
/// function; the enclosing function returns Status or Expected<...>.
#define SSD_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::ssd::artifact::Status ssdStatus_ = (expr);                               \
    if (!ssdStatus_.ok())                                                      \
      return ssdStatus_;                                                       \
  } while (false)

#endif // SSD_ARTIFACT_STATUS_H
