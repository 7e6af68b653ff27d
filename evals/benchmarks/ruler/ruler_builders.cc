#include "evals/benchmarks/ruler/ruler_builders.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace evalrun {

// ---------------------------------------------------------------------------
// Text helpers

RulerTemplate RulerTemplateFor(RulerFamily family) {
  // scripts/data/synthetic/constants.py (TASKS[...]['template'], ['answer_prefix']).
  switch (family) {
    case RulerFamily::kNiah:
      return {
          "Some special magic {type_needle_v} are hidden within the following text. Make sure "
          "to memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\n"
          "What are all the special magic {type_needle_v} for {query} mentioned in the "
          "provided text?",
          " The special magic {type_needle_v} for {query} mentioned in the provided text are"};
    case RulerFamily::kVariableTracking:
      return {
          "Memorize and track the chain(s) of variable assignment hidden in the following "
          "text.\n\n{context}\nQuestion: Find all variables that are assigned the value "
          "{query} in the text above.",
          " Answer: According to the chain(s) of variable assignment in the text above, "
          "{num_v} variables are assigned the value {query}, they are: "};
    case RulerFamily::kCommonWords:
      return {
          "Below is a numbered list of words. In these words, some appear more often than "
          "others. Memorize the ones that appear most often.\n{context}\nQuestion: What are "
          "the 10 most common words in the above list?",
          " Answer: The top 10 words that appear most often in the list are:"};
    case RulerFamily::kFreqWords:
      return {
          "Read the following coded text and track the frequency of each coded word. Find "
          "the three most frequently appeared coded words. {context}\nQuestion: Do not "
          "provide any explanation. Please ignore the dots '....'. What are the three most "
          "frequently appeared words in the above coded text?",
          " Answer: According to the coded text above, the three most frequently appeared "
          "words are:"};
    case RulerFamily::kQa:
      return {
          "Answer the question based on the given documents. Only give me the answer and do "
          "not output any other words.\n\nThe following are given documents.\n\n{context}\n\n"
          "Answer the question based on the given documents. Only give me the answer and do "
          "not output any other words.\n\nQuestion: {query}",
          " Answer:"};
  }
  return {"", ""};
}

std::string RulerFormat(std::string_view tmpl,
                        const std::vector<std::pair<std::string_view, std::string_view>>& fields) {
  size_t extra = 0;
  for (const auto& f : fields) extra += f.second.size();
  std::string out;
  out.reserve(tmpl.size() + extra);
  size_t i = 0;
  while (i < tmpl.size()) {
    const size_t open = tmpl.find('{', i);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(i));
      break;
    }
    out.append(tmpl.substr(i, open - i));
    const size_t close = tmpl.find('}', open + 1);
    bool done = false;
    if (close != std::string_view::npos) {
      const std::string_view name = tmpl.substr(open + 1, close - open - 1);
      for (const auto& f : fields) {
        if (f.first == name) {
          out.append(f.second);
          i = close + 1;
          done = true;
          break;
        }
      }
    }
    if (!done) {
      out.push_back('{');
      i = open + 1;
    }
  }
  return out;
}

std::string RulerReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  if (from.empty()) return std::string(s);
  out.reserve(s.size());
  size_t i = 0;
  while (true) {
    const size_t p = s.find(from, i);
    if (p == std::string_view::npos) break;
    out.append(s.substr(i, p - i));
    out.append(to);
    i = p + from.size();
  }
  out.append(s.substr(i));
  return out;
}

std::string RulerSingularTemplate(std::string_view tmpl) {
  std::string t = RulerReplaceAll(tmpl, "Some", "A");
  t = RulerReplaceAll(t, "are all", "is");
  t = RulerReplaceAll(t, "are", "is");
  return RulerReplaceAll(t, "answers", "answer");
}

std::string RulerUuid4(PyRandom* rng) {
  // getrandbits(128) fills 32-bit words least significant first, so it is
  // getrandbits(64) (low half) then getrandbits(64) (high half).
  uint64_t lo = rng->GetRandBits(64);
  uint64_t hi = rng->GetRandBits(64);
  // uuid.UUID(int=..., version=4): variant 10xx at bits 62-63 of the low
  // half, version 4 at bits 12-15 of the high half.
  lo &= ~(0xC000ULL << 48);
  lo |= 0x8000ULL << 48;
  hi &= ~0xF000ULL;
  hi |= 0x4000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xFFFF),
                static_cast<unsigned long long>(hi & 0xFFFF),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

std::string RulerChoices(std::string_view alphabet, int k, PyRandom* rng) {
  // random.choices without weights: population[floor(random() * n)].
  const double n = static_cast<double>(alphabet.size());
  std::string out;
  out.reserve(k);
  for (int i = 0; i < k; ++i)
    out.push_back(alphabet[static_cast<size_t>(std::floor(rng->Random() * n))]);
  return out;
}

// ---------------------------------------------------------------------------
// Essay prefixes

