#include "evals/publish/compare_section.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace evalrun {
namespace {

std::map<std::string, CompareSection, std::less<>>& Registered() {
  static auto* sections = new std::map<std::string, CompareSection, std::less<>>();
  return *sections;
}

const CompareSection* Find(const nlohmann::json& p) {
  if (!p.is_object() || !p.contains("part") || !p["part"].is_string()) return nullptr;
  auto it = Registered().find(p["part"].get<std::string>());
  return it == Registered().end() ? nullptr : &it->second;
}

nlohmann::json ViewOf(const nlohmann::json& p, const std::string& part) {
  return p.contains(part) ? p[part] : nlohmann::json();
}

}  // namespace

void RegisterCompareSection(CompareSection section) {
  const std::string part = section.part;
  if (!Registered().emplace(part, std::move(section)).second) {
    std::fprintf(stderr, "evalrun: the compare section of part \"%s\" registered twice\n", part.c_str());
    std::abort();
  }
}

void AddCompareSection(const std::string& part, const nlohmann::json& results_a, const nlohmann::json& results_b,
                       nlohmann::json* part_doc, nlohmann::json* notes) {
  auto it = Registered().find(part);
  if (it != Registered().end() && it->second.add) it->second.add(results_a, results_b, part_doc, notes);
}

std::string CompareSectionMarkdown(const nlohmann::json& p) {
  const CompareSection* s = Find(p);
  return s && s->part_markdown ? s->part_markdown(ViewOf(p, s->part)) : "";
}

std::string CompareSectionHtml(const nlohmann::json& p) {
  const CompareSection* s = Find(p);
  return s && s->part_html ? s->part_html(ViewOf(p, s->part)) : "";
}

std::string CompareSectionsDocMarkdown(const nlohmann::json& cmp) {
  std::string o;
  for (const auto& [name, s] : Registered())
    if (s.doc_markdown) o += s.doc_markdown(cmp);
  return o;
}

std::string CompareSectionsDocHtml(const nlohmann::json& cmp) {
  std::string h;
  for (const auto& [name, s] : Registered())
    if (s.doc_html) h += s.doc_html(cmp);
  return h;
}

}  // namespace evalrun
