// The HTTP layer: the only interface through which evalrun talks to a server.
// httplib_client.cc is the only file that includes httplib.h.
//
// Thread-safety: a transport belongs to one thread; the whole-URL calls
// below share nothing and may run at once.
#ifndef EVALRUN_EVALS_SERVER_HTTP_H_
#define EVALRUN_EVALS_SERVER_HTTP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

struct HttpResponse {
  int status = 0;         // HTTP status; 0 when no response came (see error)
  std::string body;
  std::string error;      // transport failure ("connection refused", "read timeout"); empty otherwise
  // HttpGetUrl: no connection could be made at all (the host name did not
  // resolve, or connecting was refused, unreachable or timed out): nothing
  // was sent, and trying again at once will not help.
  bool not_connected = false;
  // The reply's Retry-After header as sent ("5"), "" when absent.
  std::string retry_after;
  bool transport_ok() const { return status > 0; }
};

// One keep-alive connection to one origin. Not thread-safe: each worker
// thread owns its own transport (a shared one would serialise requests).
//
// A reply belongs to its request (http://, evalrun's own reader,
// http_reply.h): the kept connection carries a new request only when
// nothing is waiting on it (bytes nobody asked for, or the server's
// close: then a new connection is made); a reply that is not exactly one
// well-formed reply, or that is followed by more bytes, is a failure
// (status 0, `error` says which) and its connection is closed. Over
// https:// (httplib) only the first half holds: bytes pending in the
// socket before a request close the connection, but bytes after a reply
// that came in the same read are not seen.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // `path` is absolute ("/health", "/v1/chat/completions"). `timeout_s`
  // bounds the whole exchange (connect excepted): a reply still arriving
  // after it is a failure ("no complete reply within ..."), as is one
  // larger than the transport's reply limit; both name the limit.
  virtual HttpResponse Get(const std::string& path, double timeout_s) = 0;
  virtual HttpResponse Post(const std::string& path, const std::string& json_body,
                            double timeout_s) = 0;
  // As Post, but a 2xx reply's body is handed to `on_piece` as it is read
  // (de-chunked, in order, pieces of any size) and not kept: the returned
  // body is empty. on_piece returning false stops reading and closes the
  // connection (status kept, error "stopped by the reader"). Any other
  // status keeps its body whole, as Post does. `timeout_s` bounds the whole
  // exchange, and the reply limit holds over all the pieces together. The
  // integrity rules of Post hold: a reply found bad after some pieces were
  // handed over (cut short, followed by more bytes, over the limit) is still
  // a failure (status 0, `error` set), so the caller must not trust what it
  // was handed unless the call succeeded. The default (for transports that
  // cannot stream: fakes) posts and hands the whole body over in one piece.
  virtual HttpResponse PostStreamed(const std::string& path, const std::string& json_body, double timeout_s,
                                    const std::function<bool(std::string_view piece)>& on_piece) {
    HttpResponse r = Post(path, json_body, timeout_s);
    if (r.status >= 200 && r.status < 300) {
      if (!on_piece(r.body)) r.error = "stopped by the reader";
      r.body.clear();
    }
    return r;
  }
  // Connections opened so far (0 before the first request). A request that
  // raised it after the first one went over a new connection: the server
  // closed the old one (idle, its request limit) or was restarted.
  virtual int connections_opened() const { return 0; }
  // Closes the kept connection (the next request opens another): a reply
  // was found not to be this request's, so what follows on it is not either.
  virtual void DropConnection() {}
  // `hook` (may be empty) is called on the calling thread the moment a
  // request's last byte has been written to the socket, after any connect:
  // a streamed request's clock starts there (stream.h). evalrun's own
  // http:// transport calls it; the others (https, fakes) never do.
  void SetRequestSentHook(std::function<void()> hook) { sent_hook_ = std::move(hook); }

 protected:
  void RequestSent() const {
    if (sent_hook_) sent_hook_();
  }

 private:
  std::function<void()> sent_hook_;
};

// The largest reply body a transport takes by default (256 MiB): a larger
// one is cut off and the request fails, so that a broken server cannot fill
// the memory.
inline constexpr size_t kDefaultMaxReplyBytes = size_t{256} << 20;

