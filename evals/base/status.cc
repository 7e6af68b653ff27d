#include "evals/base/status.h"

namespace evalrun {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidInput: return "invalid input";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kIoError: return "I/O error";
    case Status::Code::kUnavailable: return "server unavailable";
    case Status::Code::kServerError: return "server error";
    case Status::Code::kTimeout: return "timeout";
    case Status::Code::kCancelled: return "cancelled";
    case Status::Code::kChanged: return "server changed";
    case Status::Code::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace evalrun
