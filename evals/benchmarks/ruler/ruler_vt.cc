// variable_tracking.py (type_haystack noise).
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// variable_tracking.py generate_input_output (type_haystack noise)

class VtBuilder : public RulerSampleBuilder {
 public:
  VtBuilder(const RulerBuildContext* ctx, const RulerStreams& start, bool icl)
      : ctx_(ctx), t_(*ctx->task), icl_(icl), py_(start.py), np_(start.np) {
    // generate_chains: k-letter names, num_hops capped at 10 for the example.
    const int k = icl ? 3 : 5;
    hops_ = icl ? std::min(10, t_.num_hops) : t_.num_hops;
    const size_t need = static_cast<size_t>(hops_ + 1) * t_.num_chains;
    std::vector<std::string> names;
    while (true) {
      names.clear();
      for (size_t i = 0; i < need; ++i) names.push_back(RulerChoices(kRulerUpper, k, &py_));
      if (ctx->python_exceptions) {
        // While the set is short of `need`, RULER appends a name; then it cuts
        // the list into chains of num_hops + 1, so appended names make a
        // short last chain and `this_vars[j+1]` raises IndexError there.
        std::set<std::string> distinct(names.begin(), names.end());
        while (distinct.size() < need) {
          names.push_back(RulerChoices(kRulerUpper, k, &py_));
          distinct.insert(names.back());
        }
        break;
      }
      // fit profile: RULER would crash and retry smaller; redraw instead.
      if (std::set<std::string>(names.begin(), names.end()).size() == names.size()) break;
    }
    const size_t per = static_cast<size_t>(hops_) + 1;
    for (size_t c = 0; c * per < names.size(); ++c) {
      const size_t end = std::min(names.size(), (c + 1) * per);
      const std::vector<std::string> vars(names.begin() + c * per, names.begin() + end);
      // str(np.random.randint(10000, 99999)) comes before the hops.
      const std::string value = icl ? "12345" : std::to_string(np_.RandInt(10000, 99999));
      if (vars.size() < per) {
        raised_ = "IndexError: list index out of range (variable names coincided)";
        return;
      }
      if (c == 0) {
        gold_ = vars;
        value_ = value;
      }
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
    PyRandom r = py_;
    NpRandom npr = np_;
    text->clear();
    if (!raised_.empty()) {
      results_[n] = {{}, {r, npr}, raised_};
      return Status::Ok();
    }
    std::vector<std::string_view> sentences(std::max(n, 0), kRulerNoise);
    for (const auto& chain : chains_) {
      if (chain.size() > sentences.size()) {  // random.sample: population too small
        results_[n] = {{}, {r, npr}, "ValueError: Sample larger than population or is negative"};
        return Status::Ok();
      }
      std::vector<size_t> pos = r.Sample(sentences.size(), chain.size());
      std::sort(pos.begin(), pos.end());
      for (size_t j = 0; j < chain.size(); ++j)
        sentences.insert(sentences.begin() + pos[j] + j, chain[j]);
    }
    const std::string context = RulerReplaceAll(RulerJoin(sentences, "\n"), ". \n", ".\n");
    std::string input = Input(context);
    if (!icl_ && !ctx_->vt_icl_example.empty()) {
      input = RulerVtRandomizeIcl(ctx_->vt_icl_example, t_.num_hops, &r, &npr) + "\n" + input;
    }
    *text = std::move(input);
    results_[n] = {gold_, {r, npr}, ""};
    return Status::Ok();
  }

 private:
  std::string Input(std::string_view context) const {
    const std::string num_v = std::to_string(hops_ + 1);
    return RulerFormat(RulerFullTemplate(RulerFamily::kVariableTracking),
                       {{"context", context}, {"query", value_}, {"num_v", num_v}});
  }

  const RulerBuildContext* ctx_;
  const RulerTaskConfig& t_;
  bool icl_;
  int hops_ = 4;
  PyRandom py_;
  NpRandom np_;
  std::vector<std::vector<std::string>> chains_;
  std::vector<std::string> gold_;
  std::string value_;
  std::string raised_;
  int64_t fixed_bytes_ = 0, chain_bytes_ = 0;
};

}  // namespace

std::string RulerVtRandomizeIcl(std::string example, int num_hops, PyRandom* py, NpRandom* np) {
  // icl_example.strip().split()[-num_hops-1:] (ASCII text: C isspace is
  // Python's whitespace here).
  std::vector<std::string> words;
  size_t i = 0;
  while (i < example.size()) {
    while (i < example.size() && std::isspace(static_cast<unsigned char>(example[i]))) ++i;
    size_t j = i;
    while (j < example.size() && !std::isspace(static_cast<unsigned char>(example[j]))) ++j;
    if (j > i) words.push_back(example.substr(i, j - i));
    i = j;
  }
  const size_t take = std::min(words.size(), static_cast<size_t>(num_hops + 1));
  for (size_t w = words.size() - take; w < words.size(); ++w) {
    const std::string fresh = RulerChoices(kRulerUpper, static_cast<int>(words[w].size()), py);
    example = RulerReplaceAll(example, words[w], fresh);
  }
  return RulerReplaceAll(example, "12345", std::to_string(np->RandInt(10000, 99999)));
}

std::unique_ptr<RulerSampleBuilder> MakeVtBuilder(const RulerBuildContext* ctx,
                                                  const RulerStreams& start, bool icl) {
  return std::make_unique<VtBuilder>(ctx, start, icl);
}

}  // namespace evalrun
