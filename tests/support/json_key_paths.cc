#include "tests/support/json_key_paths.h"

namespace evalrun::testing {
namespace {

void KeyPathsInto(const nlohmann::json& j, const std::string& prefix, std::set<std::string>* out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      const std::string p = prefix.empty() ? k : prefix + "." + k;
      out->insert(p);
      KeyPathsInto(v, p, out);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) KeyPathsInto(e, prefix + "[]", out);
  }
}

}  // namespace

std::set<std::string> JsonKeyPaths(const nlohmann::json& j) {
  std::set<std::string> out;
  KeyPathsInto(j, "", &out);
  return out;
}

}  // namespace evalrun::testing
