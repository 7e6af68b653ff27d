#include "tests/support/deterministic_replies.h"

#include <cctype>
#include <cstdint>
#include <string>

namespace evalrun::testing {

FakeReply DeterministicReply(const nlohmann::json& request) {
  std::string text;
  if (request.contains("messages") && request["messages"].is_array())
    for (const auto& m : request["messages"])
      if (m.contains("content") && m["content"].is_string()) text += m["content"].get<std::string>() + "\n";
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  FakeReply r;
  r.content = std::string(1, static_cast<char>('A' + h % 4)) + ".";
  if ((h >> 8) % 2 == 0) {
    for (size_t i = 0; i < text.size();) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      if (j - i == 7) r.content += " " + text.substr(i, 7);
      i = j > i ? j : i + 1;
    }
  }
  r.content += (h >> 16) % 3 == 0 ? " all of it in lower case, as asked." : " SHOUTED IN CAPITALS.";
  if ((h >> 24) % 7 == 0) r.finish_reason = "length";
  return r;
}

}  // namespace evalrun::testing
