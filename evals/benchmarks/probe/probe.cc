// The logprob probe: what the engine predicts for the next token at fixed,
// seeded positions of a fixed text, teacher-forced (the prompt is always the
// text itself up to the position, raw, no chat template; never the model's
// own output). Two runs of it are compared by `evalrun compare` (KL
// divergence, top-1 agreement: compare_probe.h), which sees
// the small shifts of every distribution that a KV-cache, quantisation or
// kernel bug makes long before accuracy moves.
//
// Follows llama.cpp scripts/compare-logprobs.py (the prompt = words of a
// text joined by " ", one token at temperature 0 with its logprobs, asked
// of an OpenAI-compatible /v1/completions) with seeded positions instead of
// its fixed pattern, a fixed context of `context_words` words before each
// position (the cost of a position does not grow with its place in the
// text) and the top-K candidates instead of the top one, so that
// tools/perplexity/perplexity.cpp's KLD statistics can be approximated.
#include <algorithm>
#include <cmath>

#include "datasets/manifest.h"
#include "evals/base/json_bounds.h"
#include "evals/base/files.h"
#include "evals/base/json_fields.h"
#include "evals/base/py_random.h"
#include "evals/base/sha256.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

constexpr const char* kDefaultText = "ruler/PaulGrahamEssays.json";
constexpr size_t kExcerptBytes = 80;

// The text's words: whitespace collapsed as RULER does (RulerCollapseWhitespace),
// split on ' ', empty words dropped (compare-logprobs.py: split(" "), empty
// strings filtered out).
std::vector<std::string> Words(const std::string& collapsed) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < collapsed.size()) {
    size_t j = collapsed.find(' ', i);
    if (j == std::string::npos) j = collapsed.size();
    if (j > i) out.push_back(collapsed.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The first byte offset at which `text` is not well-formed UTF-8, or npos.
size_t FirstBadUtf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const py::Utf8Char c = py::DecodeUtf8At(text, i);
    if (!c.valid) return i;
    i += c.len;
  }
  return std::string::npos;
}

// The last at most `max_bytes` of `s`, starting on a character boundary.
std::string Utf8Tail(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t from = s.size() - max_bytes;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return "…" + s.substr(from);
}

std::string ResolveTextPath(const PartContext& ctx, const std::string& given) {
  if (given.empty() || given[0] == '/') return given;
  const std::string& card = ctx.card ? ctx.card->path : std::string();
  const size_t slash = card.rfind('/');
  return slash == std::string::npos ? given : card.substr(0, slash + 1) + given;
}

class ProbePart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    std::string path, sha, raw;
    const std::string given = cfg.String("text", "");
    nlohmann::json text_info;
    if (given.empty()) {
      EVALRUN_RETURN_IF_ERROR(FindDataFile(ctx, kDefaultText, &path, &sha));
      std::string file;
      EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &file));
      nlohmann::json j = ParseJsonOrDiscarded(file);
      if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string())
        return Status::InvalidInput(path + ": expected a JSON object with a string \"text\"");
      raw = j["text"].get<std::string>();
      text_info = {{"file", kDefaultText}, {"sha256", sha}};
    } else {
      path = ResolveTextPath(ctx, given);
      EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &raw));
      EVALRUN_RETURN_IF_ERROR(Sha256File(path, &sha));
      const size_t bad = FirstBadUtf8(raw);
      if (bad != std::string::npos)
        return Status::InvalidInput("parts.probe.text: " + path + ": not UTF-8 (byte " + std::to_string(bad) + ")");
      text_info = {{"file", given}, {"path", path}, {"sha256", sha}};
    }
    const std::vector<std::string> words = Words(RulerCollapseWhitespace(raw));
    const int64_t context = cfg.Int("context_words");
    const int64_t count = cfg.Int("positions");
    const int64_t room = static_cast<int64_t>(words.size()) - context;
    if (room < count)
      return Status::InvalidInput("parts.probe.positions: " + std::to_string(count) + " positions with " +
                                  std::to_string(context) + " context words need a text of at least " +
                                  std::to_string(count + context) + " words; " + path + " has " +
                                  std::to_string(words.size()));
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    // Position p: the prompt is words [p - context, p), the text's next word is words[p].
    PyRandom rng(static_cast<uint64_t>(seed));
    std::vector<size_t> picks = rng.Sample(static_cast<size_t>(room), static_cast<size_t>(count));
    for (size_t& p : picks) p += static_cast<size_t>(context);
    std::sort(picks.begin(), picks.end());
    if (ctx.limit >= 0 && picks.size() > static_cast<size_t>(ctx.limit)) picks.resize(ctx.limit);

    LogprobRequest req;
    req.top_logprobs = static_cast<int>(cfg.Int("top_logprobs"));
    req.llama_completion = cfg.String("endpoint") == "llama-completion";
    nlohmann::json positions = nlohmann::json::array();
    for (size_t p : picks) {
      std::string prompt;
      for (size_t w = p - context; w < p; ++w) prompt += (prompt.empty() ? "" : " ") + words[w];
      Item it;
      it.id = std::to_string(p);
      it.category = "probe";
      it.prompt.messages.push_back({"user", prompt});
      it.prompt.params.max_tokens = 1;
      it.prompt.logprobs = req;
      it.prompt_sha256 = Sha256Hex(prompt);
      it.fields = {{"position", static_cast<int64_t>(p)},
                   {"excerpt", Utf8Tail(prompt, kExcerptBytes)},
                   {"next_word", words[p]}};
      positions.push_back(p);
      out->items.push_back(std::move(it));
    }
    text_info["words"] = words.size();
    out->info["text"] = text_info;
    out->info["positions"] = positions;
    out->info["context_words"] = context;
    out->info["top_logprobs"] = req.top_logprobs;
    out->info["endpoint"] = req.llama_completion ? "/completion (n_probs)" : "/v1/completions (logprobs)";
    out->info["thresholds"] = Thresholds(cfg);
    RecordSelection(seed, 1, out);
    return Status::Ok();
  }

  Verdict Score(const Item&, const Completion& a) const override {
    LogprobsVerdict v;
    v.top = a.top_logprobs;
    return v;
  }

  // The run's own facts: the top-1 logprob's distribution, the share of
  // positions whose top token has p > 0.5, the prompts' token counts.
  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    std::vector<double> top1;
    int64_t confident = 0, tokens = 0, counted = 0;
    for (const auto& s : records) {
      const auto& v = std::get<LogprobsVerdict>(s.verdict);
      if (v.top.empty()) continue;
      top1.push_back(v.top[0].logprob);
      confident += v.top[0].logprob > std::log(0.5);
      if (s.prompt_tokens >= 0) {
        tokens += s.prompt_tokens;
        ++counted;
      }
    }
    std::sort(top1.begin(), top1.end());
    auto quantile = [&](double f) {
      if (top1.empty()) return nlohmann::json();
      const double x = f * (top1.size() - 1);
      const size_t i = static_cast<size_t>(x);
      const double w = x - i;
      return nlohmann::json(Round((1 - w) * top1[i] + w * top1[std::min(i + 1, top1.size() - 1)], 6));
    };
    double mean = 0;
    for (double x : top1) mean += x;
    nlohmann::json r;
    const double share = top1.empty() ? 0.0 : static_cast<double>(confident) / top1.size();
    r["score"] = Round(100 * share, 2);
    r["score_scale"] = "0-100: the share of positions whose top token has p > 0.5 (a fact of the run, not a grade)";
    r["n"] = records.size();
    r["failed"] = failed;
    r["cut_off"] = 0;
    r["top1_confident"] = confident;
    r["top1_logprob"] = {{"mean", top1.empty() ? nlohmann::json() : nlohmann::json(Round(mean / top1.size(), 6))},
                         {"min", quantile(0)}, {"p05", quantile(0.05)}, {"median", quantile(0.5)},
                         {"p95", quantile(0.95)}, {"max", quantile(1)}};
    r["prompt_tokens_mean"] = counted ? nlohmann::json(Round(static_cast<double>(tokens) / counted, 2))
                                      : nlohmann::json();
    AddSpeeds(records, &r);
    return r;
  }

 private:
  static nlohmann::json Thresholds(const PartSettings& cfg) {
    nlohmann::json t = nlohmann::json::object();
    for (const char* k : {"max_kld_mean", "max_kld_p99", "min_top1"})
      t[k] = cfg.Has(k) ? nlohmann::json(cfg.Number(k)) : nlohmann::json();
    return t;
  }
};