// `origin` is scheme://host[:port] (http or https). `bearer_token` may be
// empty. Never logs the token.
std::unique_ptr<HttpTransport> MakeHttpTransport(const std::string& origin,
                                                 const std::string& bearer_token,
                                                 size_t max_reply_bytes = kDefaultMaxReplyBytes);

// Creates transports to one origin; the pool asks for one per worker.
using TransportFactory = std::function<std::unique_ptr<HttpTransport>()>;

// ---------------------------------------------------------------------------
// Whole-URL requests for downloads (`evalrun datasets fetch`). Each call
// opens its own connection(s): no state is shared, so concurrent calls are
// safe. http and https (OpenSSL; the server certificate is verified against
// the system's trust store, or $SSL_CERT_FILE / $SSL_CERT_DIR). Redirects
// (301, 302, 303, 307, 308) are followed, at most 10, relative Locations
// included. A bearer token is sent only to the host (and port) of the URL
// given, never to a redirect target elsewhere (GitHub and Hugging Face
// redirect to CDNs with signed URLs). Tokens are never logged or put in a
// message. Timeouts: 15 s to connect, 60 s without a byte while reading.

// An absolute http(s) URL, split. `path` keeps the query ("/rows?x=1") and is
// "/" when the URL has none.
struct HttpUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // "127.0.0.1", "datasets-server.huggingface.co"
  int port = 0;        // explicit or the scheme's default
  std::string path;
  std::string Origin() const;  // "https://host" ("http://host:8080" when not the default port)
};

// False (and *out unspecified) unless `url` is http:// or https:// with a host.
bool ParseHttpUrl(const std::string& url, HttpUrl* out);

// Resolves a Location header against the URL that answered it (absolute,
// scheme-relative "//host/x", absolute path "/x" or relative "x").
std::string ResolveLocation(const HttpUrl& base, const std::string& location);

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// GETs `url` and returns the final answer after redirects: its status and
// body whatever the status (an error page is a result, not a failure), or
// status 0 with `error` set when no answer came (connection, TLS, timeout,
// too many redirects, bad URL; `not_connected` when no connection could be
// made, and then `error` says whether the name did not resolve).
// `timeout_s` bounds each read, not the whole transfer.
HttpResponse HttpGetUrl(const std::string& url, const HttpHeaders& headers,
                        const std::string& bearer_token, double timeout_s);

// What HttpDownload did, for the caller's report.
struct HttpDownloadInfo {
  int status = 0;            // final HTTP status (200, 206, 416, 404, ...); 0 if none came
  bool resumed = false;      // the server honoured the Range request (206)
  int64_t bytes_written = 0; // written by this call
  int64_t file_size = 0;     // size of dest_path afterwards
  int64_t total = -1;        // full size when the server said it, else -1
  std::string final_url;     // after redirects
  bool not_connected = false;  // as HttpResponse::not_connected (the status is then Unavailable)
};

// Called as bytes arrive: `got` counts the whole file (resumed prefix
// included), `total` is -1 when unknown. Runs on the calling thread.
using DownloadProgress = std::function<void(int64_t got, int64_t total)>;

// Downloads `url` into `dest_path` (the caller's ".part" file; its folder
// must exist), sending "Accept-Encoding: identity" so that byte ranges mean
// file bytes.
//   resume_from == 0: the file is created or truncated and written whole.
//   resume_from > 0:  "Range: bytes=<resume_from>-" is sent. A 206 whose
//     Content-Range starts there appends to the first resume_from bytes of
//     the file (anything after them is cut); a 200 (server without ranges)
//     rewrites the file from the start; a 416 whose Content-Range says the
//     file is exactly resume_from bytes long means it was already complete
//     (Ok, nothing written); any other 416 restarts from byte 0 once.
// Success: the body was received in full (the length the server announced)
// and flushed to dest_path. Failure, with a message naming the URL:
//   Unavailable  no answer, or the connection broke (what arrived is kept in
//                dest_path, so the caller can resume);
//   ServerError  an HTTP status other than 200/206 (the message has the
//                status and, unless it is an HTML page, the start of the
//                body), or a 206 for another range;
//   IoError      dest_path could not be written (named);
//   InvalidInput not an http(s) URL.
// `info` (may be null) is filled in either case. `progress` may be empty.
Status HttpDownload(const std::string& url, const std::string& dest_path, int64_t resume_from,
                    const std::string& bearer_token, const DownloadProgress& progress,
                    HttpDownloadInfo* info);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_HTTP_H_
