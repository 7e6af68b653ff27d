// libFuzzer target: ParseCard on arbitrary bytes.
//
// For every input ParseCard must return (no crash, no exception escaping,
// no sanitizer report) with either Ok or a Status whose message names the
// source. A card it accepts must satisfy the invariants the runner relies
// on, and parsing the same text again must give the same card.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "evals/run/card.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  evalrun::Card card;
  const evalrun::Status st = evalrun::ParseCard(text, "fuzz.json", &card);
  if (!st.ok()) {
    Require(st.code() == evalrun::Status::Code::kInvalidInput);
    Require(st.message().rfind("fuzz.json", 0) == 0);  // every message names the card
    return 0;
  }
  Require(!card.name.empty() && card.name.find('/') == std::string::npos);
  Require(!card.parts.empty());
  Require(card.server.base_url.rfind("http://", 0) == 0 || card.server.base_url.rfind("https://", 0) == 0);
  // A host: not "http://" (trimmed to "http:") nor "https://:99".
  const size_t scheme_end = card.server.base_url.find("://");
  Require(scheme_end != std::string::npos);
  Require(card.server.slots >= 0 && card.server.retries >= 0 && card.server.min_decode_tps > 0);
  Require(card.max_failed >= 0);
  Require(card.sha256.size() == 64 && card.text == text);
  const std::string origin = card.server.Origin();
  Require(card.server.base_url.compare(0, origin.size(), origin) == 0);
  Require(origin + card.server.PathPrefix() == card.server.base_url);
  const std::string authority = origin.substr(scheme_end + 3);
  Require(!authority.empty() && authority[0] != ':');
  for (const auto& p : card.parts) {
    Require(card.FindPart(p.name) != nullptr);
    Require(p.questions == -1 || p.questions >= 1);
    Require(p.max_tokens >= 0);
  }

  evalrun::Card again;
  Require(evalrun::ParseCard(text, "fuzz.json", &again).ok());
  Require(again.name == card.name && again.parts.size() == card.parts.size() &&
          again.server.base_url == card.server.base_url && again.sha256 == card.sha256);
  return 0;
}
