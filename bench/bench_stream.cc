// The stream section: what streaming costs the runner (the speed
// part's transport), against a real llama-server (EVALRUN_LLAMA_SERVER) serving
// stories260K-ctx128k.gguf with one slot, -t 1, chatml.
//
// 16 prompts (a salt first, cache_prompt false, ignore_eos, 128 tokens),
// sent one at a time, two rounds, each round first by StreamingChat in this
// process (evals/server/stream.h), then by a bare Python client (an
// http.client connection per request, as llama-server closes it after a
// stream; StreamingChat reconnects too), reading the stream line by line, with
// the very bodies StreamingChat sent. Figures: the runner's thread CPU per
// streamed token (CPU of Send / usage.completion_tokens), the median TTFT
// of each client and their difference (the runner's TTFT overhead), and
// the client's decode rate beside the server's own (timings).
// Informational: no targets. Not in the default sections: it needs a
// llama-server binary.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "evals/base/clock.h"
#include "evals/server/stream.h"
#include "tests/real/llama_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

constexpr int kPrompts = 16;
constexpr int kMaxTokens = 128;

// Prints the TTFT (seconds to the first chunk with content) of each body of
// BODIES as a JSON list; exits 1 on a reply that is not 200.
constexpr const char* kBareClient = R"(import http.client, json, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
bodies = [l.encode() for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
out = []
for body in bodies:
    t0 = time.perf_counter()
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    c.request("POST", url.path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise SystemExit("HTTP %d" % r.status)
    first = None
    for line in r:
        if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
            continue
        ch = json.loads(line[6:]).get("choices") or [{}]
        if first is None and ch[0].get("delta", {}).get("content"):
            first = time.perf_counter() - t0
    c.close()
    out.append(first)
print(json.dumps(out))
)";

// Forwards to a real transport and keeps every body posted.
class RecordingTransport : public HttpTransport {
 public:
  RecordingTransport(std::unique_ptr<HttpTransport> inner, std::vector<std::string>* bodies)
      : inner_(std::move(inner)), bodies_(bodies) {}
  HttpResponse Get(const std::string& path, double timeout_s) override { return inner_->Get(path, timeout_s); }
  HttpResponse Post(const std::string& path, const std::string& body, double timeout_s) override {
    bodies_->push_back(body);
    return inner_->Post(path, body, timeout_s);
  }
  HttpResponse PostStreamed(const std::string& path, const std::string& body, double timeout_s,
                            const std::function<bool(std::string_view)>& on_piece) override {
    bodies_->push_back(body);
    return inner_->PostStreamed(path, body, timeout_s, on_piece);
  }

 private:
  std::unique_ptr<HttpTransport> inner_;
  std::vector<std::string>* bodies_;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct RunnerRound {
  double cpu_s = 0;
  int tokens = 0;
  std::vector<double> ttft, client_tps, server_tps;
};

// One round of StreamingChat; false (with a message) when a request failed.
bool RunRunner(const std::string& base_url, int round, std::vector<std::string>* bodies, RunnerRound* r) {
  ServerConfig cfg;
  cfg.base_url = base_url;
  StreamingChat chat(std::make_unique<RecordingTransport>(MakeHttpTransport(cfg.Origin(), ""), bodies), cfg);
  const nlohmann::json extra = {{"ignore_eos", true}};
  RealClock* clock = RealClock::Default();
  for (int i = 0; i < kPrompts; ++i) {
    Prompt p;
    p.messages = {{"user", Fmt("salt %d-%d: Once upon a time there was a little dog who", round, i)}};
    p.params.max_tokens = kMaxTokens;
    p.params.temperature = 0.0;
    p.params.cache_prompt = false;
    const double cpu0 = clock->ThreadCpuSeconds();
    StreamedReply s = chat.Send(p, &extra, 120, nullptr);
    r->cpu_s += clock->ThreadCpuSeconds() - cpu0;
    if (s.status != CallStatus::kOk) {
      std::fprintf(stderr, "bench: stream: %s\n", s.error.c_str());
      return false;
    }
    r->tokens += s.completion.completion_tokens;
    r->ttft.push_back(s.timing.first_token_s);
    const double span = s.timing.last_token_s - s.timing.first_token_s;
    if (span > 0) r->client_tps.push_back((s.completion.completion_tokens - 1) / span);
    if (s.completion.timings.predicted_ms > 0)
      r->server_tps.push_back((s.completion.timings.predicted_n - 1) * 1e3 / s.completion.timings.predicted_ms);
  }
  return true;
}

// The bare client on `bodies`: its TTFTs.
bool RunBare(const BenchOptions& o, const std::string& url, const std::vector<std::string>& bodies, int round,
             std::vector<double>* ttft) {
  const std::string bodies_path = o.work_dir + Fmt("/stream-bodies-%d.jsonl", round);
  std::string text;
  for (const auto& b : bodies) text += b + "\n";
  testing::WriteFile(bodies_path, text);
  const std::string py = o.work_dir + "/stream_bare.py";
  testing::WriteFile(py, kBareClient);
  ChildProcess child;
  if (!child.Start({"/usr/bin/python3", py, url, bodies_path}, o.work_dir, Fmt("stream-bare-%d", round)))
    return false;
  ChildRun run = child.Wait(600);
  if (run.exit_code != 0) {
    std::fprintf(stderr, "bench: stream: bare client: exit %d\n%s\n", run.exit_code, FileTail(run.err_path).c_str());
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(FileTail(run.out_path), nullptr, false);
  if (!j.is_array()) return false;
  const size_t before = ttft->size();
  for (const auto& v : j)
    if (v.is_number()) ttft->push_back(v.get<double>());
  if (static_cast<int>(ttft->size() - before) == kPrompts) return true;
  std::fprintf(stderr, "bench: stream: the bare client saw text in %zu of %d replies\n", ttft->size() - before, kPrompts);
  return false;
}

}  // namespace

bool RunStreamSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "stream";
  if (testing::LlamaServerBinary().empty()) {
    out->push_back({sec, "streamed requests on llama-server", "EVALRUN_LLAMA_SERVER not set", "", Verdict::kMiss});
    return false;
  }
  testing::LlamaServerArgs args;
  args.model = "stories260K-ctx128k.gguf";
  args.parallel = 1;
  args.ctx = 8192;
  args.metrics = false;
  testing::LlamaServer server(args);
  std::string err;
  if (!server.Start(o.work_dir + "/llama-server-stream.log", &err)) {
    std::fprintf(stderr, "bench: stream: llama-server: %s\n", err.c_str());
    return false;
  }
  RunnerRound runner;
  std::vector<double> bare_ttft;
  for (int round = 1; round <= 2; ++round) {
    std::vector<std::string> bodies;
    if (!RunRunner(server.base_url(), round, &bodies, &runner) ||
        !RunBare(o, server.base_url() + "/chat/completions", bodies, round, &bare_ttft))
      return false;
  }
  const double us_per_token = runner.cpu_s / std::max(1, runner.tokens) * 1e6;
  const double e_ttft = Median(runner.ttft) * 1e3, p_ttft = Median(bare_ttft) * 1e3;
  const int n = 2 * kPrompts;
  out->push_back({sec, Fmt("runner thread CPU per streamed token (%d requests x %d tokens)", n, kMaxTokens),
                  Fmt("%.2f us", us_per_token), "", Verdict::kInfo});
  out->push_back({sec, "median TTFT, StreamingChat", Fmt("%.3f ms", e_ttft), "", Verdict::kInfo});
  out->push_back({sec, "median TTFT, bare Python client (same bodies)", Fmt("%.3f ms", p_ttft), "", Verdict::kInfo});
  out->push_back({sec, "TTFT overhead, StreamingChat - bare client", Fmt("%+.3f ms", e_ttft - p_ttft), "",
                  Verdict::kInfo});
  out->push_back({sec, "median decode rate, client clock / server timings",
                  Fmt("%.0f / %.0f tok/s", Median(runner.client_tps), Median(runner.server_tps)), "", Verdict::kInfo});
  return true;
}

}  // namespace evalrun::bench
