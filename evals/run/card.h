// The card: one JSON file that describes a setup (endpoint, model, engine,
// slots, sampling, thinking switch, and per-part limits and counts).
// cards/README.md documents every field; keep the two in step.
//
// LoadCard() parses and validates the whole card up front. Every error names
// the file and the JSON path, with "did you mean" for near misses. Paths in
// the card are resolved relative to the card's folder.
#ifndef EVALRUN_EVALS_RUN_CARD_H_
#define EVALRUN_EVALS_RUN_CARD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/card_keys.h"

namespace evalrun {

// One server of several behind one card (server.endpoints).
struct EndpointConfig {
  std::string base_url;
  int slots = 0;                 // 0 = "auto"
  std::string api_key_env;
};

struct ServerConfig {
  std::string base_url;          // OpenAI base, e.g. http://127.0.0.1:8080/v1
  std::string model;             // sent as "model" when not empty
  int slots = 0;                 // 0 = "auto": total_slots from GET /props
  std::string api_key_env;       // name of the variable that holds the token
  double ready_timeout_s = 600;  // wait on /health while it answers 503
  int retries = 3;               // further attempts after a failed one
  double connect_timeout_s = 10;
  // Per-request timeout = base + max_tokens / min_decode_tps (never flat).
  double request_timeout_base_s = 120;
  double min_decode_tps = 2.0;
  std::vector<std::string> command;  // engine argv template (managed engine)
  int64_t context = 0;               // {context} of the managed engine for the parts (not fit)
  double stop_grace_s = 10;
  // Whether the slots share one KV cache ("auto", "shared", "per_slot")
  // and, when shared, its size (0: GET /props n_ctx). evals/server/kv_capacity.h.
  std::string kv_cache = "auto";
  int64_t kv_cache_tokens = 0;
  int max_reply_mb = 256;            // a larger reply is cut off: that request fails
  // server.endpoints: several servers that serve the same model, one pool
  // (evals/run/request_pool.h); the other fields apply to all. Empty: the
  // one at base_url. When given, base_url, slots and api_key_env above are
  // the first endpoint's.
  std::vector<EndpointConfig> endpoints;
  // server.endpoints_differ: the endpoints serve different builds (or
  // models) on purpose; the identity check before the run then only notes
  // the differences, and every sample records its endpoint.
  bool endpoints_differ = false;

  size_t EndpointCount() const { return endpoints.empty() ? 1 : endpoints.size(); }
  // This config as endpoint k's alone (its base_url, slots, api_key_env;
  // no endpoints list).
  ServerConfig ForEndpoint(size_t k) const;

  // scheme://host:port of base_url, and the path prefix ("/v1").
  std::string Origin() const;
  std::string PathPrefix() const;
};

struct SamplingConfig {
  double temperature = 0.0;
  int top_k = 1;
  double top_p = 1.0;
  int64_t seed = 42;
};

// One part of the card: its name and its settings, read through the keys
// the part declares (evals/run/card_keys.h); the card parser rejects others.
struct PartConfig {
  std::string name;
  PartSettings settings;
};

struct LoadSamplingConfig {
  double interval_s = 10;
  double threshold_pct = 25;
  int top = 5;
  std::vector<std::string> ignore;
  bool guard = false;
  double guard_max_wait_s = 600;
};

struct HardwareConfig {
  std::optional<int> gpu_index;
  std::string gpu_uuid;
};

struct Card {
  std::string path;            // as given
  std::string dir;             // its folder (relative paths resolve here)
  std::string text;            // the bytes as read (copied into run.json)
  std::string sha256;

  std::string name;
  nlohmann::json model = nlohmann::json::object();
  nlohmann::json engine = nlohmann::json::object();
  nlohmann::json hardware_raw = nlohmann::json::object();
  HardwareConfig hardware;
  ServerConfig server;
  SamplingConfig sampling;
  bool thinking = false;
  int max_failed = 0;          // failed requests tolerated before exit 3
  LoadSamplingConfig load_sampling;
  std::vector<PartConfig> parts;  // in card order

  const PartConfig* FindPart(const std::string& name) const;
};

// Parses and validates. `source` names the card in messages. Each part is
// read against its registered definition (evals/run/part_registry.h).
Status ParseCard(std::string_view text, const std::string& source, Card* card);
// Reads the file, then ParseCard.
Status LoadCard(const std::string& path, Card* card);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_CARD_H_
