// How many tokens the server's slots can hold at once: one pool shared by
// all slots (llama-server --kv-unified, its default without -np; vLLM and
// SGLang always), or a cache per slot. The request pool admits a request
// into a shared pool only when its prompt + max_tokens fit beside those in
// flight (evals/run/request_pool.h), so that long prompts on a shared cache run
// one at a time instead of all failing with "Context size has been
// exceeded".
//
// Sources, first match wins:
//   1. the card: server.kv_cache "shared" (server.kv_cache_tokens, else the
//      per-request context of GET /props) or "per_slot";
//   2. a managed engine's own flags (server.command): --kv-unified / -kvu,
//      --no-kv-unified / -no-kvu, and no -np / --parallel (llama-server then
//      runs 4 slots on a unified cache); the pool is its {context} (-c);
//   3. vLLM: GET /metrics vllm:cache_config_info num_gpu_blocks x block_size;
//      SGLang: GET /get_server_info max_total_num_tokens;
//   4. a llama-server with several slots that says nothing (its /props,
//      /slots and /v1/models give the per-slot context only, the same
//      figure with and without --kv-unified): assumed shared, with the
//      per-slot context as the pool, which is exact for a unified cache and
//      never over-commits one per slot. `assumed` is set, so the runner can
//      say so and how to change it;
//   5. otherwise per slot (one slot, or nothing known).
//
// Thread-safety: runs on the caller's thread before the pool starts; the
// result is a plain value.
#ifndef EVALRUN_EVALS_SERVER_KV_CAPACITY_H_
#define EVALRUN_EVALS_SERVER_KV_CAPACITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/server/server_info.h"

namespace evalrun {

struct KvCapacity {
  bool shared = false;
  int64_t tokens = 0;     // the shared pool (0 when per slot)
  std::string source;     // where that came from, for results.json and messages
  bool assumed = false;   // rule 4 above

  nlohmann::json ToJson() const;
};

// `engine_argv`: the managed engine's command (placeholders as in the card),
// empty for an external server; `engine_context`: its {context}. `t` may be
// null (then rule 3 is not tried).
KvCapacity ResolveKvCapacity(const ServerConfig& server, const std::vector<std::string>& engine_argv,
                             int64_t engine_context, const ServerProps& props, HttpTransport* t);

// The flags rule 2 reads. -1: the flags say per slot; 1: shared; 0: neither
// (no llama-server flags about it).
int KvUnifiedFromFlags(const std::vector<std::string>& argv);

// num_gpu_blocks x block_size from vLLM's Prometheus text; 0 when absent.
int64_t VllmKvTokens(const std::string& metrics_text);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_KV_CAPACITY_H_
