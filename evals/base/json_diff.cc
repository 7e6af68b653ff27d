#include "evals/base/json_diff.h"

#include <set>

namespace evalrun {
namespace {

std::string Show(const nlohmann::json* v) {
  if (v == nullptr) return "(absent)";
  std::string s = v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

void Walk(const std::string& path, const nlohmann::json* a, const nlohmann::json* b,
          std::vector<std::string>* out) {
  if (a != nullptr && b != nullptr && *a == *b) return;
  if (a != nullptr && b != nullptr && a->is_object() && b->is_object()) {
    std::set<std::string> keys;
    for (auto it = a->begin(); it != a->end(); ++it) keys.insert(it.key());
    for (auto it = b->begin(); it != b->end(); ++it) keys.insert(it.key());
    for (const std::string& k : keys) {
      auto ia = a->find(k);
      auto ib = b->find(k);
      Walk(path.empty() ? k : path + "." + k, ia == a->end() ? nullptr : &*ia, ib == b->end() ? nullptr : &*ib,
           out);
    }
    return;
  }
  out->push_back((path.empty() ? std::string("(top level)") : path) + ": " + Show(a) + " -> " + Show(b));
}

}  // namespace

std::vector<std::string> JsonChanges(const nlohmann::json& before, const nlohmann::json& after, size_t max_lines) {
  std::vector<std::string> all;
  Walk("", &before, &after, &all);
  if (all.size() <= max_lines) return all;
  const size_t left_out = all.size() - max_lines;
  all.resize(max_lines);
  all.push_back("... and " + std::to_string(left_out) + " more");
  return all;
}

}  // namespace evalrun
