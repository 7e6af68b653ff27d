// A verdict kind and a part only the tests define, built into
// `evalrun-test-parts`: the kind "checks" (a pass with per-check outcomes,
// as a program graded by its tests is) and the part "checks" that asks 12
// tasks and scores each answer by three checks. Everything the kind brings
// is in this file and registered from here: its verdict (an OtherVerdict
// holding a ChecksVerdict), its codec, headline and cut-off, its
// aggregation, its `compare` units (pass/fail per task, McNemar; and per
// check) and its report section (a table of pass rates by check).
//
// Adding it changed no file of evals/publish (nor of evals/run or
// evals/kinds): that is what tests/engine/e2e_checks_kind_test.cc shows by running
// it through run, report and compare. The test cannot ask git; the design
// makes it true: the registries (evals/run/verdict_kind.h,
// evals/publish/kind_view.h) are all that evalrun asks.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "evals/base/sha256.h"
#include "evals/run/prepare_steps.h"
#include "evals/publish/kind_view.h"
#include "evals/run/part.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/run/verdict_kind.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

constexpr VerdictKind kChecksKind{"checks"};
constexpr int kTasks = 12;

struct CheckOutcome {
  std::string name;
  bool passed = false;
};
struct ChecksVerdict {
  bool passed = false;  // every check passed
  std::vector<CheckOutcome> checks;
  bool cut_off = false;
};

// ---- The kind: codec, headline, aggregation ----

class ChecksKind : public OtherVerdictKind<ChecksVerdict> {
 public:
  VerdictKind Kind() const override { return kChecksKind; }
  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"passed", "checks", "cut_off", "correct"};
    return kKeys;
  }
  void EncodeValue(const ChecksVerdict& v, json* line) const override {
    json checks = json::array();
    for (const auto& c : v.checks) checks.push_back({{"name", c.name}, {"passed", c.passed}});
    (*line)["passed"] = v.passed;
    (*line)["checks"] = checks;
    (*line)["cut_off"] = v.cut_off;
    (*line)["correct"] = v.passed;
  }
  Status DecodeValue(const SampleLineReader& in, ChecksVerdict* out) const override {
    EVALRUN_RETURN_IF_ERROR(in.Bool("passed", &out->passed, true));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &out->cut_off));
    const json* checks = in.Find("checks");
    if (!checks || !checks->is_array()) return in.Expected("checks", "an array of {name, passed}", checks);
    for (const json& c : *checks) {
      if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("passed") ||
          !c["passed"].is_boolean())
        return in.Expected("checks", "an array of {name, passed}", &c);
      out->checks.push_back({c["name"].get<std::string>(), c["passed"].get<bool>()});
    }
    return Status::Ok();
  }
  double HeadlineOf(const ChecksVerdict& v) const override { return v.passed ? 1.0 : 0.0; }
  bool CutOffOf(const ChecksVerdict& v) const override { return v.cut_off; }
  void MarkTooLongOf(ChecksVerdict* v) const override { v->cut_off = false; }

  // The default aggregate and, under "checks", each check's {n, passed, rate}.
  json Aggregate(const std::vector<SampleRecord>& records, int failed) const override {
    json r = AggregateByHeadline(records, failed);
    std::map<std::string, std::pair<int, int>> per;
    for (const auto& s : records)
      for (const auto& c : Value(s.verdict).checks) {
        ++per[c.name].first;
        per[c.name].second += c.passed;
      }
    json checks = json::object();
    for (const auto& [name, c] : per)
      checks[name] = {{"n", c.first}, {"passed", c.second}, {"rate", Round(double(c.second) / c.first, 6)}};
    r["checks"] = checks;
    return r;
  }
};

// ---- Its view: compare units and report section ----

class ChecksView : public KindView {
 public:
  VerdictKind Kind() const override { return kChecksKind; }

