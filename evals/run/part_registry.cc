#include "evals/run/part_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace evalrun {
namespace {

struct Registry {
  std::vector<std::unique_ptr<PartDefinition>> owned;
  std::vector<const PartDefinition*> in_order;
  std::vector<std::string> names;
};

// Built on first use: registrars in other files may run before this one's
// statics are initialised.
Registry& TheRegistry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

void RegisterPart(PartDefinition def) {
  Registry& r = TheRegistry();
  if (FindPartDefinition(def.name) || def.name.empty() || def.question_set() == static_cast<bool>(def.make_procedure)) {
    std::fprintf(stderr, "evalrun: internal error: part \"%s\" registered twice, without a name or without "
                 "exactly one factory\n", def.name.c_str());
    std::abort();
  }
  r.owned.push_back(std::make_unique<PartDefinition>(std::move(def)));
  r.in_order.push_back(r.owned.back().get());
  std::stable_sort(r.in_order.begin(), r.in_order.end(), [](const PartDefinition* a, const PartDefinition* b) {
    return a->run_order != b->run_order ? a->run_order < b->run_order : a->name < b->name;
  });
  r.names.clear();
  for (const PartDefinition* d : r.in_order) r.names.push_back(d->name);
}

const PartDefinition* FindPartDefinition(std::string_view name) {
  for (const auto& d : TheRegistry().owned)
    if (d->name == name) return d.get();
  return nullptr;
}

const std::vector<const PartDefinition*>& PartDefinitions() { return TheRegistry().in_order; }

const std::vector<std::string>& KnownPartNames() { return TheRegistry().names; }

bool AcceptsEstimatedTokens(const PartDefinition& def, const PartSettings& settings) {
  for (const CardKey& k : def.keys)
    if (k.name == kAllowEstimatedTokensKey && k.type == KeyType::kBool) return settings.Bool(k.name);
  return false;
}

std::string PartDisplayName(const std::string& name) {
  const PartDefinition* d = FindPartDefinition(name);
  return d ? d->display_name : name;
}

}  // namespace evalrun
