// The seams between the HTTP client's files (evals/server only; callers use
// http.h). Standard types only, so that httplib_client.cc stays the only
// file that includes httplib.h:
//   socket_transport.cc  evalrun's own transport for http:// (sockets)
//   httplib_client.cc    the https:// transport, MakeHttpTransport and the
//                        whole-URL GETs along redirects (httplib)
//   http_url.cc          URL parsing and resolving
//   http_download.cc     HttpDownload: Range, resume, the file
//
// Thread-safety: as http.h: a transport belongs to one thread; each
// GetFollowing call opens its own connections, so calls may run at once.
#ifndef EVALRUN_EVALS_SERVER_HTTP_INTERNAL_H_
#define EVALRUN_EVALS_SERVER_HTTP_INTERNAL_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "evals/server/http.h"

namespace evalrun {
namespace http_internal {

// evalrun's own HTTP/1.1 transport over one kept-alive socket (http:// only).
std::unique_ptr<HttpTransport> MakeSocketTransport(const HttpUrl& origin, const std::string& bearer_token,
                                                   size_t max_reply_bytes);

// The status and headers of a GET's final (non-redirect) answer.
class ReplyHead {
 public:
  virtual ~ReplyHead() = default;
  virtual int status() const = 0;
  virtual bool HasHeader(const std::string& name) const = 0;
  // The header's (first) value, "" when absent. Names are case-insensitive.
  virtual std::string Header(const std::string& name) const = 0;
};

// One GET along its redirects. `on_response` sees the final (non-redirect)
// answer's status and headers and may refuse it (return false: the transfer
// stops, *refused is set); `on_data` gets its body and may stop it the same
// way. Returns "" when an answer came (whatever its status), else what went
// wrong; *not_connected when no connection could be made. *status /
// *final_url describe the last hop.
std::string GetFollowing(const std::string& url, const HttpHeaders& base_headers,
                         const std::string& bearer_token, double read_timeout_s,
                         const std::function<bool(const ReplyHead&)>& on_response,
                         const std::function<bool(const char*, size_t)>& on_data, int* status,
                         std::string* final_url, bool* refused, bool* not_connected);

}  // namespace http_internal
}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_HTTP_INTERNAL_H_
