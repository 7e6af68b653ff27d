// The nvidia profile: NVIDIA/RULER c3f5e3b4's scripts/data/prepare.py and
// the task scripts under scripts/data/synthetic/, call for call.
//
// Every build is one call of the script's generate_input_output(n): a fresh
// builder started from the streams where the previous call left them
// (probes and failed retries included), built once. Every
// len(TOKENIZER.text_to_tokens(text)) is one Tokenizer::CountChat(text).
//
// niah.py generate_samples, variable_tracking.py sys_vartrack_w_noise_random,
// common_words_extraction.py sys_word_pair_random and qa.py generate_samples
// share one shape (Shape below):
//   1. the estimate: build at `estimate_units`, count; per = count / units;
//      est = int((max_seq_length / per) * 3)  (cwe: int(max_seq_length //
//      per) * 2, at 4,096 words);
//   2. the binary search on [incremental, max(est, 2 * incremental)]:
//      mid = (lo + hi) // 2 fits when count + extra <= max_seq_length; the
//      size is the largest mid that fitted, else `incremental`;
//   3. per sample: `used` = that size; build, count; if it does not fit or
//      Python raised, `if used > incremental: used -= incremental` and build
//      again (a new call: new draws).
// A Python exception in 1 or 2 ends the script (prepare.py then writes no
// file); 3 never ends when nothing fits at the size it stops stepping at.
// Both are reported as RulerGenStats::cannot_prepare, 3 after
// kRulerNvidiaFloorTries failed draws at that size.
//
// freq_words_extraction.py (sys_kwext, generate_input_output) has its own
// shape: the word count W starts at max_len // coded_wordlen and grows by
// max_len // 32 while the text has fewer than max_len tokens, then steps
// back once; each sample (a new vocabulary) starts at that W and steps down
// while it has more than max_len tokens.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evals/benchmarks/ruler/ruler_generate.h"

namespace evalrun {
namespace {

// Python's float // float (Objects/floatobject.c _float_div_mod).
double PyFloorDiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

// The search-and-retry shape of one phase (see the top of the file).
struct Shape {
  std::string what;        // "vt at 4096" or "vt at 4096, its in-context example"
  const char* script = "";  // "niah.py", ...
  const char* units = "";   // "words", "lines", "documents"
  int max_seq = 0;          // the script's max_seq_length
  int incremental = 0;
  int estimate_units = 0;
  bool cwe_bounds = false;  // est = int(max_seq // per) * 2
  int search_extra = 0;     // added to a probe's count
  int sample_extra = 0;     // added to a sample's count
  bool vt_icl = false;      // vt: build the in-context example
  const std::string* vt_example = nullptr;  // vt: randomize_icl(example) + "\n" before each sample
};

struct Drawn {
  std::string text;
  std::vector<std::string> gold;
  std::string raised;
};

struct Accepted {
  std::string text;
  std::vector<std::string> gold;
  int units = 0;
  int tokens = 0;
  int calls = 0;
};

class NvidiaRun {
 public:
  explicit NvidiaRun(const RulerGenEnv& env)
      : env_(env),
        task_(*env.task),
        streams_{PyRandom(env.seed), NpRandom(static_cast<uint32_t>(env.seed))} {}

