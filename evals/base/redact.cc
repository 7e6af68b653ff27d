#include "evals/base/redact.h"

#include <memory>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {
namespace {

std::mutex g_mu;
std::shared_ptr<const std::vector<std::string>> g_secrets = std::make_shared<std::vector<std::string>>();

std::shared_ptr<const std::vector<std::string>> Secrets() {
  std::lock_guard<std::mutex> l(g_mu);
  return g_secrets;
}

void ReplaceAll(std::string* text, const std::string& what) {
  if (what.empty()) return;
  for (size_t pos = text->find(what); pos != std::string::npos; pos = text->find(what, pos + sizeof kRedacted - 1))
    text->replace(pos, what.size(), kRedacted);
}

bool EndsValue(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' || c == '\'' || c == '\\' || c == ',' ||
         c == ';';
}

// Replaces the value that follows each `marker` (after '=' or blanks).
void RedactAfter(std::string* text, std::string_view marker) {
  for (size_t pos = text->find(marker); pos != std::string::npos; pos = text->find(marker, pos + 1)) {
    size_t v = pos + marker.size();
    // "--api-key X" or "--api-key=X", not "--api-key-file".
    if (marker.back() != ':' && marker.back() != ' ' && v < text->size() && (*text)[v] != ' ' && (*text)[v] != '=')
      continue;
    while (v < text->size() && ((*text)[v] == ' ' || (*text)[v] == '=' || (*text)[v] == ':')) ++v;
    // "Authorization: Bearer X": the scheme is kept, its value goes.
    if (text->compare(v, 7, "Bearer ") == 0) v += 7;
    size_t end = v;
    while (end < text->size() && !EndsValue((*text)[end])) ++end;
    if (end == v || text->compare(v, end - v, kRedacted) == 0) continue;
    text->replace(v, end - v, kRedacted);
  }
}

}  // namespace

void RegisterSecret(const std::string& secret) {
  if (secret.empty()) return;
  std::lock_guard<std::mutex> l(g_mu);
  auto next = std::make_shared<std::vector<std::string>>(*g_secrets);
  next->push_back(secret);
  // As a JSON string holds it (a key with '"' or '\\'), without the quotes.
  const std::string escaped = nlohmann::json(secret).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (escaped.size() >= 2 && escaped.substr(1, escaped.size() - 2) != secret)
    next->push_back(escaped.substr(1, escaped.size() - 2));
  g_secrets = std::move(next);
}

std::string RedactSecrets(std::string_view text) {
  std::string out(text);
  for (const std::string& s : *Secrets()) ReplaceAll(&out, s);
  return out;
}

std::string Redact(std::string_view text) {
  std::string out = RedactSecrets(text);
  for (std::string_view marker : {"--api-key", "Bearer ", "Authorization:", "authorization:", "X-Api-Key:",
                                  "x-api-key:", "api-key:"})
    if (out.find(marker) != std::string::npos) RedactAfter(&out, marker);
  return out;
}

Status CheckApiKey(const std::string& key, const std::string& field, const std::string& env) {
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    const bool trailing_newline = (c == '\n' || c == '\r') && key.find_first_not_of("\r\n", i) == std::string::npos;
    if (trailing_newline)
      return Status::InvalidInput(field + ": the environment variable " + env +
                                  " ends with a newline (a key read from a file often does); remove the newline");
    return Status::InvalidInput(field + ": the environment variable " + env + " holds a control character (byte " +
                                std::to_string(c) + " at position " + std::to_string(i) +
                                "), which a request header cannot carry (CR or LF would add headers)");
  }
  return Status::Ok();
}

}  // namespace evalrun
