// niah.py: the eight needle-in-a-haystack tasks.
#include <algorithm>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// niah.py

class NiahBuilder : public RulerSampleBuilder {
 public:
  NiahBuilder(const RulerBuildContext* ctx, const RulerStreams& start)
      : ctx_(ctx), t_(*ctx->task), py_(start.py), np_(start.np), line_rng_(start.py) {
    num_k_ = std::max(t_.num_needle_k, t_.num_needle_q);
    const std::string type_v = RulerNeedleTypeName(t_.type_needle_v);
    for (int k = 0; k < num_k_; ++k) {
      keys_.push_back(Draw(t_.type_needle_k, &py_));
      values_.emplace_back();
      for (int v = 0; v < t_.num_needle_v; ++v) {
        values_.back().push_back(Draw(t_.type_needle_v, &py_));
        needles_.push_back(NeedleText(keys_.back(), values_.back().back()));
      }
    }
    PyRandom(ctx_->seed).Shuffle(&needles_);
    line_rng_ = py_;
    template_ = RulerFullTemplate(RulerFamily::kNiah);
    type_v_display_ = type_v;
    if (t_.num_needle_q * t_.num_needle_v == 1) {
      template_ = RulerSingularTemplate(template_);
      type_v_display_.pop_back();  // remove "s"
    }
    // Proxy of the fixed text: the query is drawn later, take the first keys.
    std::vector<std::string> q(keys_.begin(),
                               keys_.begin() + std::min<int>(num_k_, t_.num_needle_q));
    fixed_bytes_ = static_cast<int64_t>(
        RulerFormat(template_,
                    {{"type_needle_v", type_v_display_}, {"context", ""}, {"query", QueryText(q)}})
            .size());
    for (const std::string& nd : needles_) needles_bytes_ += static_cast<int64_t>(nd.size()) + 1;
  }

  int MinUnits() const override {
    return t_.type_haystack == RulerHaystack::kEssay ? 1 : static_cast<int>(needles_.size());
  }
  int MaxUnits() const override {
    // Caps the search only; never reached at a real length.
    return t_.type_haystack == RulerHaystack::kEssay ? 16 * std::max(ctx_->length, 1024)
                                                     : std::max(ctx_->length, 1024);
  }

  Status ProxyBytes(int n, int64_t* bytes) override {
    switch (t_.type_haystack) {
      case RulerHaystack::kEssay:
        *bytes = fixed_bytes_ + ctx_->essay->TextBytes(n) + needles_bytes_;
        break;
      case RulerHaystack::kNoise:
        *bytes =
            fixed_bytes_ + static_cast<int64_t>(n) * (sizeof(kRulerNoise)) + needles_bytes_ - 1;
        break;
      case RulerHaystack::kNeedle:
        while (static_cast<int>(line_prefix_.size()) <= n) {
          const std::string key = Draw(t_.type_needle_k, &line_rng_);
          const std::string value = Draw(t_.type_needle_v, &line_rng_);
          line_prefix_.push_back(line_prefix_.back() +
                                 static_cast<int64_t>(NeedleText(key, value).size()) + 1);
        }
        *bytes = fixed_bytes_ + line_prefix_[n] + needles_bytes_ - 1;
        break;
    }
    return Status::Ok();
  }

