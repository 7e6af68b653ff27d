// Whether several endpoints behind one card serve the same thing: the
// model (path, and the ids of /v1/models, where llama-server's alias is),
// the build, the per-slot context and the chat template, as /props says
// (or /v1/models alone where that is all there is). Checked before any
// request (evals/run/server_start.cc); answers of two models or builds must
// not be mixed in one job unless the card says so (server.endpoints_differ).
//
// Thread-safety: pure functions over the facts given.
#ifndef EVALRUN_EVALS_SERVER_ENDPOINT_IDENTITY_H_
#define EVALRUN_EVALS_SERVER_ENDPOINT_IDENTITY_H_

#include <string>
#include <vector>

#include "evals/server/server_info.h"

namespace evalrun {

// One field that differs: its name and both values as text.
struct IdentityDifference {
  std::string field;
  std::string first, other;
};

// The fields in which `other` differs from `first` (empty: the same).
std::vector<IdentityDifference> EndpointIdentityDiff(const ServerProps& first, const ServerProps& other);

// "model_path (\"a\" vs \"b\"), n_ctx (\"128\" vs \"256\")".
std::string DescribeDifferences(const std::vector<IdentityDifference>& diffs);

// The served model ids of /v1/models, comma-separated ("" when none).
std::string ServedModelIds(const nlohmann::json& models);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_ENDPOINT_IDENTITY_H_
