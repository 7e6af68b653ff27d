// variable_tracking.py (type_haystack noise).
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "evals/parts/ruler_builders.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// variable_tracking.py (type_haystack noise)

class VtBuilder : public RulerSampleBuilder {
 public:
  VtBuilder(const RulerBuildContext* ctx, const RulerStreams& start, bool icl)
      : ctx_(ctx), t_(*ctx->task), icl_(icl), py_(start.py), np_(start.np) {
    const int k = icl ? 3 : 5;
    hops_ = icl ? std::min(10, t_.num_hops) : t_.num_hops;
    const int need = (hops_ + 1) * t_.num_chains;
    std::vector<std::string> names;
    while (true) {  // RULER would crash and retry on a repeated name; redraw instead
      names.clear();
      for (int i = 0; i < need; ++i) names.push_back(RulerChoices(kRulerUpper, k, &py_));
      if (std::set<std::string>(names.begin(), names.end()).size() == names.size()) break;
    }
    for (int c = 0; c < t_.num_chains; ++c) {
      const std::vector<std::string> vars(names.begin() + c * (hops_ + 1),
                                          names.begin() + (c + 1) * (hops_ + 1));
      if (c == 0) gold_ = vars;
      const std::string value = icl ? "12345" : std::to_string(np_.RandInt(10000, 99998));
      if (c == 0) value_ = value;
      std::vector<std::string> chain{"VAR " + vars[0] + " = " + value};
      for (int j = 0; j < hops_; ++j)
        chain.push_back("VAR " + vars[j + 1] + " = VAR " + vars[j] + " ");
      chains_.push_back(std::move(chain));
    }
    fixed_bytes_ = static_cast<int64_t>(Input("").size());
    for (const auto& chain : chains_) {
      for (const std::string& line : chain) chain_bytes_ += static_cast<int64_t>(line.size()) + 1;
    }
    if (!icl_) fixed_bytes_ += static_cast<int64_t>(ctx_->vt_icl_example.size()) + 1;
  }

  int MinUnits() const override { return hops_ + 1; }
  int MaxUnits() const override { return std::max(ctx_->length, 1024); }

  Status ProxyBytes(int n, int64_t* bytes) override {
    *bytes = fixed_bytes_ + static_cast<int64_t>(n) * sizeof(kRulerNoise) + chain_bytes_ - 1;
    return Status::Ok();
  }

  Status Build(int n, std::string* text) override {
    PyRandom r = py_, npr = np_;
    std::vector<std::string_view> sentences(n, kRulerNoise);
    for (const auto& chain : chains_) {
      std::vector<size_t> pos = r.Sample(sentences.size(), chain.size());
      std::sort(pos.begin(), pos.end());
      for (size_t j = 0; j < chain.size(); ++j)
        sentences.insert(sentences.begin() + pos[j] + j, chain[j]);
    }
    const std::string context = RulerReplaceAll(RulerJoin(sentences, "\n"), ". \n", ".\n");
    std::string input = Input(context);
    if (!icl_ && !ctx_->vt_icl_example.empty()) {
      input = RandomizeIcl(ctx_->vt_icl_example, &r, &npr) + "\n" + input;
    }
    *text = std::move(input);
    results_[n] = {gold_, {r, npr}};
    return Status::Ok();
  }

 private:
  std::string Input(std::string_view context) const {
    const std::string num_v = std::to_string(hops_ + 1);
    return RulerFormat(RulerFullTemplate(RulerFamily::kVariableTracking),
                       {{"context", context}, {"query", value_}, {"num_v", num_v}});
  }
  // randomize_icl: the example's last num_hops+1 words (its answer names)
  // get fresh names of the same length, replaced one after the other with
  // str.replace; then 12345 becomes a fresh value.
  std::string RandomizeIcl(std::string example, PyRandom* r, PyRandom* npr) const {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < example.size()) {
      while (i < example.size() && std::isspace(static_cast<unsigned char>(example[i]))) ++i;
      size_t j = i;
      while (j < example.size() && !std::isspace(static_cast<unsigned char>(example[j]))) ++j;
      if (j > i) words.push_back(example.substr(i, j - i));
      i = j;
    }
    const size_t take = std::min(words.size(), static_cast<size_t>(t_.num_hops + 1));
    for (size_t w = words.size() - take; w < words.size(); ++w) {
      const std::string fresh = RulerChoices(kRulerUpper, static_cast<int>(words[w].size()), r);
      example = RulerReplaceAll(example, words[w], fresh);
    }
    return RulerReplaceAll(example, "12345", std::to_string(npr->RandInt(10000, 99998)));
  }

  const RulerBuildContext* ctx_;
  const RulerTaskConfig& t_;
  bool icl_;
  int hops_ = 4;
  PyRandom py_, np_;
  std::vector<std::vector<std::string>> chains_;
  std::vector<std::string> gold_;
  std::string value_;
  int64_t fixed_bytes_ = 0, chain_bytes_ = 0;
};

}  // namespace

std::unique_ptr<RulerSampleBuilder> MakeVtBuilder(const RulerBuildContext* ctx,
                                                  const RulerStreams& start, bool icl) {
  return std::make_unique<VtBuilder>(ctx, start, icl);
}

}  // namespace evalrun
