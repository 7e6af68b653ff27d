// The length search (evals/benchmarks/ruler/ruler_length.h) against tokenizers whose
// counts are not additive, on its own and through GenerateRulerSamples.
#include "evals/benchmarks/ruler/ruler_length.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

// A BPE-ish fake: ceil(len/4) tokens per whitespace-separated word, one per
// newline, one more when a word ends in punctuation, and one less for every
// two consecutive words of at most two bytes ("merges"). Gluing two texts
// without a space changes the count: it is not additive.
int FakeTokens(std::string_view t) {
  int n = 0;
  size_t i = 0;
  int prev_short = 0;
  while (i < t.size()) {
    if (t[i] == '\n') {
      ++n;
      ++i;
      prev_short = 0;
    } else if (t[i] == ' ') {
      ++i;
    } else {
      size_t j = i;
      while (j < t.size() && t[j] != ' ' && t[j] != '\n') ++j;
      const size_t len = j - i;
      n += static_cast<int>((len + 3) / 4);
      const char last = t[j - 1];
      if (len > 1 && (last == '.' || last == ',' || last == ':' || last == '?' || last == '!')) ++n;
      if (len <= 2) {
        if (++prev_short == 2) {
          --n;
          prev_short = 0;
        }
      } else {
        prev_short = 0;
      }
      i = j;
    }
  }
  return n;
}

class FakeTokenizer : public testing::CountingTokenizer {
 public:
  FakeTokenizer()
      : CountingTokenizer(FakeTokens, [](std::string_view content) {
          return FakeTokens("<|user|>\n" + std::string(content) + "\n<|assistant|>\n") + 3;
        }) {}
};

// "head" + n pseudo-random words + "tail"; the proxy is the exact byte size.
class WordsPrompt : public SizedPrompt {
 public:
  explicit WordsPrompt(int min_units = 1, int max_units = 1 << 20, int word_scale = 1)
      : min_(min_units), max_(max_units), scale_(word_scale) {}
  int MinUnits() const override { return min_; }
  int MaxUnits() const override { return max_; }
  Status ProxyBytes(int n, int64_t* bytes) override {
    std::string t;
    EVALRUN_RETURN_IF_ERROR(Build(n, &t));
    *bytes = static_cast<int64_t>(t.size());
    ++proxy_calls;
    return Status::Ok();
  }
  Status Build(int n, std::string* text) override {
    *text = "Read this, then answer.";
    uint32_t x = 12345;
    for (int i = 0; i < n; ++i) {
      x = x * 1103515245u + 12345u;
      const int len = 1 + static_cast<int>((x >> 16) % 9) * scale_;
      text->push_back(i % 17 == 16 ? '\n' : ' ');
      for (int k = 0; k < len; ++k) text->push_back(static_cast<char>('a' + (x >> (k % 16)) % 26));
      if (i % 11 == 10) text->push_back('.');
    }
    *text += " What was it? Answer:";
    return Status::Ok();
  }
  int proxy_calls = 0;

 private:
  int min_, max_, scale_;
};

TokenCounter ChatCounter(FakeTokenizer* tok) {
  return [tok](std::string_view text, int* n) { return tok->CountChat(text, n); };
}

TEST(RulerLength, FitsTightlyAndNeverOverflows) {
  for (int target : {300, 3968, 8064, 32640, 130944}) {
    WordsPrompt p;
    FakeTokenizer tok;
    TokenEstimator est;
    LengthTarget t;
    t.max_tokens = target;
    FitResult r;
    ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &r).ok());
    int exact = 0;
    ASSERT_TRUE(tok.CountChat(r.text, &exact).ok());
    EXPECT_EQ(exact, r.exact_tokens);
    EXPECT_LE(r.exact_tokens, target);
    EXPECT_GE(r.exact_tokens, target - EffectiveTolerance(t)) << target;
    EXPECT_EQ(r.exact_checks, tok.calls() - 1);
    EXPECT_LE(r.exact_checks, 6) << target;
    std::string text;
    ASSERT_TRUE(p.Build(r.units, &text).ok());
    EXPECT_EQ(text, r.text);
  }
}

