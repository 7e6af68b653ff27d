#include "evals/server/kv_capacity.h"
#include "evals/base/json_bounds.h"

#include <cstdlib>
#include <sstream>

namespace evalrun {

nlohmann::json KvCapacity::ToJson() const {
  return {{"kv_cache", shared ? "shared" : "per_slot"},
          {"capacity_tokens", shared ? nlohmann::json(tokens) : nlohmann::json()},
          {"source", source},
          {"assumed", assumed}};
}

int KvUnifiedFromFlags(const std::vector<std::string>& argv) {
  bool parallel = false;
  for (const auto& a : argv) {
    if (a == "--kv-unified" || a == "-kvu") return 1;
    if (a == "--no-kv-unified" || a == "-no-kvu") return -1;
    if (a == "-np" || a == "--parallel" || a.rfind("--parallel=", 0) == 0) parallel = true;
  }
  if (argv.empty()) return 0;
  // llama-server: without -np it runs 4 slots on a unified cache (server.cpp:
  // "n_parallel is set to auto, using n_parallel = 4 and kv_unified = true").
  return parallel ? -1 : 1;
}

int64_t VllmKvTokens(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  auto label = [](const std::string& l, const std::string& key) -> int64_t {
    const std::string k = key + "=\"";
    size_t p = l.find(k);
    if (p == std::string::npos) return 0;
    return std::strtoll(l.c_str() + p + k.size(), nullptr, 10);
  };
  while (std::getline(in, line)) {
    if (line.rfind("vllm:cache_config_info{", 0) != 0) continue;
    const int64_t blocks = label(line, "num_gpu_blocks"), size = label(line, "block_size");
    if (blocks > 0 && size > 0) return blocks * size;
  }
  return 0;
}

KvCapacity ResolveKvCapacity(const ServerConfig& server, const std::vector<std::string>& engine_argv,
                             int64_t engine_context, const ServerProps& props, HttpTransport* t) {
  KvCapacity k;
  if (server.kv_cache == "per_slot") {
    k.source = "card (server.kv_cache per_slot)";
    return k;
  }
  if (server.kv_cache == "shared") {
    k.shared = true;
    k.tokens = server.kv_cache_tokens > 0 ? server.kv_cache_tokens : props.n_ctx;
    k.source = server.kv_cache_tokens > 0 ? "card (server.kv_cache_tokens)"
                                          : "card (server.kv_cache shared; the pool = GET /props n_ctx)";
    return k;
  }
  if (!engine_argv.empty()) {
    const int flags = KvUnifiedFromFlags(engine_argv);
    if (flags == 1) {
      k.shared = true;
      k.tokens = engine_context > 0 ? engine_context : props.n_ctx;
      k.source = "managed engine flags (unified KV cache, -c " + std::to_string(k.tokens) + ")";
    } else {
      k.source = "managed engine flags (a KV cache per slot)";
    }
    return k;
  }
  if (!props.has_props && t) {
    HttpResponse m = t->Get("/metrics", 10);
    if (m.status == 200) {
      if (int64_t v = VllmKvTokens(m.body); v > 0) {
        k.shared = true;
        k.tokens = v;
        k.source = "vLLM GET /metrics cache_config_info (num_gpu_blocks x block_size)";
        return k;
      }
    }
    HttpResponse s = t->Get("/get_server_info", 10);
    if (s.status == 200) {
      auto j = ParseJsonOrDiscarded(s.body);
      if (j.is_object() && j.contains("max_total_num_tokens") && j["max_total_num_tokens"].is_number_integer() &&
          j["max_total_num_tokens"].get<int64_t>() > 0) {
        k.shared = true;
        k.tokens = j["max_total_num_tokens"].get<int64_t>();
        k.source = "SGLang GET /get_server_info max_total_num_tokens";
        return k;
      }
    }
  }
  if (props.has_props && props.total_slots > 1 && props.n_ctx > 0) {
    k.shared = true;
    k.tokens = props.n_ctx;
    k.assumed = true;
    k.source = "assumed: llama-server does not say whether its slots share one KV cache; the pool is taken "
               "as one slot's context (GET /props n_ctx)";
    return k;
  }
  k.source = props.total_slots == 1 ? "one slot" : "nothing known";
  return k;
}

}  // namespace evalrun
