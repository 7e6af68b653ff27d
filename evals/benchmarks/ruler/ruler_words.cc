// common_words_extraction.py and freq_words_extraction.py.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// common_words_extraction.py

class CweBuilder : public RulerSampleBuilder {
 public:
  CweBuilder(const RulerBuildContext* ctx, const RulerStreams& start)
      : ctx_(ctx), t_(*ctx->task), py_(start.py), np_(start.np) {
    const bool small = ctx->length < 4096;
    const int ex_n = small ? 20 : 40, ex_cr = small ? 3 : 10, ex_ur = small ? 1 : 3;
    cr_ = small ? 6 : t_.freq_cw;
    ur_ = small ? 1 : t_.freq_ucw;
    std::vector<std::string> shots;
    for (int f = 0; f < t_.num_fewshot; ++f) {
      std::vector<const std::string*> words;
      status_ = SampleWords(ex_n, &py_, &words);
      if (!status_.ok()) {
        if (ctx->python_exceptions && status_.code() == Status::Code::kNotFound) {
          raised_ = kSampleTooLarge;  // random.sample raises before drawing
          status_ = Status::Ok();
        }
        return;
      }
      std::string answer;
      for (int i = 0; i < std::min<int>(t_.num_cw, static_cast<int>(words.size())); ++i) {
        answer += (i ? " " : "") + std::to_string(i + 1) + ". " + *words[i];
      }
      shots.push_back(Input(Context(words, ex_cr, ex_ur)) + " " + answer);
    }
    for (size_t i = 0; i < shots.size(); ++i) few_shots_ += (i ? "\n" : "") + shots[i];
    fixed_bytes_ = static_cast<int64_t>(few_shots_.size() + 1 + Input("").size());
  }

  const Status& status() const { return status_; }
  int MinUnits() const override { return t_.num_cw; }
  int MaxUnits() const override {
    return static_cast<int>(std::max(ctx_->cwe_pool.size(), ctx_->inputs->english_words.size()));
  }

  Status ProxyBytes(int n, int64_t* bytes) override {
    PyRandom r = py_;
    std::vector<const std::string*> words;
    EVALRUN_RETURN_IF_ERROR(SampleWords(n, &r, &words));
    const int64_t common = std::min<int64_t>(t_.num_cw, n), uncommon = n - common;
    const int64_t m = common * cr_ + uncommon * ur_;
    int64_t b = fixed_bytes_ + RulerDigitsUpTo(m) + 3 * m - (m > 0 ? 1 : 0);
    for (int64_t i = 0; i < n; ++i)
      b += static_cast<int64_t>(words[i]->size()) * (i < common ? cr_ : ur_);
    *bytes = b;
    return Status::Ok();
  }

  Status Build(int n, std::string* text) override {
    PyRandom r = py_;
    text->clear();
    std::vector<const std::string*> words;
    Status st = raised_.empty() ? SampleWords(n, &r, &words) : Status::Ok();
    if (!raised_.empty() || (!st.ok() && ctx_->python_exceptions && st.code() == Status::Code::kNotFound)) {
      results_[n] = {{}, {r, np_}, raised_.empty() ? kSampleTooLarge : raised_};
      return Status::Ok();
    }
    EVALRUN_RETURN_IF_ERROR(st);
    *text = few_shots_ + "\n" + Input(Context(words, cr_, ur_));
    RulerBuilt built;
    for (int i = 0; i < std::min<int>(t_.num_cw, n); ++i) built.gold.push_back(*words[i]);
    built.after = {r, np_};
    results_[n] = std::move(built);
    return Status::Ok();
  }

 private:
  static constexpr char kSampleTooLarge[] =
      "ValueError: Sample larger than population or is negative";

  // get_example's draw: random.sample(words, k) from the shuffled wonderwords
  // pool, or from english_words when k exceeds it. NotFound (before any
  // draw, as random.sample raises) when k exceeds the pool it picked.
  Status SampleWords(int k, PyRandom* r, std::vector<const std::string*>* out) const {
    const std::vector<std::string>* pool = &ctx_->cwe_pool;
    if (k < 0) return Status::NotFound("cwe: a negative word count");
    if (static_cast<size_t>(k) > pool->size()) pool = &ctx_->inputs->english_words;
    if (static_cast<size_t>(k) > pool->size()) {
      return Status::NotFound(
          "cwe needs " + std::to_string(k) + " distinct words but the wonderwords pool has " +
          std::to_string(ctx_->cwe_pool.size()) +
          (ctx_->inputs->english_words.empty()
               ? "; put RULER's english_words.json (sha256 " +
                     std::string(kRulerEnglishWordsSha256) + ") in " + ctx_->inputs->ruler_dir
               : " and english_words.json " + std::to_string(pool->size())));
    }
    out->clear();
    for (size_t i : r->Sample(pool->size(), static_cast<size_t>(k))) out->push_back(&(*pool)[i]);
    return Status::Ok();
  }
  // common * cr + uncommon * ur, shuffled with Random(seed), numbered.
  std::string Context(const std::vector<const std::string*>& words, int cr, int ur) const {
    const size_t common = std::min<size_t>(t_.num_cw, words.size());
    std::vector<const std::string*> list;
    for (int c = 0; c < cr; ++c) list.insert(list.end(), words.begin(), words.begin() + common);
    for (int u = 0; u < ur; ++u) list.insert(list.end(), words.begin() + common, words.end());
    PyRandom(ctx_->seed).Shuffle(&list);
    std::string out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out.push_back(' ');
      out += std::to_string(i + 1);
      out += ". ";
      out += *list[i];
    }
    return out;
  }
  std::string Input(std::string_view context) const {
    const std::string num_cw = std::to_string(t_.num_cw);
    return RulerFormat(RulerFullTemplate(RulerFamily::kCommonWords),
                       {{"num_cw", num_cw}, {"context", context}, {"query", ""}});
  }

  const RulerBuildContext* ctx_;
  const RulerTaskConfig& t_;
  PyRandom py_;
  NpRandom np_;
  int cr_ = 30, ur_ = 3;
  std::string few_shots_;
  int64_t fixed_bytes_ = 0;
  Status status_;
  std::string raised_;  // python_exceptions: a few-shot draw raised
};

