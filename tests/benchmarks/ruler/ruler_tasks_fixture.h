// What the RULER task tests share (ruler_tasks_test.cc, ruler_builders_test.cc,
// ruler_builder_structure_test.cc): a tokenizer that counts words, the real
// inputs from ../shared/datasets/ruler (loaded once per process, on first
// use), the tasks by name, and one builder at a fixed size.
//
// The tests' expected hashes and strings were produced by running RULER's
// generator code (NVIDIA/RULER scripts/data/synthetic: niah.py,
// variable_tracking.py, common_words_extraction.py, freq_words_extraction.py,
// qa.py) under CPython 3.11 with random.seed(42), nltk 3.8's
// PunktSentenceTokenizer built from datasets/punkt-english, and Debian's
// numpy 1.24.2 (np.random.seed(42)), e.g. the vt case with
// variable_tracking.py's own generate_input_output and randomize_icl.
#ifndef EVALRUN_TESTS_BENCHMARKS_RULER_RULER_TASKS_FIXTURE_H_
#define EVALRUN_TESTS_BENCHMARKS_RULER_RULER_TASKS_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "evals/base/py_random.h"
#include "evals/benchmarks/ruler/np_random.h"
#include "evals/benchmarks/ruler/ruler_builders.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/support/test_paths.h"

namespace evalrun::ruler_testing {

// Counts ceil(len/5) per whitespace-separated word plus one per newline;
// CountChat adds 9 for the chat template. Not additive across joins.
class FakeTokenizer : public testing::CountingTokenizer {
 public:
  FakeTokenizer() : CountingTokenizer(Words, [](std::string_view content) { return Words(content) + 9; }) {}
  static int Words(std::string_view t) {
    int n = 0;
    size_t i = 0;
    while (i < t.size()) {
      if (t[i] == '\n') {
        ++n;
        ++i;
      } else if (t[i] == ' ') {
        ++i;
      } else {
        size_t j = i;
        while (j < t.size() && t[j] != ' ' && t[j] != '\n') ++j;
        n += static_cast<int>((j - i + 4) / 5);
        i = j;
      }
    }
    return n;
  }
};

inline std::string RulerDir() { return testing::DatasetsDir() + "/ruler"; }

// The real inputs, loaded once (all tasks; qa files are absent there).
inline const RulerInputs& Inputs() {
  static const RulerInputs* inputs = [] {
    auto* in = new RulerInputs;
    const Status st = LoadRulerInputs(RulerDir(), RulerLoadOptions{}, in);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return in;
  }();
  return *inputs;
}

inline RulerTaskConfig Task(const std::string& name) {
  RulerTaskConfig t;
  EXPECT_TRUE(RulerTaskByName(name, &t).ok()) << name;
  return t;
}

// The task with the fit profile (these tests generate with it;
// tests/benchmarks/ruler/ruler_nvidia_test.cc has the nvidia profile's).
inline RulerTaskConfig FitTask(const std::string& name) {
  RulerTaskConfig t = Task(name);
  t.profile = RulerProfile::kFit;
  return t;
}

// One builder at a fixed haystack size, outside the length search.
class BuildFixture {
 public:
  BuildFixture(const RulerInputs* in, RulerTaskConfig task, int length)
      : task_(std::move(task)), essay_(in) {
    ctx_.inputs = in;
    ctx_.task = &task_;
    ctx_.length = length;
    ctx_.seed = 42;
    ctx_.essay = &essay_;
    if (task_.family == RulerFamily::kCommonWords) {
      ctx_.cwe_pool = in->cwe_words;
      PyRandom(42).Shuffle(&ctx_.cwe_pool);
    }
  }
  BuildFixture(const BuildFixture&) = delete;
  RulerBuildContext* ctx() { return &ctx_; }

  // Builds sample `index` at n from `start`; returns the text.
  std::string Build(int n, const RulerStreams& start, RulerBuilt* built = nullptr, bool icl = false,
                    int index = 0) {
    std::unique_ptr<RulerSampleBuilder> b;
    Status st = MakeRulerBuilder(&ctx_, index, start, icl, &b);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return "";
    std::string text;
    st = b->Build(n, &text);
    EXPECT_TRUE(st.ok()) << st.ToString();
    int64_t proxy = 0;
    EXPECT_TRUE(b->ProxyBytes(n, &proxy).ok());
    proxy_ = proxy;
    if (built) *built = b->Result(n);
    return text;
  }
  int64_t last_proxy() const { return proxy_; }

 private:
  RulerTaskConfig task_;
  RulerEssayCache essay_;
  RulerBuildContext ctx_;
  int64_t proxy_ = 0;
};

inline RulerStreams Fresh() { return RulerStreams{PyRandom(42), NpRandom(42)}; }

}  // namespace evalrun::ruler_testing

#endif  // EVALRUN_TESTS_BENCHMARKS_RULER_RULER_TASKS_FIXTURE_H_
