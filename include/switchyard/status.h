// Status and Result<T>: how every Switchyard module reports failure at its boundary.
// A Status is a value (code + message with context: file, node, knob); it owns its
// message. Both types are immutable after construction and safe to share across threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace switchyard {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: a model, a route, a file, a flag
  kNotFound,         // a named thing does not exist (file, input, value)
  kUnsupported,      // valid input we do not implement (op, dtype, attribute)
  kParseError,       // bytes that are not what they claim to be
  kIoError,          // the operating system refused a read or write
  kOutOfRange,       // sizes, limits and dimensions beyond what is allowed
  kFailedPrecondition,
  kInternal,         // our bug
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status ParseError(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "unsupported: op Foo ..." style text for people.
  std::string ToString() const;
  // Returns a copy whose message is prefixed by `context: `.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {      // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace switchyard

#define SY_CONCAT_INNER(a, b) a##b
#define SY_CONCAT(a, b) SY_CONCAT_INNER(a, b)

#define SY_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::switchyard::Status sy_status_ = (expr);     \
    if (!sy_status_.ok()) return sy_status_;      \
  } while (0)

#define SY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define SY_ASSIGN_OR_RETURN(lhs, expr) \
  SY_ASSIGN_OR_RETURN_IMPL(SY_CONCAT(sy_result_, __LINE__), lhs, expr)
