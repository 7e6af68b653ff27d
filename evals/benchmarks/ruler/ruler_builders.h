// The per-family sample builders behind GenerateRulerSamples (internal to
// the RULER part; tests use them directly).
//
// A builder is one call of the script's generate_input_output for one task.
// Its constructor makes the draws that do not depend on the haystack size,
// in RULER's order; Build(n) replays the size-dependent draws from the saved
// stream state, so every trial size of the fit gives a reproducible text,
// and Result(n) hands back the gold outputs and the stream state after the
// build of n (the state the next call starts from). The nvidia profile
// makes one builder per call of generate_input_output and builds it once.
// With RulerBuildContext::python_exceptions set, a draw that raises in
// Python (vt's IndexError on coinciding names, random.sample asked for more
// than its population) is reported in Result(n).raised, with the streams as
// they stand after the draws made before the exception. Not thread-safe;
// one sample at a time.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_RULER_BUILDERS_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_RULER_BUILDERS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evals/benchmarks/ruler/np_random.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_length.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/base/py_random.h"
#include "evals/base/status.h"

namespace evalrun {

// The random streams of one task and length: `py` stands for Python's
// global `random`, `np` for numpy's global RNG (see ruler_tasks.h).
struct RulerStreams {
  PyRandom py{42};
  NpRandom np{42};
};

// Templates and answer prefixes of constants.py, and the fixed texts.
struct RulerTemplate {
  const char* task_template;
  const char* answer_prefix;
};
RulerTemplate RulerTemplateFor(RulerFamily family);
inline constexpr char kRulerNeedle[] =
    "One of the special magic {type_needle_v} for {key} is: {value}.";
inline constexpr char kRulerNoise[] =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

// str.format for the named fields given (other "{...}" are copied as is).
std::string RulerFormat(std::string_view tmpl,
                        const std::vector<std::pair<std::string_view, std::string_view>>& fields);
// Python's str.replace(from, to) (all non-overlapping occurrences, left to right).
std::string RulerReplaceAll(std::string_view s, std::string_view from, std::string_view to);
// niah.py's singular rewrite of the whole template (Some->A, are all->is,
// are->is, answers->answer, in this order).
std::string RulerSingularTemplate(std::string_view tmpl);
// str(uuid.UUID(int=random.getrandbits(128), version=4)).
std::string RulerUuid4(PyRandom* rng);
// ''.join(random.choices(alphabet, k=k)).
std::string RulerChoices(std::string_view alphabet, int k, PyRandom* rng);
// variable_tracking.py randomize_icl(example): the last num_hops + 1 words
// get fresh upper-case names of their length (random.choices, one after the
// other, each applied with str.replace), then "12345" a fresh
// np.random.randint(10000, 99999).
std::string RulerVtRandomizeIcl(std::string example, int num_hops, PyRandom* py, NpRandom* np);

// freq_words_extraction.py's zeta(alpha) (scipy.special.zeta): exactly
// scipy's 1.6449340668482264 for alpha 2 (synthetic.yaml's), else an
// Euler-Maclaurin sum (close, not bit-exact).
double RulerZeta(double alpha);
// int(num_words * k**-alpha / zeta) for rank k >= 1, as a count of copies
// ([w] * count is empty for a count <= 0). The C library's pow: numpy's
// k**-2.0 may be 1 ulp off it (SVML), which leaves the truncated counts
// unchanged (tests/benchmarks/ruler/ruler_zipf_test.cc).
int64_t RulerZipfCount(int64_t num_words, int rank, double alpha, double zeta);

// Helpers shared by the builders.
inline constexpr char kRulerUpper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
inline constexpr char kRulerLower[] = "abcdefghijklmnopqrstuvwxyz";
const char* RulerNeedleTypeName(RulerNeedleType type);  // "numbers", "words", "uuids"
std::string RulerFullTemplate(RulerFamily family);      // task template + answer prefix
int64_t RulerDigitsUpTo(int64_t m);                     // sum of the digit counts of 1..m
std::string RulerJoin(const std::vector<std::string_view>& parts, std::string_view sep);

// Sentence splits of essay prefixes, shared by the samples of one call:
// the text for n words is " ".join(haystack[:n]) (cycling the corpus), and
// its Punkt split is kept for the last few n.
class RulerEssayCache {
 public:
  explicit RulerEssayCache(const RulerInputs* inputs) : inputs_(inputs) {}
  int64_t TextBytes(int n) const;  // bytes of the joined text (before strip)
  struct Entry {
    int n = -1;
    std::string text;  // stripped
    std::vector<std::pair<size_t, size_t>> spans;
  };
  const Entry& Get(int n);

 private:
  const RulerInputs* inputs_;
  std::vector<Entry> entries_;  // most recent last
};

// Everything the builders share within one GenerateRulerSamples call.
struct RulerBuildContext {
  const RulerInputs* inputs = nullptr;
  const RulerTaskConfig* task = nullptr;
  int length = 0;
  uint64_t seed = 42;
  RulerEssayCache* essay = nullptr;   // niah essay tasks
  std::vector<std::string> cwe_pool;  // cwe: wonderwords pool, shuffled with Random(seed)
  // vt, fit profile: the in-context example each sample starts with,
  // randomised inside Build ("" while building it, and always "" for the
  // nvidia profile, which inserts it itself).
  std::string vt_icl_example;
  bool python_exceptions = false;  // nvidia: report Python's exceptions (above)
};

struct RulerBuilt {
  std::vector<std::string> gold;
  RulerStreams after;
  std::string raised;  // python_exceptions: the exception Python raises here ("" = none)
};

class RulerSampleBuilder : public SizedPrompt {
 public:
  // Valid after Build(n) succeeded.
  const RulerBuilt& Result(int n) const { return results_.at(n); }

 protected:
  std::map<int, RulerBuilt> results_;
};

// The per-family builders (ruler_niah.cc, ruler_vt.cc, ruler_words.cc,
// ruler_qa.cc); MakeRulerBuilder picks one.
std::unique_ptr<RulerSampleBuilder> MakeNiahBuilder(const RulerBuildContext* ctx,
                                                    const RulerStreams& start);
std::unique_ptr<RulerSampleBuilder> MakeVtBuilder(const RulerBuildContext* ctx,
                                                  const RulerStreams& start, bool icl);
// Fails (NotFound) when the few-shot example cannot draw its words.
Status MakeCweBuilder(const RulerBuildContext* ctx, const RulerStreams& start,
                      std::unique_ptr<RulerSampleBuilder>* out);
std::unique_ptr<RulerSampleBuilder> MakeFweBuilder(const RulerBuildContext* ctx,
                                                   const RulerStreams& start);
std::unique_ptr<RulerSampleBuilder> MakeQaBuilder(const RulerBuildContext* ctx,
                                                  const RulerQaSet* set, int index,
                                                  const RulerStreams& start);

// index: the sample number (qa: the question). `start`: the streams at the
// start of the sample. vt_icl: build vt's in-context example instead (3-letter
// names, value 12345, no example prefix).
Status MakeRulerBuilder(const RulerBuildContext* ctx, int index, const RulerStreams& start,
                        bool vt_icl, std::unique_ptr<RulerSampleBuilder>* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_RULER_BUILDERS_H_
