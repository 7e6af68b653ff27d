// The files RULER's generators read, loaded once.
//
// Layout of `ruler_dir` (<data-dir>/ruler, see
// /work/shared/datasets/ruler/PROVENANCE.md):
//   PaulGrahamEssays.json       {"text": ...}: the essay haystack (niah essay tasks)
//   wonderwords/nounlist.txt    nouns (wonderwords 3.0.0)
//   wonderwords/adjectivelist.txt
//   wonderwords/verblist.txt
//   squad.json                  optional: SQuAD v2.0 dev-v2.0.json (qa_1)
//   hotpotqa.json               optional: hotpot_dev_distractor_v1.json (qa_2)
//   english_words.json          optional: RULER's extra cwe word pool
// and the Punkt model in <data-dir>/punkt-english (essay sentence splits).
// The optional files are verified by sha256 (the values of PROVENANCE.md).
//
// Thread-safety: the inputs are immutable once loaded; share them read-only.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_RULER_INPUTS_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_RULER_INPUTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evals/base/status.h"
#include "scorers/punkt.h"

namespace evalrun {

// sorted(set(f"{adj}-{noun}" for adj in adjs for noun in nouns)) without
// materialising its ~6.2 million strings: adjectives whose blocks cannot
// interleave are indexed arithmetically; the few that can ("blue" and
// "blue-eyed", ...) are merged into clusters that are sorted explicitly.
// Immutable after Init; thread-safe.
class NiahWordList {
 public:
  void Init(const std::vector<std::string>& adjs, const std::vector<std::string>& nouns);
  size_t size() const { return size_; }
  // The i-th string of the sorted list (i < size()).
  std::string At(size_t i) const;

 private:
  struct Cluster {
    size_t start = 0;                 // index of its first string
    int adj = -1;                     // >= 0: a single adjective's block
    std::vector<std::string> merged;  // else: the cluster's sorted unique strings
  };
  std::vector<std::string> adjs_;   // sorted, unique
  std::vector<std::string> nouns_;  // sorted, unique
  std::vector<Cluster> clusters_;
  size_t size_ = 0;
};

// One answerable question of qa.py's read_squad / read_hotpotqa.
struct RulerQaItem {
  std::string query;
  std::vector<std::string> outputs;  // gold answers (duplicates kept)
  std::vector<int> context;          // its own documents (indices into docs)
  std::vector<int> more_context;     // SQuAD: the article's other paragraphs
};

struct RulerQaSet {
  std::string path;
  std::vector<std::string> docs;  // sorted unique documents
  std::vector<RulerQaItem> qas;   // in file order
};

// Immutable once loaded: share one across threads, read-only. Move-only.
struct RulerInputs {
  std::string ruler_dir;

  // Essay haystack: re.sub(r'\s+', ' ', text) (Python's Unicode \s), so
  // haystack = essay_text.split(' ') and word i is
  // essay_text[word_starts[i], word_starts[i+1] - 1) (the last one runs to
  // the end). Empty when the essay was not loaded.
  std::string essay_text;
  std::vector<uint32_t> essay_word_starts;
  std::unique_ptr<PunktModel> punkt;  // null when not loaded

  NiahWordList niah_words;                 // niah "words" keys/values (empty: not loaded)
  std::vector<std::string> cwe_words;      // sorted(set(nouns + adjs + verbs)), unshuffled
  std::vector<std::string> english_words;  // english_words.json values in file order (optional)
  std::optional<RulerQaSet> squad;         // qa_1
  std::optional<RulerQaSet> hotpotqa;      // qa_2

  // {"ruler/<file>", sha256} of every file read, for the run record.
  std::vector<std::pair<std::string, std::string>> file_sha256;
  // Optional files that were not found, one line each, naming the file,
  // what it is, its sha256 and where to put it (printed as skip notes).
  std::vector<std::string> missing;
};

struct RulerLoadOptions {
  // Load only what these tasks need (names as RulerTaskByName); empty = all.
  std::vector<std::string> tasks;
  // Punkt parameters; empty = "<ruler_dir>/../punkt-english".
  std::string punkt_dir;
};

// Loads what `options.tasks` need from `ruler_dir`. Required files that are
// missing or malformed fail the load (NotFound / InvalidInput naming the
// file and the field); missing optional files are listed in out->missing; an
// optional file whose sha256 differs from PROVENANCE.md fails with
// InvalidInput (both hashes in the message). Unknown task names fail with a
// "did you mean". *out is fully replaced on success.
Status LoadRulerInputs(const std::string& ruler_dir, const RulerLoadOptions& options,
                       RulerInputs* out);

// re.sub(r'\s+', ' ', text) with Python's Unicode \s, on UTF-8 text. Bytes
// are decoded by shape alone (py::Utf8Check::kShapeOnly); an undecodable
// byte is copied as it is.
std::string RulerCollapseWhitespace(std::string_view text);

// Expected sha256 of the optional files (PROVENANCE.md).
inline constexpr char kRulerSquadSha256[] =
    "80a5225e94905956a6446d296ca1093975c4d3b3260f1d6c8f68bc2ab77182d8";
inline constexpr char kRulerHotpotSha256[] =
    "4e9ecb5c8d3b719f624d66b60f8d56bf227f03914f5f0753d6fa1b359d7104ea";
inline constexpr char kRulerEnglishWordsSha256[] =
    "affcd6d45fdf3cc843d585c99c97ad615094e760e6c4756b654bab6c73bc2eca";

// Parsers used by LoadRulerInputs, exposed so tests can feed small inline
// documents. `name` is used in error messages.
Status ParseRulerSquad(std::string_view json_text, const std::string& name, RulerQaSet* out);
Status ParseRulerHotpot(std::string_view json_text, const std::string& name, RulerQaSet* out);
Status ParseRulerEssay(std::string_view json_text, const std::string& name, RulerInputs* out);
// wonderwords' _get_words_from_text_file: one word per line, trailing
// whitespace removed.
std::vector<std::string> ParseRulerWordList(std::string_view text);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_RULER_INPUTS_H_
