// A small, readable result type (after LevelDB's Status).
//
// A Status is either ok() or carries a code and one message a person can act
// on: it names the file, the JSON path, the request or the field, and says
// what was expected. Functions that can fail return a Status and write their
// result through an out-pointer; nothing in evalrun throws across a module
// boundary.
//
// Thread-safety: a Status is a plain value.
#ifndef EVALRUN_EVALS_BASE_STATUS_H_
#define EVALRUN_EVALS_BASE_STATUS_H_

#include <string>
#include <utility>

namespace evalrun {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidInput,  // card, flags, dataset, recorded responses: the user's input
    kNotFound,      // a file or dataset that is not there
    kIoError,       // the file system said no
    kUnavailable,   // the server could not be reached or is not ready
    kServerError,   // the server answered, but not with a usable answer
    kTimeout,       // a deadline passed
    kCancelled,     // the run was interrupted
    kChanged,       // the server now serves another model or build than the run started with
    kInternal,      // a bug in evalrun
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string msg) { return Status(Code::kInvalidInput, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status ServerError(std::string msg) { return Status(Code::kServerError, std::move(msg)); }
  static Status Timeout(std::string msg) { return Status(Code::kTimeout, std::move(msg)); }
  static Status Cancelled(std::string msg) { return Status(Code::kCancelled, std::move(msg)); }
  static Status Changed(std::string msg) { return Status(Code::kChanged, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid input: cards/x.json: parts.<name>.max_tokens: expected ..."
  std::string ToString() const;

  // Returns a copy whose message is "<prefix>: <message>" (same code).
  Status Prefixed(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* CodeName(Status::Code code);

}  // namespace evalrun

#define EVALRUN_RETURN_IF_ERROR(expr)       \
  do {                                      \
    ::evalrun::Status _st = (expr);         \
    if (!_st.ok()) return _st;              \
  } while (0)

#endif  // EVALRUN_EVALS_BASE_STATUS_H_