TEST(RulerLength, SecondFitOfTheSamePromptTakesOneCheck) {
  WordsPrompt p;
  FakeTokenizer tok;
  TokenEstimator est;
  LengthTarget t;
  t.max_tokens = 20000;
  FitResult first, second;
  ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &first).ok());
  ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &second).ok());
  EXPECT_EQ(second.exact_checks, 1);
  // It aims a little lower (twice the first fit's last error) but stays
  // within the tolerance, and its estimate was exact (same text, re-anchored).
  EXPECT_LE(second.units, first.units);
  EXPECT_GE(second.exact_tokens, t.max_tokens - EffectiveTolerance(t));
  EXPECT_EQ(second.estimated_tokens, second.exact_tokens);
}

TEST(RulerLength, CoarseUnitsStopAtTheLargestThatFits) {
  // Units of ~10-90 bytes (far more than the tolerance of 24 tokens): the fit
  // must end on n with n+1 overflowing, checked by brute force.
  for (int target : {1000, 4000, 9000}) {
    WordsPrompt p(1, 1 << 20, /*word_scale=*/10);
    FakeTokenizer tok;
    TokenEstimator est;
    LengthTarget t;
    t.max_tokens = target;
    FitResult r;
    ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &r).ok());
    EXPECT_LE(r.exact_tokens, target);
    std::string next;
    ASSERT_TRUE(p.Build(r.units + 1, &next).ok());
    int next_tokens = 0;
    ASSERT_TRUE(tok.CountChat(next, &next_tokens).ok());
    // Either within the tolerance, or the next unit really overflows.
    EXPECT_TRUE(target - r.exact_tokens <= EffectiveTolerance(t) || next_tokens > target)
        << target << ": " << r.exact_tokens << " then " << next_tokens;
  }
}

TEST(RulerLength, NonMonotoneCountsStillFit) {
  // The counter adds a jitter of 0..40 tokens that depends on the text.
  WordsPrompt p;
  int calls = 0;
  const TokenCounter jittery = [&](std::string_view text, int* n) {
    ++calls;
    *n = FakeTokens(text) + static_cast<int>((text.size() * 2654435761u) % 41);
    return Status::Ok();
  };
  TokenEstimator est;
  for (int round = 0; round < 5; ++round) {
    LengthTarget t;
    t.max_tokens = 5000 + 997 * round;
    FitResult r;
    ASSERT_TRUE(FitToLength(&p, jittery, t, &est, &r).ok());
    int exact = 0;
    ASSERT_TRUE(jittery(r.text, &exact).ok());
    EXPECT_EQ(exact, r.exact_tokens);
    EXPECT_LE(exact, t.max_tokens);
    EXPECT_GE(exact, t.max_tokens * 98 / 100);
  }
  EXPECT_LE(calls, 5 * 12 + 5);
}

// A proxy that lies (3x the bytes past 400 units): the exact counts and the
// bisection fallback still bring the fit home.
class LyingPrompt : public WordsPrompt {
 public:
  Status ProxyBytes(int n, int64_t* bytes) override {
    EVALRUN_RETURN_IF_ERROR(WordsPrompt::ProxyBytes(n, bytes));
    if (n > 400) *bytes *= 3;
    return Status::Ok();
  }
};

TEST(RulerLength, MisleadingProxyStillConverges) {
  LyingPrompt p;
  FakeTokenizer tok;
  TokenEstimator est;
  LengthTarget t;
  t.max_tokens = 6000;
  FitResult r;
  ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &r).ok());
  EXPECT_LE(r.exact_tokens, 6000);
  EXPECT_GE(r.exact_tokens, 6000 * 98 / 100);
  EXPECT_LE(r.exact_checks, 12);
}

TEST(RulerLength, SmallestPromptTooLongIsAnError) {
  WordsPrompt p(/*min_units=*/50);
  FakeTokenizer tok;
  TokenEstimator est;
  LengthTarget t;
  t.max_tokens = 20;
  FitResult r;
  const Status st = FitToLength(&p, ChatCounter(&tok), t, &est, &r);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("smallest prompt (50 haystack units)"), std::string::npos)
      << st.message();
  EXPECT_EQ(tok.calls(), 1);
}

TEST(RulerLength, MaxUnitsCapsTheFit) {
  WordsPrompt p(1, /*max_units=*/100);
  FakeTokenizer tok;
  TokenEstimator est;
  LengthTarget t;
  t.max_tokens = 100000;
  FitResult r;
  ASSERT_TRUE(FitToLength(&p, ChatCounter(&tok), t, &est, &r).ok());
  EXPECT_EQ(r.units, 100);
}

