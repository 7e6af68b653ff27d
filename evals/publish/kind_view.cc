#include "evals/publish/kind_view.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "evals/base/json_fields.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

// Written during static initialisation only, read after.
std::map<std::string, const KindView*, std::less<>>& Views() {
  static auto* views = new std::map<std::string, const KindView*, std::less<>>();
  return *views;
}

[[noreturn]] void Twice(const char* what, const std::string& name) {
  std::fprintf(stderr, "evalrun: %s \"%s\" registered twice\n", what, name.c_str());
  std::abort();
}

}  // namespace

json SectionTable::ToJson() const {
  return {{"title", title}, {"columns", columns}, {"rows", rows}, {"note", note}};
}

bool SectionTable::FromJson(const json& j, SectionTable* out) {
  if (!j.is_object()) return false;
  const json &t = JsonAt(j, {"title"}), &c = JsonAt(j, {"columns"}), &r = JsonAt(j, {"rows"}), &n = JsonAt(j, {"note"});
  if (!t.is_string() || !c.is_array() || !r.is_array()) return false;
  SectionTable s;
  s.title = t.get<std::string>();
  s.note = n.is_string() ? n.get<std::string>() : "";
  for (const json& x : c) s.columns.push_back(JsonText(x));
  for (const json& row : r) {
    if (!row.is_array()) return false;
    std::vector<std::string> cells;
    for (const json& x : row) cells.push_back(JsonText(x));
    s.rows.push_back(std::move(cells));
  }
  *out = std::move(s);
  return true;
}

KindViewRegistrar::KindViewRegistrar(const KindView* view) {
  const std::string name(view->Kind().name());
  if (!Views().emplace(name, view).second) Twice("the view of verdict kind", name);
}

const KindView* FindKindView(VerdictKind kind) {
  auto it = Views().find(kind.name());
  return it == Views().end() ? nullptr : it->second;
}

const KindView* FindKindViewByCompareName(std::string_view name) {
  for (const auto& [kind, view] : Views())
    if (view->CompareKindName() == name) return view;
  return nullptr;
}

const KindView* OwnComparisonView(const json& part_doc) {
  if (!part_doc.is_object() || !part_doc.contains("kind") || !part_doc["kind"].is_string()) return nullptr;
  const KindView* view = FindKindViewByCompareName(part_doc["kind"].get<std::string>());
  return view && view->ComparesOnItsOwn() ? view : nullptr;
}

Status KindView::ComparePart(const std::string& part, const RunFolder&, const RunFolder&,
                             const std::vector<SampleRecord>&, const std::vector<SampleRecord>&,
                             const CompareOptions&, json*) const {
  return Status::Internal("part " + part + ": kind " + std::string(Kind().name()) +
                          " says it compares on its own but has no ComparePart");
}

Status KindView::ComparePartNoise(const std::string& part, const RunFolder&, const RunFolder&, const RunFolder&,
                                  const std::vector<SampleRecord>&, const std::vector<SampleRecord>&,
                                  const CompareOptions&, json*) const {
  return Status::Internal("part " + part + ": kind " + std::string(Kind().name()) +
                          " says it compares on its own but has no ComparePartNoise");
}

void KindView::Browse(const FolderPart& part, const SampleRecord& s, int, json* sample) const {
  BrowseByLabel(part, s, sample);
}

void BrowseByLabel(const FolderPart& part, const SampleRecord& s, json* sample) {
  json& o = *sample;
  const PartDefinition* def = part.definition;
  const std::vector<std::string> label = def && !def->label.empty() ? def->label : std::vector<std::string>{"category"};
  std::string cat;
  for (const auto& f : label) cat += (cat.empty() ? "" : " @ ") + s.Text(f);
  o["category"] = s.Text(label[0]).empty() ? s.category : cat;
  o["gold"] = s.Text("gold");
  o["extracted"] = "";
  o["extra"] = json::array({json::array({"score", FormatDouble("%.3f", HeadlineScore(s.verdict))})});
}

void ReportAccuracy(const FolderPart& part, const json& p, size_t min_categories, ReportSection* out) {
  out->metric = "accuracy";
  out->score = Percent(ResultNumber(p, {"score"}));
  out->stderr_pct = Percent(ResultNumber(p, {"stderr"}));
  const json& cats = JsonAt(p, {"categories"});
  if (!cats.is_object() || cats.size() < min_categories) return;
  AddGroupTable(part, cats, "accuracy", "category", "correct", "score", out);
}

void AddGroupTable(const FolderPart& part, const json& groups, const std::string& metric, const std::string& dimension,
                   const char* correct_key, const char* score_key, ReportSection* out) {
  json rows = json::array();
  for (auto it = groups.begin(); it != groups.end(); ++it)
    rows.push_back({{"name", it.key()}, {"n", OptJson(ResultNumber(*it, {"n"}))},
                    {"correct", OptJson(ResultNumber(*it, {correct_key}))},
                    {"score", OptJson(Percent(ResultNumber(*it, {score_key})))}});
  out->categories.push_back({{"part", part.name},
                             {"title", part.display_name + ": " + metric + " by " + dimension},
                             {"dimension", dimension},
                             {"rows", rows}});
}

std::optional<double> ResultNumber(const json& j, std::initializer_list<const char*> path) {
  const json& v = JsonAt(j, path);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<double> Percent(std::optional<double> x) {
  if (!x) return std::nullopt;
  return *x * 100;
}

json OptJson(std::optional<double> v) { return v ? json(*v) : json(); }

double SampleSd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

std::string LengthLabel(const std::string& length) {
  char* end = nullptr;
  long long v = std::strtoll(length.c_str(), &end, 10);
  if (end && *end == 0 && v > 0 && v % 1024 == 0) return std::to_string(v / 1024) + "K";
  return length;
}

bool NumericLess(const std::string& a, const std::string& b) {
  char *ea = nullptr, *eb = nullptr;
  double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  bool na = ea && *ea == 0 && !a.empty(), nb = eb && *eb == 0 && !b.empty();
  if (na && nb && x != y) return x < y;
  if (na != nb) return na;
  return a < b;
}

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      // Without leading zeros, the longer run is the larger number.
      size_t zi = i, zj = j;
      while (zi + 1 < ei && a[zi] == '0') ++zi;
      while (zj + 1 < ej && b[zj] == '0') ++zj;
      if (ei - zi != ej - zj) return ei - zi < ej - zj;
      const int c = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace evalrun
