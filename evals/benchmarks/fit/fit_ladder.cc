#include "evals/benchmarks/fit/fit_ladder.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "evals/benchmarks/fit/fit_engine_end.h"
#include "evals/server/client.h"
#include "evals/base/json_fields.h"
#include "evals/server/openai_wire.h"
#include "evals/server/server_info.h"
#include "evals/server/server_tokenizer.h"
#include "evals/base/thread_name.h"

namespace evalrun {
namespace {


constexpr const char* kInstruction =
    "A special magic number is hidden within the following text. Make sure to memorize it. "
    "I will quiz you about the number afterwards.\n";
constexpr const char* kQuestion =
    "\nWhat is the special magic number mentioned in the provided text? Answer with the number.";
// The passkey-retrieval filler, used when no haystack text is given.
constexpr const char* kFiller =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The source text, repeated on demand so that any prefix length exists.
class Source {
 public:
  explicit Source(const std::string& haystack) : unit_(haystack.empty() ? kFiller : haystack) {
    while (!unit_.empty() && unit_.back() == ' ') unit_.pop_back();
    text_ = unit_;
  }
  const std::string& AtLeast(size_t chars) {
    while (text_.size() < chars + 1) text_ += " " + unit_;
    return text_;
  }

 private:
  std::string unit_, text_;
};

struct Sizing {
  std::string message;
  int tokens = 0;  // CountChat(message)
};

// Finds the longest haystack prefix whose message counts at most `target`
// chat tokens, to within `tol`. Secant steps on the measured chars per
// token, bracketed by the best prefix that fits (lo) and the shortest that
// did not (hi).
Status SizePrompt(Tokenizer* counter, Source* source, int64_t needle, int target, Sizing* out) {
  int base = 0;
  std::string msg = fit_internal::BuildMessage(source->AtLeast(0), 0, needle);
  EVALRUN_RETURN_IF_ERROR(counter->CountChat(msg, &base));
  if (base > target)
    return Status::InvalidInput("the question alone takes " + std::to_string(base) +
                                " prompt tokens, more than the " + std::to_string(target) + " to fill");
  const int tol = std::max(16, target / 200);
  size_t lo = 0, hi = 0;  // hi == 0: no upper bound yet
  int lo_tokens = base;
  std::string lo_msg = msg;
  size_t chars = static_cast<size_t>(target - base) * 4;  // a first guess: 4 characters a token
  for (int round = 0; round < 16 && target - lo_tokens > tol; ++round) {
    if (hi != 0 && hi - lo <= 2) break;
    if (chars <= lo || (hi != 0 && chars >= hi)) chars = hi != 0 ? lo + (hi - lo) / 2 : lo * 2 + 64;
    msg = fit_internal::BuildMessage(source->AtLeast(chars), chars, needle);
    int n = 0;
    EVALRUN_RETURN_IF_ERROR(counter->CountChat(msg, &n));
    if (n <= target) {
      lo = chars;
      lo_tokens = n;
      lo_msg = msg;
    } else {
      hi = chars;
    }
    // Chars per haystack token as measured here; aim a little below target.
    double per_token = n > base ? static_cast<double>(chars) / (n - base) : 4.0;
    double aim = static_cast<double>(target) - tol / 2.0 - n;
    double next = static_cast<double>(chars) + aim * per_token;
    chars = next <= 0 ? 0 : static_cast<size_t>(next);
  }
  out->message = std::move(lo_msg);
  out->tokens = lo_tokens;
  return Status::Ok();
}

// Samples a reading on a thread of its own and keeps the largest.
class PeakSampler {
 public:
  PeakSampler(std::function<std::optional<double>()> read, double interval_s)
      : read_(std::move(read)), interval_s_(std::max(0.05, interval_s)) {}
  ~PeakSampler() { End(); }