TEST(RulerLength, Estimator) {
  TokenEstimator e;
  EXPECT_FALSE(e.has_anchor());
  e.Observe(1000, 250, false);  // first: slope through the origin
  EXPECT_DOUBLE_EQ(e.slope(), 0.25);
  EXPECT_DOUBLE_EQ(e.Estimate(2000), 500);
  e.Observe(5000, 1050, true);  // secant: (1050 - 250) / 4000
  EXPECT_DOUBLE_EQ(e.slope(), 0.2);
  EXPECT_TRUE(e.has_secant());
  e.Observe(5010, 1100, true);  // too close for a secant: slope kept, re-anchored
  EXPECT_DOUBLE_EQ(e.slope(), 0.2);
  EXPECT_DOUBLE_EQ(e.Estimate(5110), 1120);
  EXPECT_DOUBLE_EQ(e.Margin(40), 20);  // no errors yet: tolerance / 2
  e.RecordError(-3);
  EXPECT_DOUBLE_EQ(e.Margin(40), 6);
  e.RecordError(0.2);
  EXPECT_DOUBLE_EQ(e.Margin(40), 6);
  LengthTarget t;
  t.max_tokens = 130944;
  EXPECT_EQ(EffectiveTolerance(t), 654);
  t.max_tokens = 3968;
  EXPECT_EQ(EffectiveTolerance(t), 24);
}

// ---------------------------------------------------------------------------
// Through GenerateRulerSamples with the real haystacks.

const RulerInputs& Inputs() {
  static const RulerInputs* inputs = [] {
    auto* in = new RulerInputs;
    RulerLoadOptions opts;
    opts.tasks = {
        "niah_single_1", "niah_single_2", "niah_multikey_2", "niah_multikey_3", "vt", "cwe", "fwe"};
    const Status st = LoadRulerInputs(testing::DatasetsDir() + "/ruler", opts, in);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return in;
  }();
  return *inputs;
}

TEST(RulerLength, GeneratedSamplesFillTheirLength) {
  struct Run {
    const char* task;
    int length;
    int n;
  };
  std::vector<Run> runs;
  for (const char* task : {"niah_single_1", "niah_single_2", "niah_multikey_2", "niah_multikey_3",
                           "vt", "cwe", "fwe"}) {
    for (int length : {4096, 8192, 32768, 131072}) {
      if (std::string(task) == "cwe" && length == 131072) continue;  // needs english_words.json
      runs.push_back({task, length, length == 131072 ? 3 : 6});
    }
  }
  for (const Run& run : runs) {
    RulerTaskConfig task;
    ASSERT_TRUE(RulerTaskByName(run.task, &task).ok());
    task.profile = RulerProfile::kFit;
    FakeTokenizer tok;
    std::vector<RulerSample> out;
    RulerGenStats stats;
    const Status st =
        GenerateRulerSamples(Inputs(), task, run.length, run.n, 42, &tok, &out, &stats);
    ASSERT_TRUE(st.ok()) << run.task << " " << run.length << ": " << st.ToString();
    ASSERT_EQ(static_cast<int>(out.size()), run.n);
    const int budget = run.length - task.max_tokens;
    int sample_calls = 0;
    for (const RulerSample& s : out) {
      int exact = 0;
      FakeTokenizer check;
      ASSERT_TRUE(check.CountChat(s.prompt, &exact).ok());
      EXPECT_EQ(exact, s.exact_prompt_tokens) << s.id;
      EXPECT_LE(s.exact_prompt_tokens + task.max_tokens, run.length) << s.id;
      EXPECT_GE(s.exact_prompt_tokens, budget * 98 / 100)
          << s.id << ": " << s.exact_prompt_tokens << " of " << budget;
      EXPECT_LE(s.tokenizer_calls, 12) << s.id;
      sample_calls += s.tokenizer_calls;
    }
    // Calls: the first sample pays for the bootstrap (1 small count, then
    // usually 2 secant steps); later ones start from the shared estimate and
    // need 1, or 2 when their text tokenizes differently (cwe, fwe). Bound:
    // 4 for the first + 2 per later sample, + vt's example fit (<= 5).
    EXPECT_LE(sample_calls, 4 + 2 * (run.n - 1)) << run.task << " " << run.length;
    EXPECT_LE(stats.setup_calls, 5) << run.task;
    EXPECT_EQ(stats.tokenizer_calls, sample_calls + stats.setup_calls);
  }
}

}  // namespace
}  // namespace evalrun
