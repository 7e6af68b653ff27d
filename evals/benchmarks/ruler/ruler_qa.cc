// qa.py: SQuAD (qa_1) and HotpotQA (qa_2).
#include <algorithm>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// qa.py

class QaBuilder : public RulerSampleBuilder {
 public:
  QaBuilder(const RulerBuildContext* ctx, const RulerQaSet* set, int index,
            const RulerStreams& start)
      : ctx_(ctx), set_(set), item_(set->qas[index]), py_(start.py), np_(start.np) {
    std::vector<char> taken(set->docs.size(), 0);
    for (int d : item_.context) taken[d] = 1;
    for (int d : item_.more_context) taken[d] = 1;
    for (size_t d = 0; d < set->docs.size(); ++d) {
      if (!taken[d]) addition_.push_back(static_cast<int>(d));
    }
    fixed_bytes_ = static_cast<int64_t>(Input("").size());
  }

  int MinUnits() const override { return std::max<int>(1, item_.context.size()); }
  int MaxUnits() const override {
    return static_cast<int>(4 * set_->docs.size()) + std::max(ctx_->length, 1024);
  }

  Status ProxyBytes(int n, int64_t* bytes) override {
    PyRandom r = py_;
    int64_t b = fixed_bytes_ + 2 * (n - 1) + 11 * static_cast<int64_t>(n) + RulerDigitsUpTo(n);
    for (int d : Docs(n, &r)) b += static_cast<int64_t>(set_->docs[d].size());
    *bytes = b;  // "Document i:\n" = 11 bytes + digits
    return Status::Ok();
  }

  Status Build(int n, std::string* text) override {
    PyRandom r = py_;
    text->clear();
    if (n - static_cast<int>(item_.context.size()) < 0 && n < static_cast<int>(set_->docs.size())) {
      // random.sample(curr_more, num_docs - len(curr_docs)) with a negative k.
      if (!ctx_->python_exceptions) return Status::Internal("qa: fewer documents than the question's own");
      results_[n] = {{}, {r, np_}, "ValueError: Sample larger than population or is negative"};
      return Status::Ok();
    }
    std::vector<int> docs = Docs(n, &r);
    PyRandom(ctx_->seed).Shuffle(&docs);
    std::string context;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (i) context += "\n\n";
      context += "Document " + std::to_string(i + 1) + ":\n";
      context += set_->docs[docs[i]];
    }
    *text = Input(context);
    results_[n] = {item_.outputs, {r, np_}, ""};
    return Status::Ok();
  }

 private:
  // generate_input_output's document choice (before the shuffle).
  std::vector<int> Docs(int n, PyRandom* r) const {
    const int total = static_cast<int>(set_->docs.size());
    const int gold = static_cast<int>(item_.context.size());
    const int more = static_cast<int>(item_.more_context.size());
    std::vector<int> all;
    if (n < total) {
      all = item_.context;
      if (n - gold > more) {
        all.insert(all.end(), item_.more_context.begin(), item_.more_context.end());
        const int extra = std::max(0, n - gold - more);
        for (size_t j : r->Sample(addition_.size(), static_cast<size_t>(extra)))
          all.push_back(addition_[j]);
      } else {
        for (size_t j : r->Sample(item_.more_context.size(), static_cast<size_t>(n - gold))) {
          all.push_back(item_.more_context[j]);
        }
      }
    } else {
      for (int i = 0; i < n; ++i) all.push_back(i % total);  // (DOCS * repeats)[:n]
    }
    return all;
  }
  std::string Input(std::string_view context) const {
    return RulerFormat(RulerFullTemplate(RulerFamily::kQa),
                       {{"context", context}, {"query", item_.query}});
  }

  const RulerBuildContext* ctx_;
  const RulerQaSet* set_;
  const RulerQaItem& item_;
  PyRandom py_;
  NpRandom np_;
  std::vector<int> addition_;
  int64_t fixed_bytes_ = 0;
};

}  // namespace

std::unique_ptr<RulerSampleBuilder> MakeQaBuilder(const RulerBuildContext* ctx,
                                                  const RulerQaSet* set, int index,
                                                  const RulerStreams& start) {
  return std::make_unique<QaBuilder>(ctx, set, index, start);
}

}  // namespace evalrun
