// What evalrun needs to know to talk to one server: its address, slots,
// timeouts, retries, the managed engine's command, and its KV cache. The
// card parser (evals/run/card.h) fills it from the card's "server" object;
// the server layer (client, engine, server facts, tokenizer, watch) reads it.
#ifndef EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_
#define EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace evalrun {

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

  // scheme://host:port of base_url, and the path prefix ("/v1").
  std::string Origin() const;
  std::string PathPrefix() const;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_SERVER_CONFIG_H_
