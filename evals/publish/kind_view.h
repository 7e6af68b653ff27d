// What `compare` and `report` know of a verdict kind: registered from the
// kind's own file, beside its run-side registration (evals/run/
// verdict_kind.h), so that a new kind changes no file of evals/publish. (A
// part's own section registers apart: page_section.h, compare_section.h.)
//
//   class ChecksView : public KindView { ... };
//   EVALRUN_REGISTER_KIND_VIEW(ChecksView);
//
// A kind's view gives:
//   - its comparison units (kind_units.h): pass/fail units, which `compare`
//     pairs and tests with McNemar, or fractional ones (Fractional(): shown
//     as numbers, "A > B");
//   - its report section (ReportSection): the part's summary line, bar
//     charts, and tables (SectionTable: rendered as Markdown and as HTML,
//     every cell text), or Markdown and HTML it renders itself (a chart),
//     under the results table, with the results or after the category
//     tables; the fraction kind also fills the lengths section the
//     renderers lay out themselves (by_length);
//   - what the report's sample browser shows of one record (Browse);
//   - for a kind whose parts are not compared by units (a distribution of
//     next tokens, say): its own comparison, the document's entry of the
//     part, with and without an A/A pair, and how that entry is shown
//     (ComparesOnItsOwn and the Compare* hooks);
//   - clauses it adds to sentences the pages share, where a part of it is
//     shown (CompareDecidesClause, CompareNoiseClause, RepeatClause,
//     StderrMeaning).
//
// Registration runs during static initialisation (a second view of one
// kind aborts); lookups after it, from any thread.
#ifndef EVALRUN_EVALS_PUBLISH_KIND_VIEW_H_
#define EVALRUN_EVALS_PUBLISH_KIND_VIEW_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/publish/compare_options.h"
#include "evals/publish/kind_units.h"
#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"

namespace evalrun {

// A table of text: a Markdown table in report.md and compare's Markdown, an
// HTML table in the pages (the renderers escape every cell).
struct SectionTable {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a line under it ("" for none)

  // {title, columns, rows, note}; FromJson is its inverse (false for
  // anything else).
  nlohmann::json ToJson() const;
  static bool FromJson(const nlohmann::json& j, SectionTable* out);
};

// What the report shows of one part.
struct ReportSection {
  // The part's line in the summary table: metric (text), score and stderr
  // (percent, null when unknown); report_model adds n, counts and speeds.
  std::string metric = "score (as recorded)";
  std::optional<double> score, stderr_pct;
  // Bar charts: {part, title, dimension, rows: [{name, n, correct, score (%)}]}.
  nlohmann::json categories = nlohmann::json::array();
  // The fraction kind's lengths section (report_model.h describes it), null
  // when not this part's.
  nlohmann::json by_length;
  // Lines under the results table, rendered by the kind (the instruction
  // kind's four accuracies): in report.md after the failed requests, in
  // report.html inside the results section after its note. "" for none.
  std::string under_table_markdown, under_table_html;
  std::vector<SectionTable> tables;
  // A section rendered by its owner (a chart, a paragraph): Markdown placed
  // as it is in report.md, HTML as it is inside a <section> of report.html,
  // after the category tables and the SectionTables.
  // Whoever writes them escapes what they show (html_text.h, table_text.h).
  std::string markdown, html;
  // The same, placed with the results: in report.md after the lines under
  // the table, in report.html after the failed requests (results_html is whole
  // <section>s, its own wrapping), both before the page sections placed
  // kWithTheResults (page_section.h). "" for none.
  std::string results_markdown, results_html;
};

class KindView {
 public:
  virtual ~KindView() = default;
  virtual VerdictKind Kind() const = 0;
  // parts[].kind in evalrun.compare/1: the kind's name by default.
  virtual std::string CompareKindName() const { return std::string(Kind().name()); }
  // Units score fractions in [0, 1] (shown as numbers), not pass/fail.
  virtual bool Fractional() const { return false; }
  virtual compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const = 0;
  // `results_part`: results.json's parts.<name>; `records`: its samples
  // (empty when samples.jsonl is missing).
  virtual void Report(const FolderPart& part, const nlohmann::json& results_part,
                      const std::vector<SampleRecord>& records, ReportSection* out) const = 0;
  // Fills the browser's category, gold, extracted, no_answer and extra ([[key, text]])
  // of `sample`; by default BrowseByLabel.
  virtual void Browse(const FolderPart& part, const SampleRecord& s, int max_chars, nlohmann::json* sample) const;