// ---------------------------------------------------------------------------
// freq_words_extraction.py

}  // namespace

double RulerZeta(double s) {
  if (s == 2.0) return 1.6449340668482264;  // float(mpmath.zeta(2)) == pi**2/6
  // Euler-Maclaurin: sum_{k<N} k^-s + N^(1-s)/(s-1) + N^-s/2 + Bernoulli terms.
  const int kN = 64;
  double sum = 0;
  for (int k = kN - 1; k >= 1; --k) sum += std::pow(k, -s);
  const double n = kN;
  sum += std::pow(n, 1 - s) / (s - 1) + 0.5 * std::pow(n, -s);
  sum += s / 12.0 * std::pow(n, -s - 1);
  sum -= s * (s + 1) * (s + 2) / 720.0 * std::pow(n, -s - 3);
  sum += s * (s + 1) * (s + 2) * (s + 3) * (s + 4) / 30240.0 * std::pow(n, -s - 5);
  return sum;
}

int64_t RulerZipfCount(int64_t num_words, int rank, double alpha, double zeta) {
  const int64_t c = static_cast<int64_t>(static_cast<double>(num_words) *
                                         std::pow(static_cast<double>(rank), -alpha) / zeta);
  return std::max<int64_t>(c, 0);
}

namespace {

class FweBuilder : public RulerSampleBuilder {
 public:
  FweBuilder(const RulerBuildContext* ctx, const RulerStreams& start)
      : ctx_(ctx), t_(*ctx->task), py_(start.py), np_(start.np) {
    const int vocab_size =
        t_.vocab_size > 0 ? t_.vocab_size : std::max(1, (ctx->length - t_.max_tokens) / 50);
    std::vector<std::string> vocab;
    std::set<std::string> seen;
    for (int i = 0; i < vocab_size; ++i) {
      vocab.push_back(RulerChoices(kRulerLower, t_.coded_wordlen, &py_));
      seen.insert(vocab.back());
    }
    while (static_cast<int>(seen.size()) < vocab_size) {
      vocab.push_back(RulerChoices(kRulerLower, t_.coded_wordlen, &py_));
      seen.insert(vocab.back());
    }
    vocab_.assign(seen.begin(), seen.end());  // sorted(set(vocab))
    PyRandom(ctx->seed).Shuffle(&vocab_);
    vocab_[0] = "...";  // the top rank is noise
    zeta_ = RulerZeta(t_.alpha);
    fixed_bytes_ = static_cast<int64_t>(Input("").size());
  }

  int MinUnits() const override { return 1; }
  int MaxUnits() const override { return 16 * std::max(ctx_->length, 1024); }

  Status ProxyBytes(int n, int64_t* bytes) override {
    int64_t b = fixed_bytes_ - 1;
    for (size_t k = 0; k < vocab_.size(); ++k)
      b += Count(n, k) * static_cast<int64_t>(vocab_[k].size() + 1);
    *bytes = b;
    return Status::Ok();
  }

  Status Build(int n, std::string* text) override {
    std::vector<int> words;
    for (size_t k = 0; k < vocab_.size(); ++k)
      words.insert(words.end(), static_cast<size_t>(Count(n, k)), static_cast<int>(k));
    PyRandom(ctx_->seed).Shuffle(&words);
    std::string context;
    for (size_t i = 0; i < words.size(); ++i) {
      if (i) context.push_back(' ');
      context += vocab_[words[i]];
    }
    *text = Input(context);
    RulerBuilt built;
    for (size_t k = 1; k < std::min<size_t>(4, vocab_.size()); ++k) built.gold.push_back(vocab_[k]);
    built.after = {py_, np_};
    results_[n] = std::move(built);
    return Status::Ok();
  }

 private:
  int64_t Count(int n, size_t k) const {
    return RulerZipfCount(n, static_cast<int>(k + 1), t_.alpha, zeta_);
  }
  std::string Input(std::string_view context) const {
    return RulerFormat(RulerFullTemplate(RulerFamily::kFreqWords),
                       {{"context", context}, {"query", ""}});
  }

  const RulerBuildContext* ctx_;
  const RulerTaskConfig& t_;
  PyRandom py_;
  NpRandom np_;
  std::vector<std::string> vocab_;
  double zeta_ = 1;
  int64_t fixed_bytes_ = 0;
};

}  // namespace

Status MakeCweBuilder(const RulerBuildContext* ctx, const RulerStreams& start,
                      std::unique_ptr<RulerSampleBuilder>* out) {
  auto b = std::make_unique<CweBuilder>(ctx, start);
  if (!b->status().ok()) return b->status();  // fit profile; nvidia reports it in Result()
  *out = std::move(b);
  return Status::Ok();
}

std::unique_ptr<RulerSampleBuilder> MakeFweBuilder(const RulerBuildContext* ctx,
                                                   const RulerStreams& start) {
  return std::make_unique<FweBuilder>(ctx, start);
}

}  // namespace evalrun
