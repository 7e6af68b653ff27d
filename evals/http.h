// The HTTP layer: the only interface through which evalrun talks to a server.
// http_client.cc is the only file that includes httplib.h.
#ifndef EVALRUN_EVALS_HTTP_H_
#define EVALRUN_EVALS_HTTP_H_

#include <functional>
#include <memory>
#include <string>

namespace evalrun {

struct HttpResponse {
  int status = 0;         // HTTP status; 0 when no response came (see error)
  std::string body;
  std::string error;      // transport failure ("connection refused", "read timeout"); empty otherwise
  bool transport_ok() const { return status > 0; }
};

// One keep-alive connection to one origin. Not thread-safe: each worker
// thread owns its own transport (a shared one would serialise requests).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // `path` is absolute ("/health", "/v1/chat/completions").
  virtual HttpResponse Get(const std::string& path, double timeout_s) = 0;
  virtual HttpResponse Post(const std::string& path, const std::string& json_body,
                            double timeout_s) = 0;
};

// `origin` is scheme://host[:port] (http or https). `bearer_token` may be
// empty. Never logs the token.
std::unique_ptr<HttpTransport> MakeHttpTransport(const std::string& origin,
                                                 const std::string& bearer_token);

// Creates transports to one origin; the pool asks for one per worker.
using TransportFactory = std::function<std::unique_ptr<HttpTransport>()>;

}  // namespace evalrun

#endif  // EVALRUN_EVALS_HTTP_H_