  // Pass/fail per task (the headline: McNemar), then per check.
  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    compare_internal::PartUnits out = compare_internal::ScoredUnits(
        part, records, {"all_checks", "all checks passed", {}, {}}, [](const SampleRecord& r) {
          std::string failed;
          for (const auto& c : ChecksKind::Value(r.verdict).checks)
            if (!c.passed) failed += (failed.empty() ? "failed: " : ", ") + c.name;
          return failed.empty() ? std::string("all passed") : failed;
        });
    compare_internal::Metric per{"per_check", "per check", {"check"}, {}};
    for (const auto& r : records)
      for (const auto& c : ChecksKind::Value(r.verdict).checks) {
        compare_internal::Unit u;
        u.key = r.id + "#" + c.name;
        u.id = r.id;
        u.label = c.name;
        u.groups = {c.name};
        u.score = c.passed ? 1.0 : 0.0;
        per.units.push_back(std::move(u));
      }
    out.metrics.push_back(std::move(per));
    return out;
  }

  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
              ReportSection* out) const override {
    out->metric = "all checks passed";
    out->score = Percent(ResultNumber(p, {"score"}));
    out->stderr_pct = Percent(ResultNumber(p, {"stderr"}));
    SectionTable t;
    t.title = part.display_name + ": pass rate by check";
    t.columns = {"check", "n", "passed", "pass rate (%)"};
    std::map<std::string, std::pair<int, int>> per;
    for (const auto& s : records)
      for (const auto& c : ChecksKind::Value(s.verdict).checks) {
        ++per[c.name].first;
        per[c.name].second += c.passed;
      }
    for (const auto& [name, c] : per) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.1f", 100.0 * c.second / c.first);
      t.rows.push_back({name, std::to_string(c.first), std::to_string(c.second), rate});
    }
    t.note = "A task passes when every one of its checks passes.";
    out->tables.push_back(std::move(t));
  }

  void Browse(const FolderPart& part, const SampleRecord& s, int, json* sample) const override {
    BrowseByLabel(part, s, sample);
    json extra = json::array();
    for (const auto& c : ChecksKind::Value(s.verdict).checks)
      extra.push_back({"check " + c.name, c.passed ? "passed" : "failed"});
    (*sample)["extra"] = extra;
  }
};

EVALRUN_REGISTER_VERDICT_KIND(ChecksKind);
EVALRUN_REGISTER_KIND_VIEW(ChecksView);

// ---- The part ----

std::string IdOf(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "t%02d", i + 1);
  return b;
}

// The checks of one answer: it says "ANSWER:", what follows is upper case,
// and it is at most 40 bytes.
ChecksVerdict RunChecks(const Completion& a) {
  const std::string& text = a.content;
  const size_t at = text.find("ANSWER:");
  bool upper = at != std::string::npos;
  for (size_t i = at == std::string::npos ? text.size() : at + 7; i < text.size(); ++i)
    upper = upper && !(text[i] >= 'a' && text[i] <= 'z');
  ChecksVerdict v;
  v.checks = {{"has_answer", at != std::string::npos}, {"upper_case", upper}, {"short", text.size() <= 40}};
  v.passed = true;
  for (const auto& c : v.checks) v.passed = v.passed && c.passed;
  v.cut_off = a.finish_reason == "length";
  if (v.cut_off) v.passed = false;
  return v;
}

class ChecksPart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    std::vector<std::string> ids, cats;
    for (int i = 0; i < kTasks; ++i) {
      ids.push_back(IdOf(i));
      cats.push_back(i % 2 ? "odd" : "even");
    }
    const int64_t seed = ctx.settings->Int("seed", ctx.card->request.sampling.seed);
    const int max_tokens = static_cast<int>(ctx.settings->Int("max_tokens", 64));
    for (size_t i : SelectQuestions(ctx, ids, cats, seed, -1)) {
      const std::string text = "Task " + ids[i] + ": reply with ANSWER: and a word in capitals.";
      Item it;
      it.id = ids[i];
      it.category = cats[i];
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      out->items.push_back(std::move(it));
    }
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item&, const Completion& a) const override { return MakeOtherVerdict(kChecksKind, RunChecks(a)); }

  json Aggregate(const std::vector<SampleRecord>& records, int failed, const PreparedPart&) const override {
    return VerdictKindOf(kChecksKind).Aggregate(records, failed);
  }
};

PartDefinition ChecksDefinition() {
  PartDefinition d;
  d.name = "checks";
  d.display_name = "Checks (test kind)";
  d.run_order = 96;
  d.verdict = kChecksKind;
  d.keys = {MaxTokensKey("the answer limit (default 64)"), SeedKey("selection seed")};
  d.make_part = [] { return std::make_unique<ChecksPart>(); };
  return d;
}

}  // namespace

EVALRUN_BENCHMARK(Benchmark{.name = "checks",
                            .title = "Checks (test kind)",
                            .about = "a part of a verdict kind of its own, for the tests",
                            .parts = {ChecksDefinition()}});

}  // namespace evalrun::testing
