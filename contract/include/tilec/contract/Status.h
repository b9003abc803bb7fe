//===- Status.h - Error reporting without exceptions ------------*- C++ -*-===//
//
// Part of tilec_contract, the kernel contract (no LLVM, no CUDA).
//
// The compiler tools that link the runtime are built with -fno-exceptions, so
// every fallible runtime call returns a Status or a Result<T> that the caller
// checks. An error is a human-readable message that already names the call and
// the value that was wrong; callers add context by prefixing. It may also
// carry a kind, for callers that branch on what failed (the C API's status
// codes); the kind is set where the error is made and survives context.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_STATUS_H
#define TILEC_CONTRACT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace tilec {

// What an error is about, where a caller needs to know: most errors are
// Unspecified, and the caller picks what its context implies.
enum class ErrorKind {
  Unspecified,
  // The call's arguments are wrong (a dtype, a shape, a channel count).
  InvalidArgument,
  // The data is wrong (duplicate voxels, coordinates out of range).
  InvalidInput,
  // No GPU, or a driver call failed.
  Device,
  // A kernel is neither loaded nor compilable here: compiling failed, or no
  // compiler is allowed for a kernel a bundle lacks.
  Compile,
  // A config needs more of a block's resources (shared memory, registers)
  // than the target has: the compiler refuses it before ptxas, and a tuner
  // prunes it rather than reporting a failure.
  Resources,
};

class [[nodiscard]] Status {
public:
  // The default is success so that an empty Status costs no allocation on the
  // launch path.
  Status() = default;

  static Status success() { return Status(); }
  static Status error(std::string message) {
    return error(ErrorKind::Unspecified, std::move(message));
  }
  static Status error(ErrorKind kind, std::string message) {
    Status s;
    s.failed_ = true;
    s.kind_ = kind;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }
  ErrorKind kind() const { return kind_; }

  // Returns this error with `context` prepended ("context: message").
  Status withContext(const std::string &context) const {
    if (ok())
      return *this;
    return error(kind_, context + ": " + message_);
  }

private:
  bool failed_ = false;
  ErrorKind kind_ = ErrorKind::Unspecified;
  std::string message_;
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "a Result built from a Status must be an error");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }

  T &value() & {
    assert(ok() && "value() of a failed Result");
    return *value_;
  }
  const T &value() const & {
    assert(ok() && "value() of a failed Result");
    return *value_;
  }
  T &&value() && {
    assert(ok() && "value() of a failed Result");
    return std::move(*value_);
  }

  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace tilec

/// Returns `expr`'s Status from the enclosing function (which returns a
/// Status or a Result<T>) when it is an error: the one way the libraries
/// pass an error up unchanged. An error that needs context is returned
/// with status.withContext(...) instead.
#define TILEC_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    if (::tilec::Status tilecStatus_ = (expr); !tilecStatus_.ok())             \
      return tilecStatus_;                                                     \
  } while (false)

/// Declares `name` as the value of `expr` (a Result<T>), or returns its
/// Status from the enclosing function when it is an error.
#define TILEC_ASSIGN_OR_RETURN(name, expr)                                     \
  auto name##OrError_ = (expr);                                                \
  if (!name##OrError_)                                                         \
    return name##OrError_.status();                                            \
  auto name = std::move(*name##OrError_)

#endif // TILEC_CONTRACT_STATUS_H