int64_t RulerEssayCache::TextBytes(int n) const {
  const int64_t words = static_cast<int64_t>(inputs_->essay_word_starts.size());
  const int64_t total = static_cast<int64_t>(inputs_->essay_text.size());
  if (n <= 0 || words == 0) return 0;
  auto end_of = [&](int64_t j) {  // bytes of " ".join(haystack[:j+1])
    return j + 1 < words ? static_cast<int64_t>(inputs_->essay_word_starts[j + 1]) - 1 : total;
  };
  const int64_t cycles = n / words, rest = n % words;
  if (cycles == 0) return end_of(rest - 1);
  return cycles * total + (cycles - 1) + (rest > 0 ? 1 + end_of(rest - 1) : 0);
}

const RulerEssayCache::Entry& RulerEssayCache::Get(int n) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].n == n) return entries_[i];
  }
  const std::string& essay = inputs_->essay_text;
  const size_t words = inputs_->essay_word_starts.size();
  Entry e;
  e.n = n;
  // " ".join((haystack * repeats)[:n]): whole copies joined by " ", then a prefix.
  const size_t cycles = static_cast<size_t>(n) / words, rest = static_cast<size_t>(n) % words;
  e.text.reserve(static_cast<size_t>(TextBytes(n)));
  for (size_t c = 0; c < cycles; ++c) {
    if (c > 0) e.text.push_back(' ');
    e.text.append(essay);
  }
  if (rest > 0) {
    if (cycles > 0) e.text.push_back(' ');
    const size_t end = rest < words ? inputs_->essay_word_starts[rest] - 1 : essay.size();
    e.text.append(essay, 0, end);
  }
  // .strip(): the collapsed text holds no whitespace but ' '.
  const size_t b = e.text.find_first_not_of(' ');
  if (b == std::string::npos) {
    e.text.clear();
  } else {
    e.text.erase(e.text.find_last_not_of(' ') + 1);
    e.text.erase(0, b);
  }
  e.spans = inputs_->punkt->SplitSpans(e.text);
  if (entries_.size() >= 3) entries_.erase(entries_.begin());
  entries_.push_back(std::move(e));
  return entries_.back();
}

const char* RulerNeedleTypeName(RulerNeedleType t) {
  switch (t) {
    case RulerNeedleType::kNumbers:
      return "numbers";
    case RulerNeedleType::kWords:
      return "words";
    case RulerNeedleType::kUuids:
      return "uuids";
  }
  return "";
}

std::string RulerFullTemplate(RulerFamily family) {
  const RulerTemplate t = RulerTemplateFor(family);
  return std::string(t.task_template) + t.answer_prefix;
}

int64_t RulerDigitsUpTo(int64_t m) {
  int64_t sum = 0;
  for (int64_t lo = 1, d = 1; lo <= m; lo *= 10, ++d)
    sum += (std::min(m, lo * 10 - 1) - lo + 1) * d;
  return sum;
}

std::string RulerJoin(const std::vector<std::string_view>& parts, std::string_view sep) {
  size_t total = 0;
  for (std::string_view p : parts) total += p.size() + sep.size();
  std::string out;
  out.reserve(total);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

Status MakeRulerBuilder(const RulerBuildContext* ctx, int index, const RulerStreams& start,
                        bool vt_icl, std::unique_ptr<RulerSampleBuilder>* out) {
  const RulerTaskConfig& t = *ctx->task;
  switch (t.family) {
    case RulerFamily::kNiah:
      if (t.type_haystack == RulerHaystack::kEssay && (!ctx->essay || !ctx->inputs->punkt)) {
        return Status::Internal("niah essay builder without the essay or Punkt");
      }
      *out = MakeNiahBuilder(ctx, start);
      return Status::Ok();
    case RulerFamily::kVariableTracking:
      *out = MakeVtBuilder(ctx, start, vt_icl);
      return Status::Ok();
    case RulerFamily::kCommonWords:
      return MakeCweBuilder(ctx, start, out);
    case RulerFamily::kFreqWords:
      *out = MakeFweBuilder(ctx, start);
      return Status::Ok();
    case RulerFamily::kQa: {
      const RulerQaSet* set = t.dataset == "squad"
                                  ? (ctx->inputs->squad ? &*ctx->inputs->squad : nullptr)
                                  : (ctx->inputs->hotpotqa ? &*ctx->inputs->hotpotqa : nullptr);
      if (!set) return Status::Internal("qa builder without its dataset");
      if (index < 0 || static_cast<size_t>(index) >= set->qas.size()) {
        return Status::InvalidInput(t.name + ": sample " + std::to_string(index) + " but " +
                                    set->path + " has only " + std::to_string(set->qas.size()) +
                                    " answerable questions");
      }
      *out = MakeQaBuilder(ctx, set, index, start);
      return Status::Ok();
    }
  }
  return Status::Internal("unknown RULER family");
}

}  // namespace evalrun