  void Begin() {
    if (!read_) return;
    End();
    peak_.reset();
    stop_ = false;
    thread_ = std::thread([this] {
      NameThisThread("evalrun-fit-gpu");
      std::unique_lock<std::mutex> l(mu_);
      for (;;) {
        l.unlock();
        std::optional<double> v = read_();
        l.lock();
        if (v && (!peak_ || *v > *peak_)) peak_ = v;
        if (cv_.wait_for(l, std::chrono::duration<double>(interval_s_), [this] { return stop_; })) return;
      }
    });
  }

  // Stops sampling (after one last reading); the peak, or nullopt.
  std::optional<double> End() {
    if (!thread_.joinable()) return peak_;
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    std::optional<double> v = read_();
    if (v && (!peak_ || *v > *peak_)) peak_ = v;
    return peak_;
  }

 private:
  std::function<std::optional<double>()> read_;
  double interval_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<double> peak_;
  std::thread thread_;
};

nlohmann::json NewStep(int64_t context) {
  nlohmann::json s;
  s["context"] = context;
  for (const char* k : {"loaded", "answered", "correct", "capped"}) s[k] = false;
  for (const char* k :
       {"load_s", "answer", "finish_reason", "expected", "prompt_tokens", "prompt_tokens_planned", "target_tokens",
        "completion_tokens", "n_ctx_slot", "effective_context", "prompt_per_second", "predicted_per_second", "latency_ms",
        "gpu_mem_peak_mib", "http_status", "tokenizer_calls", "error", "stop_error", "engine_exit", "log_tail"})
    s[k] = nullptr;
  return s;
}

std::string StepLine(const nlohmann::json& s) {
  std::string line = "fit: " + std::to_string(s["context"].get<int64_t>()) + ": ";
  if (!s["loaded"].get<bool>()) return line + "did not load: " + s["error"].get<std::string>();
  if (s["load_s"].is_number()) line += "loaded in " + Fixed(s["load_s"].get<double>(), 1) + " s; ";
  if (s["capped"].get<bool>())
    line += "capped by the server at " + std::to_string(s["n_ctx_slot"].get<int64_t>()) + " tokens a slot; ";
  if (s["answered"].get<bool>()) {
    line += std::string("answered (") + (s["correct"].get<bool>() ? "correct" : "wrong") + ")";
    if (s["prompt_tokens"].is_number()) line += ", " + std::to_string(s["prompt_tokens"].get<int>()) + " prompt tokens";
    if (s["prompt_per_second"].is_number())
      line += ", prefill " + Fixed(s["prompt_per_second"].get<double>(), 0) + " t/s";
    if (s["predicted_per_second"].is_number())
      line += ", decode " + Fixed(s["predicted_per_second"].get<double>(), 1) + " t/s";
  } else {
    line += "no answer: " + (s["error"].is_string() ? s["error"].get<std::string>() : std::string("?"));
  }
  if (s["gpu_mem_peak_mib"].is_number())
    line += "; GPU peak " + Fixed(s["gpu_mem_peak_mib"].get<double>(), 0) + " MiB";
  return line;
}

nlohmann::json NewResult(const FitOptions& opts, const Engine& engine, const std::vector<int64_t>& contexts) {
  nlohmann::json res = nlohmann::json::object();
  res["contexts"] = contexts;
  res["fill"] = opts.fill;
  res["max_tokens"] = opts.max_tokens;
  res["slots"] = opts.slots;
  res["engine"] = engine.managed() ? "managed" : "external";
  res["largest"] = nullptr;
  res["largest_correct"] = nullptr;
  res["steps"] = nlohmann::json::array();
  res["not_tried"] = nlohmann::json::array();
  res["complete"] = false;
  return res;
}

Status CheckOptions(const FitOptions& opts, const std::vector<int64_t>& contexts) {
  for (int64_t c : contexts)
    if (c < 1) return Status::InvalidInput("parts.fit.contexts: expected sizes >= 1, got " + std::to_string(c));
  if (!(opts.fill > 0 && opts.fill <= 1)) return Status::InvalidInput("parts.fit.fill: expected a number in (0, 1]");
  if (opts.max_tokens < 1) return Status::InvalidInput("parts.fit.max_tokens: expected a positive number");
  if (opts.slots < 1) return Status::InvalidInput("fit: slots must be positive");
  return Status::Ok();
}

// What every step of one RunFit shares.
struct Ladder {
  const FitOptions& opts;
  Engine* engine;
  const TransportFactory& transports;
  CancelToken* cancel;
  Source source;
  PeakSampler gpu;
  Clock* clock() const { return opts.clock ? opts.clock : RealClock::Default(); }
};

// The context the slot really has after the start (GET /props; a server may
// cap it at the model's training context), recorded in the step.
int64_t EffectiveContext(Ladder* l, int64_t context, nlohmann::json* step) {
  int64_t effective = context / l->opts.slots;
  auto t = l->transports();
  ServerProps props;
  if (FetchServerProps(t.get(), l->opts.server, &props).ok() && props.n_ctx > 0) {
    (*step)["n_ctx_slot"] = props.n_ctx;
    if (props.n_ctx < context / l->opts.slots) {
      (*step)["capped"] = true;
      effective = props.n_ctx;
    }
  } else {
    effective = context;  // unknown: the whole context, as asked
  }
  (*step)["effective_context"] = effective;
  return effective;
}

// The answer of a loaded step: only a reply (CallStatus::kOk) is one; any
// other outcome (a failure, a reset, a refusal) is the step's error.
void RecordAnswer(const CallResult& r, int64_t needle, nlohmann::json* step) {
  nlohmann::json& s = *step;
  if (r.status != CallStatus::kOk) {
    s["error"] = r.error.empty() ? std::string("no usable reply") : r.error;
    if (r.http_status > 0) s["http_status"] = r.http_status;
    return;
  }
  const Completion& c = r.completion;
  s["answered"] = true;
  s["answer"] = c.content;
  s["finish_reason"] = c.finish_reason;
  s["correct"] = c.content.find(std::to_string(needle)) != std::string::npos;
  if (c.prompt_tokens >= 0) s["prompt_tokens"] = c.prompt_tokens;
  if (c.completion_tokens >= 0) s["completion_tokens"] = c.completion_tokens;
  if (c.timings.present) {
    s["prompt_per_second"] = c.timings.prompt_per_second;
    s["predicted_per_second"] = c.timings.predicted_per_second;
  }
  s["latency_ms"] = r.latency_ms;
}

// The one request of a loaded step: the prompt sized to `fill` of the slot's
// context, sent once. True when cancelled.
bool AskStep(Ladder* l, int64_t context, int64_t needle, nlohmann::json* step) {
  const FitOptions& opts = l->opts;
  const int64_t effective = EffectiveContext(l, context, step);
  const int target = static_cast<int>(opts.fill * static_cast<double>(effective));
  (*step)["target_tokens"] = target;
  std::unique_ptr<Tokenizer> counter =
      opts.make_tokenizer ? opts.make_tokenizer(l->transports())
                          : MakeServerTokenizer(l->transports(), opts.server, opts.params.enable_thinking.value_or(false));
  Sizing sizing;
  Status st = SizePrompt(counter.get(), &l->source, needle, target, &sizing);
  if (!st.ok()) {
    (*step)["error"] = "sizing the prompt: " + st.message();
    return false;
  }
  (*step)["prompt_tokens_planned"] = sizing.tokens;
  (*step)["tokenizer_calls"] = counter->calls();
  Prompt prompt;
  prompt.messages.push_back({"user", std::move(sizing.message)});
  prompt.params = opts.params;
  prompt.params.max_tokens = opts.max_tokens;
  RetryPolicy retry;
  retry.retries = opts.retries;
  OpenAiClient client(l->transports(), opts.server, retry, l->cancel);
  CallResult r = client.Complete(prompt);
  if (r.status == CallStatus::kCancelled) return true;
  RecordAnswer(r, needle, step);
  return false;
}

// A managed engine that died during the step (a crash mid-request) makes it
// a failed step naming how it ended and the last lines of its log, whatever
// the client got. A failed request waits a moment for the death to show.
void CheckEngineSurvived(Ladder* l, nlohmann::json* step) {
  nlohmann::json& s = *step;
  const double wait_s = s["answered"].get<bool>() && s["prompt_tokens"].is_number() ? 0 : 1.0;
  const std::string how = EngineEnd(*l->engine, wait_s, l->clock());
  if (how.empty()) return;
  const std::string tail = TailOfFile(l->engine->log_path(), 12);
  s["engine_exit"] = how;
  s["log_tail"] = tail;
  s["answered"] = false;
  s["correct"] = false;
  s["error"] = "the engine died during the request (" + how + ")" +
               (s["error"].is_string() ? "; the client saw: " + s["error"].get<std::string>() : std::string()) +
               (tail.empty() ? std::string() : "; last lines of " + l->engine->log_path() + ":\n" + tail);
}

// One step: the engine started at `context`, the one request, the engine
// stopped. Returns Stop()'s status (also recorded as stop_error).
Status RunStep(Ladder* l, int64_t context, nlohmann::json* step, bool* cancelled) {
  nlohmann::json& s = *step;
  const int64_t needle = fit_internal::NeedleValue(l->opts.seed, context);
  s["expected"] = std::to_string(needle);
  l->gpu.Begin();
  Stopwatch load_time(l->clock());
  Status st = l->engine->Start(context, l->opts.slots, l->cancel);
  if (l->engine->managed()) s["load_s"] = load_time.Seconds();  // to ready, or to the failure
  if (st.code() == Status::Code::kCancelled) {
    *cancelled = true;
  } else if (!st.ok()) {
    s["error"] = st.message();
  } else {
    s["loaded"] = true;
    *cancelled = AskStep(l, context, needle, step);
    if (!*cancelled) CheckEngineSurvived(l, step);
  }
  if (auto peak = l->gpu.End()) s["gpu_mem_peak_mib"] = *peak;
  Status stop = l->engine->Stop();
  if (!stop.ok()) s["stop_error"] = stop.message();
  if (*cancelled) s["error"] = "interrupted";
  return stop;
}

// `largest` and `largest_correct` after a step; a capped step answered at
// the slot's context, not at the size asked.
void CountStep(const nlohmann::json& step, int slots, nlohmann::json* res) {
  if (!step["loaded"].get<bool>() || !step["answered"].get<bool>()) return;
  const int64_t got = step["effective_context"].get<int64_t>() * slots;
  nlohmann::json& r = *res;
  if (r["largest"].is_null() || got > r["largest"].get<int64_t>()) r["largest"] = got;
  if (step["correct"].get<bool>() && (r["largest_correct"].is_null() || got > r["largest_correct"].get<int64_t>()))
    r["largest_correct"] = got;
}

}  // namespace

namespace fit_internal {

int64_t NeedleValue(int64_t seed, int64_t context) {
  // splitmix64 of the pair: stable across platforms and releases.
  uint64_t z = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(context);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return 1000000 + static_cast<int64_t>(z % 9000000);
}

std::string BuildMessage(const std::string& source, size_t chars, int64_t needle) {
  chars = std::min(chars, source.size());
  // Cut back to a word boundary.
  size_t cut = chars;
  if (cut < source.size() && source[cut] != ' ') {
    size_t sp = cut == 0 ? std::string::npos : source.rfind(' ', cut - 1);
    cut = sp == std::string::npos ? 0 : sp;
  }
  while (cut > 0 && source[cut - 1] == ' ') --cut;
  const std::string_view hay(source.data(), cut);
  const std::string sentence = "The special magic number is " + std::to_string(needle) + ".";
  std::string out = kInstruction;
  out.reserve(cut + 512);
  if (hay.empty()) {
    out += sentence;
  } else {
    // After the sentence end nearest half depth; else at a space; else first.
    const size_t mid = hay.size() / 2;
    size_t at = hay.rfind(". ", mid);
    if (at == std::string_view::npos) at = hay.find(". ", mid);
    if (at != std::string_view::npos) {
      at += 1;  // after the '.', before the space
    } else {
      at = hay.rfind(' ', mid);
      if (at == std::string_view::npos) at = 0;
    }
    out.append(hay.substr(0, at));
    if (at > 0) out += ' ';
    out += sentence;
    if (at == 0) out += ' ';
    out.append(hay.substr(at));
  }
  out += kQuestion;
  return out;
}

}  // namespace fit_internal

std::vector<int64_t> DefaultFitContexts() {
  std::vector<int64_t> v;
  for (int64_t c = 4096; c <= 131072; c *= 2) v.push_back(c);
  return v;
}

FitOptions FitOptionsFromCard(const Card& card, const PartSettings* settings, const RequestSettings* request) {
  FitOptions o;
  if (settings) {
    o.contexts = settings->IntList("contexts");
    o.fill = settings->Number("fill", o.fill);
    o.max_tokens = static_cast<int>(settings->Int("max_tokens", o.max_tokens));
  }
  if (o.contexts.empty()) o.contexts = DefaultFitContexts();
  o.server = card.server;
  const RequestSettings& req = request ? *request : card.request;
  req.ApplyTo(&o.params);  // max_tokens is set per step (grows by a reasoning budget there too)
  o.params.max_tokens = 0;
  o.seed = req.sampling.seed;
  return o;
}

Status LoadFitHaystack(const std::string& data_dir, std::string* text) {
  const std::string path = data_dir + "/ruler/PaulGrahamEssays.json";
  std::string raw;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &raw));
  nlohmann::json doc;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(raw, path, &doc));
  if (!doc.is_object() || !doc.contains("text") || !doc["text"].is_string())
    return Status::InvalidInput(path + ": expected an object with a \"text\" string");
  const std::string& in = doc["text"].get_ref<const std::string&>();
  // RULER's niah: re.sub(r'\s+', " ", essay). Python's \s here: ASCII
  // whitespace and U+00A0 (the only other one in this file); ends trimmed.
  text->clear();
  text->reserve(in.size());
  bool space = false;
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (c == '\xC2' && i + 1 < in.size() && in[i + 1] == '\xA0') {
      space = true;
      ++i;
      continue;
    }
    if (space && !text->empty()) *text += ' ';
    space = false;
    *text += c;
  }
  return Status::Ok();
}