PartDefinition ProbeDefinition() {
  PartDefinition d;
  d.name = "probe";
  d.display_name = "Logprob probe";
  d.run_order = 45;
  d.verdict = VerdictKind::kLogprobs;
  d.keys = {
      CardKey::Int("positions", 1, 1000000, "how many positions of the text are probed (default 200), seeded")
          .Default(int64_t{200}),
      CardKey::Int("context_words", 1, 100000,
                   "the words of the text before each position that make its prompt (default 64; the prompt's "
                   "tokens are the server's own count, recorded per sample)")
          .Default(int64_t{64}),
      CardKey::Int("top_logprobs", 1, 100, "K: the candidates asked for the next token (default 10; vLLM allows "
                                           "at most 20 unless started with --max-logprobs)")
          .Default(int64_t{10}),
      CardKey::Text("text", "a UTF-8 file to probe (relative to the card's folder); default: the RULER essays "
                            "(ruler/PaulGrahamEssays.json of the data dir); recorded by path and sha256"),
      CardKey::Enum("endpoint", {"completions", "llama-completion"},
                    "`completions`: POST <base_url>/completions with `logprobs` (llama-server, vLLM, SGLang); "
                    "`llama-completion`: llama-server's POST /completion with `n_probs`")
          .Default(std::string("completions")),
      SeedKey("the positions' seed (default sampling.seed)"),
      CardKey::Number("max_kld_mean", 0, 1e9, false,
                      "`compare`: a regression when the mean KLD(A||B) is above this (default: not checked)")
          .OutOfRunKey(),
      CardKey::Number("max_kld_p99", 0, 1e9, false,
                      "`compare`: a regression when the 99th percentile of KLD(A||B) is above this")
          .OutOfRunKey(),
      CardKey::Number("min_top1", 0, 1, false,
                      "`compare`: a regression when the share of positions with the same top token is below this "
                      "(0..1)")
          .OutOfRunKey(),
  };
  d.make_part = [] { return std::make_unique<ProbePart>(); };
  return d;
}

Benchmark ProbeBenchmark() {
  Benchmark b;
  b.name = "probe";
  b.title = "Logprob probe";
  b.about = "the server's top-K next-token candidates at seeded positions of a fixed text, for engine regressions";
  b.parts = {ProbeDefinition()};
  b.datasets = {"ruler"};  // the default text: RULER's essays
  b.uses = {"ruler"};      // its essays' reader
  b.scorer = "no verdict: `compare` measures KLD(A||B), top-1 agreement and |delta logprob| per position "
             "(as llama.cpp scripts/compare-logprobs.py and perplexity's KLD statistics)";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(ProbeBenchmark());

}  // namespace evalrun
