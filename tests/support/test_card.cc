#include "tests/support/test_card.h"

#include "tests/support/run_binary.h"

namespace evalrun::testing {

nlohmann::json TestCard(const std::string& base_url, const nlohmann::json& parts) {
  nlohmann::json card = BareCard(base_url, parts);
  card["model"] = {{"name", "fake"}};
  card["server"]["slots"] = 2;
  card["server"]["ready_timeout_s"] = 20;
  card["server"]["request_timeout_base_s"] = 30;
  card["sampling"] = {{"temperature", 0}, {"top_k", 1}, {"seed", 42}};
  card["thinking"] = false;
  return card;
}

nlohmann::json BareCard(const std::string& base_url, const nlohmann::json& parts) {
  return {{"name", "e2e"}, {"server", {{"base_url", base_url}}}, {"parts", parts}};
}

std::string WriteCardFile(const std::string& path, const nlohmann::json& card) {
  WriteFile(path, card.dump(2));
  return path;
}

}  // namespace evalrun::testing