  Status Build(int n, std::string* text) override {
    PyRandom r = py_;
    const size_t k = needles_.size();
    std::string context;
    if (t_.type_haystack == RulerHaystack::kEssay) {
      const RulerEssayCache::Entry& e = ctx_->essay->Get(n);
      const size_t num_sents = e.spans.size();
      const std::vector<size_t> picks = r.Sample(RulerDepths().size(), k);
      std::vector<size_t> pos;
      for (size_t d : picks) {
        // int(len(document_sents) * (depth / 100)), in doubles as Python.
        pos.push_back(static_cast<size_t>(static_cast<double>(num_sents) *
                                          (static_cast<double>(RulerDepths()[d]) / 100.0)));
      }
      std::sort(pos.begin(), pos.end());
      pos.insert(pos.begin(), 0);
      pos.push_back(num_sents);
      std::string_view etext = e.text;
      context.reserve(e.text.size() + static_cast<size_t>(needles_bytes_) + 2 * k);
      for (size_t i = 1; i < pos.size(); ++i) {
        if (i > 1) context.push_back(' ');
        for (size_t s = pos[i - 1]; s < pos[i]; ++s) {  // " ".join(document_sents[last:next])
          if (s > pos[i - 1]) context.push_back(' ');
          context.append(etext.substr(e.spans[s].first, e.spans[s].second - e.spans[s].first));
        }
        if (i - 1 < k) {
          context.push_back(' ');
          context.append(needles_[i - 1]);
        }
      }
    } else {
      std::vector<std::string> lines;
      std::vector<std::string_view> views;
      if (t_.type_haystack == RulerHaystack::kNoise) {
        views.assign(std::max(n, 0), kRulerNoise);
      } else {
        lines.reserve(std::max(n, 0));
        for (int i = 0; i < n; ++i) {
          const std::string key = Draw(t_.type_needle_k, &r);
          const std::string value = Draw(t_.type_needle_v, &r);
          lines.push_back(NeedleText(key, value));
        }
        views.assign(lines.begin(), lines.end());
      }
      if (static_cast<size_t>(std::max(n, 0)) < k) {  // random.sample(range(n), k) raises
        results_[n] = {{}, {r, np_}, "ValueError: Sample larger than population or is negative"};
        text->clear();
        return Status::Ok();
      }
      std::vector<size_t> idx = r.Sample(static_cast<size_t>(n), k);
      std::sort(idx.rbegin(), idx.rend());
      for (size_t i = 0; i < k; ++i) views.insert(views.begin() + idx[i], needles_[i]);
      context = RulerJoin(views, "\n");
    }
    const std::vector<size_t> qi = r.Sample(num_k_, t_.num_needle_q);
    std::vector<std::string> queries;
    RulerBuilt built;
    for (size_t i : qi) {
      queries.push_back(keys_[i]);
      for (const std::string& v : values_[i]) built.gold.push_back(v);
    }
    *text = RulerFormat(
        template_,
        {{"type_needle_v", type_v_display_}, {"context", context}, {"query", QueryText(queries)}});
    built.after = {r, np_};
    results_[n] = std::move(built);
    return Status::Ok();
  }

 private:
  std::string Draw(RulerNeedleType type, PyRandom* r) const {
    switch (type) {
      case RulerNeedleType::kNumbers:
        return std::to_string(r->RandInt(1000000, 9999999));
      case RulerNeedleType::kWords:
        return ctx_->inputs->niah_words.At(r->Choice(ctx_->inputs->niah_words.size()));
      case RulerNeedleType::kUuids:
        return RulerUuid4(r);
    }
    return "";
  }
  std::string NeedleText(const std::string& key, const std::string& value) const {
    return RulerFormat(
        kRulerNeedle,
        {{"type_needle_v", RulerNeedleTypeName(t_.type_needle_v)}, {"key", key}, {"value", value}});
  }
  static std::string QueryText(const std::vector<std::string>& q) {
    if (q.empty()) return "";
    if (q.size() == 1) return q[0];
    std::string s;
    for (size_t i = 0; i + 1 < q.size(); ++i) s += (i ? ", " : "") + q[i];
    return s + ", and " + q.back();
  }

  const RulerBuildContext* ctx_;
  const RulerTaskConfig& t_;
  int num_k_ = 1;
  std::vector<std::string> keys_;
  std::vector<std::vector<std::string>> values_;
  std::vector<std::string> needles_;
  PyRandom py_;
  NpRandom np_;
  PyRandom line_rng_;  // kNeedle proxy: replays the distractor draws
  std::vector<int64_t> line_prefix_{0};
  std::string template_, type_v_display_;
  int64_t fixed_bytes_ = 0, needles_bytes_ = 0;
};

}  // namespace

std::unique_ptr<RulerSampleBuilder> MakeNiahBuilder(const RulerBuildContext* ctx,
                                                    const RulerStreams& start) {
  return std::make_unique<NiahBuilder>(ctx, start);
}

}  // namespace evalrun
