// Watching the server during a run: it may go away (killed, restarted) and
// come back, and when it comes back it must still serve what the run began
// with, or two models' answers would be mixed in one job.
//
// The request pool calls a ServerWatch (evals/run/request_pool.h): AwaitRecovery
// after a request found no server, CheckSame after every answer that came
// over a new connection (a restarted server is only reached over a new one).
//
// Thread-safety: a watch serialises its calls; any thread may ask it.
#ifndef EVALRUN_EVALS_SERVER_SERVER_WATCH_H_
#define EVALRUN_EVALS_SERVER_SERVER_WATCH_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "evals/base/cancel.h"
#include "evals/base/clock.h"
#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/server/server_info.h"
#include "evals/base/status.h"

namespace evalrun {

class ServerWatch {
 public:
  virtual ~ServerWatch() = default;
  // Waits until the server answers again, then CheckSame(). Ok: go on
  // (*was_down: whether it was down at all: false when it answered the
  // first check at once, so the failure was the request's own).
  // Unavailable: it did not come back within the wait; Changed: it came
  // back serving something else; Cancelled.
  virtual Status AwaitRecovery(CancelToken* cancel, bool* was_down) = 0;
  // Ok while the server serves the model, build and chat template the run
  // started with; Changed (naming both) otherwise. Thread-safe.
  virtual Status CheckSame() = 0;
};

// Over HTTP: GET /health every 0.5 s for up to `ready_timeout_s` (a refused
// connection and 503 are both waited on), then GET /props (or /v1/models
// where there is no /props) compared with `expected` on model_path,
// build_info and chat_template_sha256 (or the model ids). `log` (may be
// empty) gets one line when the wait begins and one when it ends. The wait
// is timed and slept on `clock` (tests give a FakeClock).
// Thread-safe: calls are serialised.
class HttpServerWatch : public ServerWatch {
 public:
  HttpServerWatch(TransportFactory transports, ServerConfig server, ServerProps expected,
                  double ready_timeout_s, std::function<void(const std::string&)> log,
                  Clock* clock = RealClock::Default());
  Status AwaitRecovery(CancelToken* cancel, bool* was_down) override;
  Status CheckSame() override;

 private:
  Status CheckSameLocked();
  TransportFactory transports_;
  ServerConfig server_;
  ServerProps expected_;
  double ready_timeout_s_;
  std::function<void(const std::string&)> log_;
  Clock* clock_;
  std::mutex mu_;
  std::unique_ptr<HttpTransport> t_;
};

// What differs between two /props readings that must not differ within one
// run ("model_path: a -> b; build_info: x -> y"), "" when nothing does.
std::string ServerIdentityDiff(const ServerProps& before, const ServerProps& now);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_SERVER_WATCH_H_