  Status Run() {
    const int calls_at_start = env_.tok->calls();
    if (task_.family == RulerFamily::kFreqWords) return RunFwe(calls_at_start);
    Shape s = MainShape();
    std::string example;
    if (task_.family == RulerFamily::kVariableTracking) {
      // variable_tracking.py main(): the example first, by the same routine
      // at max_seq_length 500 with tokens_to_generate 0 and incremental 5.
      Shape icl;
      icl.what = Where() + ", its in-context example";
      icl.script = "variable_tracking.py";
      icl.units = "lines";
      icl.max_seq = task_.icl_max_tokens;
      icl.incremental = 5;
      icl.estimate_units = 5;
      icl.vt_icl = true;
      int num = 0;
      EVALRUN_RETURN_IF_ERROR(Search(icl, &num));
      if (Stopped()) return Status::Ok();
      Accepted a;
      EVALRUN_RETURN_IF_ERROR(Sample(icl, 0, num, &a));
      if (Stopped()) return Status::Ok();
      // icl_example['input'] + " " + ' '.join(icl_example['outputs']) + '\n'
      example = a.text + " ";
      for (size_t i = 0; i < a.gold.size(); ++i) example += (i ? " " : "") + a.gold[i];
      example += "\n";
      int example_tokens = 0;
      EVALRUN_RETURN_IF_ERROR(Count(example, &example_tokens));
      s.search_extra += example_tokens;
      s.vt_example = &example;
    }
    int num = 0;
    EVALRUN_RETURN_IF_ERROR(Search(s, &num));
    if (Stopped()) return Status::Ok();
    env_.stats->haystack_units = num;
    env_.stats->setup_calls = env_.tok->calls() - calls_at_start;
    for (int i = 0; i < env_.n; ++i) {
      Accepted a;
      EVALRUN_RETURN_IF_ERROR(Sample(s, i, num, &a));
      if (Stopped()) return Status::Ok();
      EVALRUN_RETURN_IF_ERROR(Emit(i, std::move(a)));
    }
    return Status::Ok();
  }

 private:
  std::string Where() const { return task_.name + " at " + std::to_string(env_.length); }
  bool Stopped() const { return env_.stats->cannot_prepare; }
  void Stop(std::string reason) {
    env_.stats->cannot_prepare = true;
    env_.stats->reason = std::move(reason);
  }

  Status Count(std::string_view text, int* tokens) { return env_.tok->CountChat(text, tokens); }

  // The shape of the task's own search (the budgets of each script).
  Shape MainShape() const {
    Shape s;
    s.what = Where();
    s.max_seq = env_.length;  // minus model_template_token (0)
    s.search_extra = s.sample_extra = task_.max_tokens;
    const bool small = env_.length < 4096;
    switch (task_.family) {
      case RulerFamily::kNiah:
        // niah.py generate_samples: 500 essay words, 25 lines (5 below 4,096).
        s.script = "niah.py";
        if (task_.type_haystack == RulerHaystack::kEssay) {
          s.units = "words";
          s.incremental = 500;
        } else {
          s.units = "lines";
          s.incremental = small ? 5 : 25;
        }
        s.estimate_units = s.incremental;
        break;
      case RulerFamily::kVariableTracking:
        // sys_vartrack_w_noise_random with the example: 10 lines (5 below 4,096).
        s.script = "variable_tracking.py";
        s.units = "lines";
        s.incremental = small ? 5 : 10;
        s.estimate_units = s.incremental;
        break;
      case RulerFamily::kCommonWords:
        // sys_word_pair_random: incremental 10, the estimate at 4,096 words.
        s.script = "common_words_extraction.py";
        s.units = "words";
        s.incremental = 10;
        s.estimate_units = 4096;
        s.cwe_bounds = true;
        break;
      case RulerFamily::kQa:
        s.script = "qa.py";
        s.units = "documents";
        s.incremental = 10;
        s.estimate_units = 10;
        break;
      case RulerFamily::kFreqWords:
        break;
    }
    return s;
  }

  // One call of generate_input_output(n) (qa: for question `index`).
  Status Call(int index, int64_t n, bool icl, Drawn* out) {
    if (n > (int64_t{1} << 30)) {
      return Status::InvalidInput(Where() + ": the size search asks for " + std::to_string(n) +
                                  " haystack units; the tokenizer's counts look wrong");
    }
    std::unique_ptr<RulerSampleBuilder> b;
    EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(env_.ctx, index, streams_, icl, &b));
    EVALRUN_RETURN_IF_ERROR(b->Build(static_cast<int>(n), &out->text));
    const RulerBuilt& r = b->Result(static_cast<int>(n));
    streams_ = r.after;
    out->gold = r.gold;
    out->raised = r.raised;
    return Status::Ok();
  }

  void StopCrashed(const Shape& s, const char* step, const std::string& raised) {
    std::string hint;
    if (task_.family == RulerFamily::kCommonWords && env_.inputs->english_words.empty()) {
      hint = "; it draws more distinct words than the " + std::to_string(env_.ctx->cwe_pool.size()) +
             " of wonderwords, and RULER's english_words.json (sha256 " + kRulerEnglishWordsSha256 +
             ") is not in " + env_.inputs->ruler_dir;
    }
    Stop(s.what + ": NVIDIA's " + s.script + " would crash in its " + step + " (" + raised +
         "), so prepare.py writes no file for it" + hint);
  }

