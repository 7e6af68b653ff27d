// What the server says about itself: readiness (/health) and facts
// (/props, /v1/models) recorded in run.json.
//
// Thread-safety: each call uses the transport it is given (one thread's);
// the results are plain values.
#ifndef EVALRUN_EVALS_SERVER_SERVER_INFO_H_
#define EVALRUN_EVALS_SERVER_SERVER_INFO_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/base/status.h"

namespace evalrun {

struct ServerProps {
  bool has_props = false;     // /props answered (llama-server)
  std::string build_info;
  std::string model_path;
  int n_ctx = 0;              // per slot, default_generation_settings.n_ctx
  int total_slots = 0;
  std::string chat_template_sha256;
  nlohmann::json models;      // /v1/models as returned (or null)

  nlohmann::json ToJson() const;
};

// Polls GET /health until 200; 503 means "loading" and is waited on up to
// `timeout_s`. A server that does not answer at all fails fast (after a few
// seconds) with Unavailable and a hint how to start one; a server without
// /health (404) counts as ready.
Status WaitUntilReady(HttpTransport* t, const ServerConfig& server, double timeout_s,
                      CancelToken* cancel, std::string* log);

// GET /props and /v1/models; missing endpoints leave fields empty. A reply
// nested past kMaxJsonDepth (json_bounds.h) is a ServerError naming the
// path; the strings and the /v1/models value kept are bounded in size
// (BoundedString, BoundedCopy), so run.json never copies a flood.
Status FetchServerProps(HttpTransport* t, const ServerConfig& server, ServerProps* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_SERVER_INFO_H_
