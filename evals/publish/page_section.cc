#include "evals/publish/page_section.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace evalrun {
namespace {

std::map<std::string, PageSection, std::less<>>& Registered() {
  static auto* sections = new std::map<std::string, PageSection, std::less<>>();
  return *sections;
}

nlohmann::json ModelOf(const nlohmann::json& models, const std::string& part) {
  return models.is_object() && models.contains(part) ? models[part] : nlohmann::json();
}

}  // namespace

void RegisterPageSection(PageSection section) {
  const std::string part = section.part;
  if (!Registered().emplace(part, std::move(section)).second) {
    std::fprintf(stderr, "evalrun: the page section of part \"%s\" registered twice\n", part.c_str());
    std::abort();
  }
}

std::vector<const PageSection*> PageSections() {
  std::vector<const PageSection*> out;
  for (const auto& [name, s] : Registered()) out.push_back(&s);
  std::stable_sort(out.begin(), out.end(), [](const PageSection* a, const PageSection* b) { return a->order < b->order; });
  return out;
}

bool PageSectionReplacesRow(std::string_view name) {
  auto it = Registered().find(name);
  return it != Registered().end() && it->second.replaces_row;
}

nlohmann::json PageSectionModels(const nlohmann::json& results) {
  nlohmann::json out = nlohmann::json::object();
  for (const PageSection* s : PageSections()) out[s->part] = s->model ? s->model(results) : nlohmann::json();
  return out;
}

std::string RenderPageSectionsMarkdown(const nlohmann::json& models, PagePlace place) {
  std::string o;
  for (const PageSection* s : PageSections())
    if (s->place == place && s->markdown) o += s->markdown(ModelOf(models, s->part));
  return o;
}

std::string RenderPageSectionsHtml(const nlohmann::json& models, PagePlace place) {
  std::string h;
  for (const PageSection* s : PageSections())
    if (s->place == place && s->html) h += s->html(ModelOf(models, s->part));
  return h;
}

}  // namespace evalrun
