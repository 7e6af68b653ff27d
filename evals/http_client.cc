// The only file that includes httplib.h (cf. llama.cpp's server-http.h).
#include <httplib.h>

#include <chrono>

#include "evals/http.h"

namespace evalrun {
namespace {

class HttplibTransport : public HttpTransport {
 public:
  HttplibTransport(const std::string& origin, const std::string& token)
      : client_(origin), token_(token) {
    client_.set_keep_alive(true);
    client_.set_connection_timeout(10, 0);
    // Large answers (20 MB bodies) are fine; httplib buffers them.
  }

  HttpResponse Get(const std::string& path, double timeout_s) override {
    SetTimeouts(timeout_s);
    return Convert(client_.Get(path, Headers()));
  }

  HttpResponse Post(const std::string& path, const std::string& body, double timeout_s) override {
    SetTimeouts(timeout_s);
    return Convert(client_.Post(path, Headers(), body, "application/json"));
  }

 private:
  httplib::Headers Headers() const {
    httplib::Headers h;
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    return h;
  }

  void SetTimeouts(double timeout_s) {
    auto us = std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    client_.set_read_timeout(us);
    client_.set_write_timeout(us);
  }

  static std::string Describe(httplib::Error e) {
    switch (e) {
      case httplib::Error::Connection: return "could not connect (connection refused or host unreachable)";
      case httplib::Error::Read: return "connection closed or reset while reading the reply (or read timeout)";
      case httplib::Error::Write: return "connection closed while sending the request";
      case httplib::Error::ConnectionTimeout: return "connection timeout";
      case httplib::Error::SSLConnection: return "TLS connection failed";
      case httplib::Error::SSLServerVerification: return "TLS server certificate not trusted";
      default: return "HTTP transport error: " + httplib::to_string(e);
    }
  }

  static HttpResponse Convert(const httplib::Result& r) {
    HttpResponse out;
    if (!r) {
      out.error = Describe(r.error());
      return out;
    }
    out.status = r->status;
    out.body = r->body;
    return out;
  }

  httplib::Client client_;
  std::string token_;
};

}  // namespace

std::unique_ptr<HttpTransport> MakeHttpTransport(const std::string& origin,
                                                 const std::string& bearer_token) {
  return std::make_unique<HttplibTransport>(origin, bearer_token);
}

}  // namespace evalrun
