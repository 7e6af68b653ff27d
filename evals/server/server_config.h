// What evalrun needs to know to talk to one server: its address, slots,
// timeouts, retries, the managed engine's command, its KV cache, and the
// other servers behind the same card (server.endpoints). The
// card parser (evals/run/card.h) fills it from the card's "server" object;
// the server layer (client, engine, server facts, tokenizer, watch) reads it.
//
// Thread-safety: plain values, copied to each thread that needs them.
#ifndef EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_
#define EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
  std::string launch;                // server.launch: how a server started by hand was started (descriptive)
  int64_t context = 0;               // {context} of the managed engine for the parts (a procedure may pass its own)
  double stop_grace_s = 10;
  // Whether the slots share one KV cache ("auto", "shared", "per_slot")
  // and, when shared, its size (0: GET /props n_ctx). evals/server/kv_capacity.h.
  std::string kv_cache = "auto";
  int64_t kv_cache_tokens = 0;
  int max_reply_mb = 256;
  // server.raw_fallback: a chat answer llama-server's output parser refuses
  // (HTTP 500) is asked again as raw text (evals/server/raw_fallback.h).
  bool raw_fallback = true;            // a larger reply is cut off: that request fails
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

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_
