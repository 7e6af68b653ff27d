#include "evals/benchmarks/gpqa/gpqa_data.h"

#include "datasets/manifest.h"

#include <re2/re2.h>

#include <string>
#include <unordered_set>
#include <utility>

#include "datasets/csv.h"
#include "datasets/zip_reader.h"

namespace evalrun {

std::string GpqaZipPassword() {
  const Manifest* m = FindManifest("gpqa");
  return m ? m->raw.value("zip_password", std::string()) : std::string();
}

namespace {

// The columns LoadGpqa reads, in the order of kColumn* below.
const std::vector<std::string_view>& GpqaColumns() {
  static const std::vector<std::string_view> columns = {
      "Record ID",          "Question",           "Correct Answer",    "Incorrect Answer 1",
      "Incorrect Answer 2", "Incorrect Answer 3", "High-level domain", "Subdomain"};
  return columns;
}
enum Column {
  kColumnRecordId,
  kColumnQuestion,
  kColumnCorrect,
  kColumnIncorrect1,
  kColumnIncorrect2,
  kColumnIncorrect3,
  kColumnDomain,
  kColumnSubdomain,
};

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// splitmix64 (Steele, Lea, Flood 2014; constants as in Vigna's reference).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0: draws below 2^64 mod n are rejected, so every
  // residue is equally likely.
  uint64_t Below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // == 2^64 mod n
    while (true) {
      uint64_t r = Next();
      if (r >= threshold) return r % n;
    }
  }

 private:
  uint64_t state_;
};

const std::string& Answer(const GpqaQuestion& q, int index) {
  return index == 0 ? q.correct : q.incorrect[index - 1];
}

void AppendOptions(const GpqaQuestion& q, const std::array<int, 4>& order, std::string* out) {
  for (int k = 0; k < 4; ++k) {
    if (k > 0) out->push_back('\n');
    out->push_back(static_cast<char>('A' + k));
    out->append(") ");
    out->append(Answer(q, order[k]));
  }
}

}  // namespace

Status LoadGpqa(const std::string& zip_path, const std::string& member, const std::string& password,
                std::vector<GpqaQuestion>* out) {
  const std::string where = zip_path + ":" + member;
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadZipMember(zip_path, member, password, &text));

  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> lines;
  EVALRUN_RETURN_IF_ERROR(ParseCsv(text, &rows, &lines).Prefixed(where));
  if (rows.empty()) return Status::InvalidInput(where + ": empty CSV (expected a header row)");
  const std::vector<std::string>& header = rows[0];
  std::vector<size_t> col;
  EVALRUN_RETURN_IF_ERROR(CsvColumnIndices(header, GpqaColumns(), &col).Prefixed(where));

  out->clear();
  out->reserve(rows.size() - 1);
  std::unordered_set<std::string_view> seen_ids;
  seen_ids.reserve(rows.size());
  for (size_t r = 1; r < rows.size(); ++r) {
    std::vector<std::string>& row = rows[r];
    const std::string at = where + ": line " + std::to_string(lines[r]);
    if (row.size() != header.size()) {
      return Status::InvalidInput(at + ": record has " + std::to_string(row.size()) +
                                  " fields, the header has " + std::to_string(header.size()));
    }
    for (int c : {kColumnRecordId, kColumnQuestion, kColumnCorrect, kColumnIncorrect1,
                  kColumnIncorrect2, kColumnIncorrect3}) {
      if (row[col[c]].empty()) {
        return Status::InvalidInput(at + ": column '" + std::string(GpqaColumns()[c]) +
                                    "' is empty (expected text)");
      }
    }
    GpqaQuestion q;
    q.record_id = std::move(row[col[kColumnRecordId]]);
    q.question = std::move(row[col[kColumnQuestion]]);
    q.correct = std::move(row[col[kColumnCorrect]]);
    q.incorrect[0] = std::move(row[col[kColumnIncorrect1]]);
    q.incorrect[1] = std::move(row[col[kColumnIncorrect2]]);
    q.incorrect[2] = std::move(row[col[kColumnIncorrect3]]);
    q.domain = std::move(row[col[kColumnDomain]]);
    q.subdomain = std::move(row[col[kColumnSubdomain]]);
    out->push_back(std::move(q));
  }
  // Checked after the moves: the views point into *out, which no longer grows.
  for (const GpqaQuestion& q : *out) {
    if (!seen_ids.insert(q.record_id).second) {
      return Status::InvalidInput(where + ": Record ID '" + q.record_id +
                                  "' appears more than once (expected unique ids)");
    }
  }
  return Status::Ok();
}

std::array<int, 4> GpqaChoiceOrder(uint64_t seed, std::string_view record_id) {
  std::string key = std::to_string(seed);
  key.push_back(':');
  key.append(record_id);
  SplitMix64 rng(Fnv1a64(key));
  std::array<int, 4> order = {0, 1, 2, 3};
  for (int i = 3; i > 0; --i) {
    int j = static_cast<int>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

char GpqaCorrectLetter(const std::array<int, 4>& order) {
  int seen = 0;
  char letter = 0;
  for (int k = 0; k < 4; ++k) {
    if (order[k] < 0 || order[k] > 3 || (seen & (1 << order[k]))) return 0;
    seen |= 1 << order[k];
    if (order[k] == 0) letter = static_cast<char>('A' + k);
  }
  return letter;
}

bool IsGpqaPromptProfile(std::string_view profile) {
  for (std::string_view known : kGpqaPromptProfiles) {
    if (profile == known) return true;
  }
  return false;
}

std::string GpqaPrompt(const GpqaQuestion& q, const std::array<int, 4>& order,
                       std::string_view profile) {
  if (GpqaCorrectLetter(order) == 0) return "";
  std::string prompt;
  if (profile == "letter") {
    prompt.append(q.question);
    prompt.append("\n\n");
    AppendOptions(q, order, &prompt);
    prompt.append("\n\nAnswer with only the letter (A, B, C or D) of the correct option.");
    return prompt;
  }
  if (profile == "simple-evals") {
    // openai/simple-evals common.py QUERY_TEMPLATE_MULTICHOICE (after its
    // .strip()), filled by format_multichoice_question.
    prompt.append(
        "Answer the following multiple choice question. The last line of your response should "
        "be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
        "ABCD. Think step by step before answering.\n\n");
    prompt.append(q.question);
    prompt.append("\n\n");
    AppendOptions(q, order, &prompt);
    return prompt;
  }
  return "";
}

char ExtractSimpleEvalsLetter(std::string_view response) {
  // openai/simple-evals common.py ANSWER_PATTERN_MULTICHOICE; gpqa_eval.py
  // takes re.search(...).group(1), the leftmost match.
  static const RE2* const pattern = new RE2(R"((?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?)");
  re2::StringPiece letter;
  if (!RE2::PartialMatch(re2::StringPiece(response.data(), response.size()), *pattern, &letter)) {
    return 0;
  }
  return letter.size() == 1 ? letter[0] : 0;
}

}  // namespace evalrun