  // Steps 1 and 2: sets *num, or stops.
  Status Search(const Shape& s, int* num) {
    Drawn d;
    EVALRUN_RETURN_IF_ERROR(Call(0, s.estimate_units, s.vt_icl, &d));
    if (!d.raised.empty()) {
      StopCrashed(s, "estimate call", d.raised);
      return Status::Ok();
    }
    int tokens = 0;
    EVALRUN_RETURN_IF_ERROR(Count(d.text, &tokens));
    if (tokens <= 0) return Status::InvalidInput(Where() + ": the tokenizer counted 0 tokens");
    const double per = static_cast<double>(tokens) / s.estimate_units;
    const double max_seq = s.max_seq;
    const double est = s.cwe_bounds ? PyFloorDiv(max_seq, per) : (max_seq / per) * 3;
    if (!(est < 1e15)) return Status::InvalidInput(Where() + ": the size estimate overflows");
    int64_t estimated = static_cast<int64_t>(est);
    if (s.cwe_bounds) estimated *= 2;
    int64_t lower = s.incremental;
    int64_t upper = std::max<int64_t>(estimated, 2 * s.incremental);
    int64_t best = -1;
    while (lower <= upper) {
      const int64_t mid = (lower + upper) / 2;
      EVALRUN_RETURN_IF_ERROR(Call(0, mid, s.vt_icl, &d));
      if (!d.raised.empty()) {
        StopCrashed(s, "size search", d.raised);
        return Status::Ok();
      }
      EVALRUN_RETURN_IF_ERROR(Count(d.text, &tokens));
      if (tokens + s.search_extra <= s.max_seq) {
        best = mid;
        lower = mid + 1;
      } else {
        upper = mid - 1;
      }
    }
    *num = static_cast<int>(best >= 0 ? best : s.incremental);
    return Status::Ok();
  }

  // Step 3 for sample `index`: fills *out, or stops.
  Status Sample(const Shape& s, int index, int num, Accepted* out) {
    const int calls_before = env_.tok->calls();
    int used = num;
    int floor_tries = 0;
    int fewest = -1;  // the fewest tokens counted at the floor
    std::string raised;
    while (true) {
      Drawn d;
      EVALRUN_RETURN_IF_ERROR(Call(index, used, s.vt_icl, &d));
      int tokens = -1;
      if (d.raised.empty()) {
        if (s.vt_example) {
          // The example goes before the task template (at 0 with the base
          // model template), after its randomize_icl.
          d.text = RulerVtRandomizeIcl(*s.vt_example, task_.num_hops, &streams_.py, &streams_.np) +
                   "\n" + d.text;
        }
        EVALRUN_RETURN_IF_ERROR(Count(d.text, &tokens));
        if (tokens + s.sample_extra <= s.max_seq) {
          out->text = std::move(d.text);
          out->gold = std::move(d.gold);
          out->units = used;
          out->tokens = tokens;
          out->calls = env_.tok->calls() - calls_before;
          return Status::Ok();
        }
      }
      if (used > s.incremental) {
        used -= s.incremental;
        continue;
      }
      ++floor_tries;
      if (tokens >= 0) {
        fewest = fewest < 0 ? tokens : std::min(fewest, tokens);
      } else {
        raised = d.raised;
      }
      if (floor_tries < kRulerNvidiaFloorTries) continue;
      std::string why;
      if (fewest >= 0) {
        why = "needs " + std::to_string(fewest) + " tokens" +
              (s.sample_extra ? " + " + std::to_string(s.sample_extra) + " for the answer = " +
                                    std::to_string(fewest + s.sample_extra)
                              : std::string()) +
              " > " + std::to_string(s.max_seq) + " (the fewest of " + std::to_string(floor_tries) +
              " draws at that size)";
      } else {
        why = "raises " + raised + " in every one of " + std::to_string(floor_tries) + " draws";
      }
      Stop(s.what + ": NVIDIA's " + s.script + " never finishes here: at the smallest size its " +
           "retry loop reaches (" + std::to_string(used) + " " + s.units + ", sample " +
           std::to_string(index) + ") the prompt " + why +
           ", and prepare.py would redraw it forever");
      return Status::Ok();
    }
  }

