#include "evals/publish/failed_requests.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "evals/base/files.h"
#include "evals/base/json_bounds.h"
#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

constexpr size_t kMaxError = 300;
constexpr size_t kIdsShown = 5;

std::string Cut(const std::string& s) {
  bool cut = false;
  std::string o = Utf8Prefix(s, kMaxError, &cut);
  return cut ? o + "..." : o;
}

}  // namespace

json FailedRequestsModel(const std::string& run_dir, const std::string& part, const std::set<std::string>& answered) {
  std::string text;
  if (!ReadFileToString(run_dir + "/" + part + "/failed.jsonl", &text).ok()) return nullptr;
  // Each id once, its last line (a request that failed again on a resume is there twice).
  std::vector<json> lines;
  std::map<std::string, size_t> at;
  int requests = 0, unreadable = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json j = ParseJsonOrDiscarded(line);
    if (!j.is_object() || !j.contains("id")) {
      ++unreadable;
      continue;
    }
    const std::string id = JsonText(j["id"]);
    if (answered.count(id)) continue;  // answered by a later resume
    if (auto it = at.find(id); it != at.end()) {
      lines[it->second] = std::move(j);
    } else {
      at[id] = lines.size();
      lines.push_back(std::move(j));
    }
  }
  std::vector<json> groups;
  for (const json& j : lines) {
    const std::string id = JsonText(j["id"]);
    ++requests;
    const std::string error = Cut(JsonText(j.value("error", json(""))));
    const json status = j.value("http_status", json());
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const json& x) { return x["error"] == error && x["http_status"] == status; });
    if (g == groups.end()) {
      groups.push_back({{"error", error}, {"http_status", status}, {"count", 0}, {"ids", json::array()}});
      g = groups.end() - 1;
    }
    (*g)["count"] = (*g)["count"].get<int>() + 1;
    if ((*g)["ids"].size() < kIdsShown) (*g)["ids"].push_back(id);
  }
  if (requests == 0 && unreadable == 0) return nullptr;
  std::stable_sort(groups.begin(), groups.end(),
                   [](const json& a, const json& b) { return a["count"].get<int>() > b["count"].get<int>(); });
  return {{"part", part}, {"requests", requests}, {"unreadable", unreadable}, {"groups", groups}};
}

namespace {

std::string Ids(const json& g) {
  std::vector<std::string> ids;
  for (const auto& id : g["ids"]) ids.push_back(JsonText(id));
  std::string s = Join(ids, ", ");
  if (g["count"].get<size_t>() > ids.size()) s += ", ...";
  return s;
}

constexpr const char* kLead =
    "Requests that failed after their retries: not scored, not in n (the part's `failed.jsonl`; resuming the job "
    "asks them again).";

}  // namespace

std::string FailedRequestsMarkdown(const json& failures) {
  if (!failures.is_array() || failures.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : failures) {
    for (const auto& g : f["groups"])
      rows.push_back({MarkdownCell(JsonText(f["part"])), JsonText(g["count"]), JsonText(g["http_status"]),
                      MarkdownCell(JsonText(g["error"])), MarkdownCell(Ids(g))});
    if (f["unreadable"].get<int>() > 0)
      rows.push_back({MarkdownCell(JsonText(f["part"])), JsonText(f["unreadable"]), "",
                      "lines of failed.jsonl that could not be read", ""});
  }
  return "## Failed requests\n\n" + std::string(kLead) + "\n\n" +
         MarkdownTable({"part", "requests", "HTTP", "error", "ids"}, "lrrll", rows) + "\n";
}

std::string FailedRequestsHtml(const json& failures) {
  if (!failures.is_array() || failures.empty()) return "";
  std::string h = "<section id=\"failed\"><h2>Failed requests</h2><p>" + HtmlEscape(kLead) +
                  "</p><div class=\"wide\"><table><thead><tr><th>part</th><th class=\"num\">requests</th>"
                  "<th class=\"num\">HTTP</th><th>error</th><th>ids</th></tr></thead><tbody>";
  for (const auto& f : failures) {
    for (const auto& g : f["groups"])
      h += "<tr><td>" + HtmlEscape(JsonText(f["part"])) + "</td><td class=\"num\">" + HtmlEscape(JsonText(g["count"])) +
           "</td><td class=\"num\">" + HtmlEscape(JsonText(g["http_status"])) + "</td><td>" +
           HtmlEscape(JsonText(g["error"])) + "</td><td><code>" + HtmlEscape(Ids(g)) + "</code></td></tr>";
    if (f["unreadable"].get<int>() > 0)
      h += "<tr><td>" + HtmlEscape(JsonText(f["part"])) + "</td><td class=\"num\">" +
           HtmlEscape(JsonText(f["unreadable"])) + "</td><td></td><td>lines of failed.jsonl that could not be read"
           "</td><td></td></tr>";
  }
  return h + "</tbody></table></div></section>\n";
}

}  // namespace evalrun
