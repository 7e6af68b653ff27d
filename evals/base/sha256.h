// SHA-256 of bytes and of files, as lower-case hex (OpenSSL's EVP).
//
// Thread-safety: each call has its own digest context; concurrent calls are safe.
#ifndef EVALRUN_EVALS_BASE_SHA256_H_
#define EVALRUN_EVALS_BASE_SHA256_H_

#include <string>
#include <string_view>

#include "evals/base/status.h"

namespace evalrun {

std::string Sha256Hex(std::string_view bytes);

// Streams the file; the Status names the path when it cannot be read.
Status Sha256File(const std::string& path, std::string* hex);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_SHA256_H_