  Status Emit(int index, Accepted a) {
    RulerSampleFacts f;
    f.index = index;
    f.units = a.units;
    f.exact = a.tokens;
    f.tokenizer_calls = a.calls;
    return EmitRulerSample(env_, f, std::move(a.text), std::move(a.gold));
  }

  // freq_words_extraction.py sys_kwext.
  Status RunFwe(int calls_at_start) {
    const int max_len = env_.length - task_.max_tokens;  // max_seq_length -= tokens_to_generate
    const int incremental = max_len / 32;
    // The first call (num_words -1): W grows while the text is short.
    std::unique_ptr<RulerSampleBuilder> b;
    EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(env_.ctx, 0, streams_, false, &b));
    int64_t w = max_len / task_.coded_wordlen;
    std::string text;
    int tokens = 0;
    while (true) {
      EVALRUN_RETURN_IF_ERROR(BuildFwe(b.get(), w, &text));
      EVALRUN_RETURN_IF_ERROR(Count(text, &tokens));
      if (tokens >= max_len) break;
      if (incremental <= 0) {
        Stop(Where() + ": NVIDIA's freq_words_extraction.py never finishes here: its word count "
             "step max_len // 32 is 0 and the text stays at " + std::to_string(tokens) + " < " +
             std::to_string(max_len) + " tokens");
        return Status::Ok();
      }
      w += incremental;
    }
    w -= incremental;  // the last gen_text(num_words) is not counted
    streams_ = b->Result(Clamped(w + incremental)).after;  // the vocabulary's draws
    const int64_t example_words = w;
    env_.stats->haystack_units = static_cast<int>(example_words);
    env_.stats->setup_calls = env_.tok->calls() - calls_at_start;
    for (int i = 0; i < env_.n; ++i) {
      const int calls_before = env_.tok->calls();
      EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(env_.ctx, i, streams_, false, &b));
      w = example_words;
      while (true) {
        EVALRUN_RETURN_IF_ERROR(BuildFwe(b.get(), w, &text));
        EVALRUN_RETURN_IF_ERROR(Count(text, &tokens));
        if (tokens <= max_len) break;
        if (w <= 0 || incremental <= 0) {  // the bare template: nothing left to remove
          Stop(Where() + ": NVIDIA's freq_words_extraction.py never finishes here: even the " +
               "template without words needs " + std::to_string(tokens) + " tokens + " +
               std::to_string(task_.max_tokens) + " for the answer = " +
               std::to_string(tokens + task_.max_tokens) + " > " + std::to_string(env_.length) +
               ", and its step-down loop has no floor");
          return Status::Ok();
        }
        w -= incremental;
      }
      const RulerBuilt& r = b->Result(Clamped(w));
      streams_ = r.after;
      Accepted a;
      a.text = std::move(text);
      a.gold = r.gold;
      a.units = static_cast<int>(w);
      a.tokens = tokens;
      a.calls = env_.tok->calls() - calls_before;
      EVALRUN_RETURN_IF_ERROR(Emit(i, std::move(a)));
    }
    return Status::Ok();
  }

  // gen_text(num_words): num_words <= 0 gives the bare template, as
  // [w] * count is empty for a count <= 0.
  static int Clamped(int64_t w) { return static_cast<int>(std::max<int64_t>(w, 0)); }
  Status BuildFwe(RulerSampleBuilder* b, int64_t w, std::string* text) {
    if (w > (int64_t{1} << 30)) return Status::InvalidInput(Where() + ": the word count overflows");
    return b->Build(Clamped(w), text);
  }

  const RulerGenEnv& env_;
  const RulerTaskConfig& task_;
  RulerStreams streams_;
};

}  // namespace

Status GenerateRulerNvidia(const RulerGenEnv& env) {
  NvidiaRun run(env);
  return run.Run();
}

}  // namespace evalrun