Status RunFit(const FitOptions& opts, Engine* engine, const TransportFactory& transports,
              CancelToken* cancel, nlohmann::json* result) {
  std::vector<int64_t> contexts = opts.contexts.empty() ? DefaultFitContexts() : opts.contexts;
  std::sort(contexts.begin(), contexts.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
  nlohmann::json& res = *result;
  res = NewResult(opts, *engine, contexts);
  EVALRUN_RETURN_IF_ERROR(CheckOptions(opts, contexts));

  Ladder ladder{opts, engine, transports, cancel, Source(opts.haystack),
                PeakSampler(opts.gpu_mem_mib, opts.gpu_sample_interval_s)};
  auto log = [&](const std::string& line) {
    if (opts.log) opts.log(line);
  };
  for (size_t i = 0; i < contexts.size(); ++i) {
    const int64_t context = contexts[i];
    if (cancel && cancel->cancelled()) return Status::Cancelled("fit: interrupted");
    nlohmann::json step = NewStep(context);
    bool cancelled = false;
    const Status stop = RunStep(&ladder, context, &step, &cancelled);
    res["steps"].push_back(step);
    if (cancelled) return Status::Cancelled("fit: interrupted at context " + std::to_string(context));
    log(StepLine(step));
    CountStep(step, opts.slots, &res);
    if (!stop.ok()) {
      for (size_t j = i + 1; j < contexts.size(); ++j) res["not_tried"].push_back(contexts[j]);
      return stop.Prefixed("fit: stopping the engine after context " + std::to_string(context));
    }
    if (!step["loaded"].get<bool>() && !opts.continue_after_load_failure) {
      for (size_t j = i + 1; j < contexts.size(); ++j) res["not_tried"].push_back(contexts[j]);
      if (i + 1 < contexts.size())
        log("fit: " + std::to_string(context) + " did not load; larger sizes are not tried");
      break;
    }
  }
  res["complete"] = true;
  return Status::Ok();
}

}  // namespace evalrun