  // ---- A kind `compare` does not pair by units ----
  // True: `compare` makes its parts' entries with ComparePart (and, with
  // --noise, ComparePartNoise) instead of pairing Units, and shows them with
  // the Compare*Markdown/Html hooks below; their noise floor is their own
  // line, not a row of the flip-rate table. False (the default): none of
  // the hooks of this block is asked.
  virtual bool ComparesOnItsOwn() const { return false; }
  // The part's entry of evalrun.compare/1 `parts` from A's and B's records:
  // at least part, kind (CompareKindName), verdict, regression (bool: the
  // part goes into `regressions`, exit 4), metrics and flipped (both [] when
  // it has none). InvalidInput (exit 1, naming the first difference) for
  // two runs it cannot compare. By default Internal.
  virtual Status ComparePart(const std::string& part, const RunFolder& a, const RunFolder& b,
                             const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                             const CompareOptions& opts, nlohmann::json* part_doc) const;
  // With --noise A A2: the A/A pair's records of the part (`na` of run
  // `noise_a`, `na2` of `noise_a2`) measured as ComparePart measures A and
  // B; sets `noise` (an object with a `text`) and `within_noise` (bool) of
  // *part_doc (ComparePart's entry), neither changing its verdict.
  // InvalidInput ("--noise: ...") for a pair that does not cover what A/B
  // does. By default Internal.
  virtual Status ComparePartNoise(const std::string& part, const RunFolder& a, const RunFolder& noise_a,
                                  const RunFolder& noise_a2, const std::vector<SampleRecord>& na,
                                  const std::vector<SampleRecord>& na2, const CompareOptions& opts,
                                  nlohmann::json* part_doc) const;
  // The entry's line in the Markdown's verdict list ("- ...", no newline;
  // "" for none).
  virtual std::string CompareVerdictMarkdown(const nlohmann::json& part_doc) const { return ""; }
  // What follows the part's name and badges in the page's verdict list
  // (HTML, escaped by the view; "" for nothing).
  virtual std::string CompareVerdictHtml(const nlohmann::json& part_doc) const { return ""; }
  // The part's section: Markdown ("## <part> ..." on), and the page's whole
  // <section> (HTML; its id CompareAnchor(part), compare_html_parts.h, which
  // the verdict list links to).
  virtual std::string ComparePartMarkdown(const nlohmann::json& part_doc) const { return ""; }
  virtual std::string ComparePartHtml(const nlohmann::json& part_doc) const { return ""; }

  // ---- Clauses of the pages' shared sentences ----
  // What a sentence that every page prints needs to say of this kind, added
  // once to it where a part of the kind is shown; "" (the default) for
  // nothing. Plain words, printed as they are in Markdown and in HTML (no
  // & < > characters), starting with their own " " or "; ".
  // compare's page, after "Only each part's headline metric" (what else
  // decides the exit code).
  virtual std::string CompareDecidesClause() const { return ""; }
  // compare's page, with an A/A pair, after "... is labelled within noise"
  // (when a part of this kind is).
  virtual std::string CompareNoiseClause() const { return ""; }
  // The report's run-to-run noise section (a part of this kind has a
  // repeat), after "... is within noise" (what its row means).
  virtual std::string RepeatClause() const { return ""; }
  // The report's note under the results table, where its ± stderr is not
  // the binomial one of accuracies: what it is ("the standard error of the
  // mean per-sample score"), said "for <the parts' display names>".
  virtual std::string StderrMeaning() const { return ""; }
};

class KindViewRegistrar {
 public:
  explicit KindViewRegistrar(const KindView* view);
};

#define EVALRUN_VIEW_CONCAT_(a, b) a##b
#define EVALRUN_VIEW_CONCAT(a, b) EVALRUN_VIEW_CONCAT_(a, b)
#define EVALRUN_REGISTER_KIND_VIEW(Class)                                                         \
  static const ::evalrun::KindViewRegistrar EVALRUN_VIEW_CONCAT(evalrun_view_registrar_, __LINE__) { \
    new Class                                                                                     \
  }

// The view of `kind`, or null (a kind registered without one).
const KindView* FindKindView(VerdictKind kind);
// The view whose CompareKindName() is `name` (parts[].kind of a compare
// document), or null.
const KindView* FindKindViewByCompareName(std::string_view name);
// The view of compare document part `part_doc` when its kind compares on
// its own (ComparesOnItsOwn), else null.
const KindView* OwnComparisonView(const nlohmann::json& part_doc);

// ---- What the views share ----

// The default Browse: category by the definition's label fields, gold, no
// extracted letter, extra [["score", "0.000"]].
void BrowseByLabel(const FolderPart& part, const SampleRecord& s, nlohmann::json* sample);
// An accuracy part's section: its score and stderr in percent, and its
// "categories" as a table by category when it has at least `min_categories`.
void ReportAccuracy(const FolderPart& part, const nlohmann::json& p, size_t min_categories, ReportSection* out);
// Adds to out->categories a table "<display name>: <metric> by <dimension>"
// of `groups` (results.json's {name: {n, ...}}): a row a group with its n,
// its count under `correct_key` and its `score_key` (0..1) in percent.
void AddGroupTable(const FolderPart& part, const nlohmann::json& groups, const std::string& metric,
                   const std::string& dimension, const char* correct_key, const char* score_key, ReportSection* out);
// A number of results.json at `path`, else nullopt.
std::optional<double> ResultNumber(const nlohmann::json& j, std::initializer_list<const char*> path);
// x * 100, or nullopt.
std::optional<double> Percent(std::optional<double> x);
nlohmann::json OptJson(std::optional<double> v);
// The sample standard deviation (n - 1).
double SampleSd(const std::vector<double>& v);
// "4K" for 4096 (a multiple of 1024), else the text as it is.
std::string LengthLabel(const std::string& length);
// Numbers by value, before texts; texts as text.
bool NumericLess(const std::string& a, const std::string& b);
// Text with its runs of digits compared by value: "niah_single_1/4096/2"
// before "niah_single_1/32768/0", "q9" before "q10".
bool NaturalLess(const std::string& a, const std::string& b);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_KIND_VIEW_H_
