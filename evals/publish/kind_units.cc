#include "evals/publish/kind_units.h"

#include "evals/publish/html_text.h"

namespace evalrun::compare_internal {
namespace {

const std::vector<GroupDimension>& DefaultGroups() {
  static const std::vector<GroupDimension> kGroups = {{"category", {"category"}}};
  return kGroups;
}

// Whether every record has every field of `fields` ("category" always).
bool AllHave(const std::vector<SampleRecord>& records, const std::vector<std::string>& fields) {
  if (records.empty()) return false;
  for (const auto& r : records)
    for (const auto& f : fields)
      if (f != "category" && !r.Field(f)) return false;
  return true;
}

std::string Joined(const SampleRecord& r, const std::vector<std::string>& fields) {
  std::string s;
  for (const auto& f : fields) s += (s.empty() ? "" : " @ ") + r.Text(f);
  return s;
}

constexpr size_t kAnswerShownBytes = 80;

// Every record names its endpoint, and there are at least two.
bool BySeveralEndpoints(const std::vector<SampleRecord>& records) {
  if (records.empty()) return false;
  for (const auto& r : records)
    if (r.endpoint.empty()) return false;
  for (const auto& r : records)
    if (r.endpoint != records[0].endpoint) return true;
  return false;
}

}  // namespace

std::string ShownAnswer(const std::string& s) { return Utf8Shortened(s, kAnswerShownBytes); }

std::string ResponseStart(const SampleRecord& r) {
  std::string s = Utf8Shortened(r.response, kAnswerShownBytes);
  for (char& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  return s;
}

PartUnits ScoredUnits(const FolderPart& part, const std::vector<SampleRecord>& records, Metric m,
                      const AnswerOf& answer) {
  const PartDefinition* def = part.definition;
  std::vector<GroupDimension> dims;
  for (const auto& g : def && !def->groups.empty() ? def->groups : DefaultGroups())
    if (AllHave(records, g.fields)) dims.push_back(g);
  if (dims.empty()) dims = DefaultGroups();
  std::vector<std::string> label = def && !def->label.empty() ? def->label : std::vector<std::string>{"category"};
  if (!AllHave(records, label)) label = {"category"};
  for (const auto& d : dims) m.dims.push_back(d.title);
  // Several server endpoints (server.endpoints, e.g. two builds on purpose):
  // also split by the one that answered, when every record names one.
  const bool by_endpoint = BySeveralEndpoints(records);
  if (by_endpoint) m.dims.push_back("endpoint");
  for (const auto& r : records) {
    Unit u;
    u.id = u.key = r.id;
    u.label = Joined(r, label);
    for (const auto& d : dims) u.groups.push_back(Joined(r, d.fields));
    if (by_endpoint) u.groups.push_back(r.endpoint);
    u.score = HeadlineScore(r.verdict);
    u.prompt_sha256 = r.prompt_sha256;
    u.answer = answer ? answer(r) : ResponseStart(r);
    m.units.push_back(std::move(u));
  }
  PartUnits out;
  out.metrics.push_back(std::move(m));
  for (const auto& f : label) out.label_title += (out.label_title.empty() ? "" : " @ ") + f;
  return out;
}

}  // namespace evalrun::compare_internal
