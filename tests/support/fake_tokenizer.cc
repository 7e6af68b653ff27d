#include "tests/support/fake_tokenizer.h"

#include <cctype>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace evalrun::testing {

const char kFakeChatTemplate[] =
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "{%- endif -%}";

const char kFakeQwen3ChatTemplate[] =
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "  {%- if enable_thinking is defined and enable_thinking is false -%}\n"
    "    {{- '<think>\n\n</think>\n\n' -}}\n"
    "  {%- endif -%}\n"
    "{%- endif -%}";

namespace {

bool WordByte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

// Calls `fn(begin, end)` for each token.
template <typename Fn>
void ForEachToken(std::string_view text, Fn fn) {
  size_t i = 0, lead = 0;
  const size_t n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (WordByte(c))
      while (end < n && WordByte(static_cast<unsigned char>(text[end]))) ++end;
    fn(lead, end);
    i = lead = end;
  }
}

struct Vocabulary {
  std::mutex mu;
  std::unordered_map<std::string, int> ids;
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
};

Vocabulary& Vocab() {
  static Vocabulary* v = new Vocabulary();  // never destroyed: used from any thread until exit
  return *v;
}

std::string ContentText(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        if (!out.empty()) out += '\n';  // llama-server joins text parts with newlines
        out += part["text"].get<std::string>();
      }
  return out;
}

}  // namespace

int FakeTokenCount(std::string_view text) {
  int n = 0;
  ForEachToken(text, [&](size_t, size_t) { ++n; });
  return n;
}

std::vector<FakeToken> FakeTokenize(std::string_view text) {
  std::vector<FakeToken> out;
  ForEachToken(text, [&](size_t b, size_t e) { out.push_back({b, e}); });
  return out;
}

std::string FakeFirstTokens(std::string_view text, int n) {
  if (n <= 0) return "";
  size_t cut = std::string::npos;
  int seen = 0;
  ForEachToken(text, [&](size_t, size_t e) {
    if (++seen == n) cut = e;
  });
  return std::string(cut == std::string::npos ? text : text.substr(0, cut));
}

int FakeTokenId(std::string_view piece) {
  Vocabulary& v = Vocab();
  std::lock_guard<std::mutex> l(v.mu);
  auto [it, added] = v.ids.emplace(std::string(piece), static_cast<int>(v.pieces.size()));
  if (added) v.pieces.emplace_back(piece);
  return it->second;
}

std::string FakeTokenPiece(int id) {
  Vocabulary& v = Vocab();
  std::lock_guard<std::mutex> l(v.mu);
  if (id <= 0 || id >= static_cast<int>(v.pieces.size())) return "";
  return v.pieces[static_cast<size_t>(id)];
}

std::vector<uint64_t> FakeTokenHashes(std::string_view text) {
  std::vector<uint64_t> out;
  std::hash<std::string_view> h;
  ForEachToken(text, [&](size_t b, size_t e) { out.push_back(h(text.substr(b, e - b))); });
  return out;
}

bool FakeThinkingOff(const nlohmann::json& body) {
  if (!body.is_object() || !body.contains("chat_template_kwargs")) return false;
  const auto& k = body["chat_template_kwargs"];
  return k.is_object() && k.contains("enable_thinking") && k["enable_thinking"] == false;
}

std::string FakeApplyTemplate(const nlohmann::json& messages, bool add_generation_prompt, bool thinking_off) {
  std::string out;
  if (messages.is_array())
    for (const auto& m : messages) {
      if (!m.is_object()) continue;
      const std::string role = m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
      out += "<|im_start|>" + role + "\n" + (m.contains("content") ? ContentText(m["content"]) : "") + "<|im_end|>\n";
    }
  if (!add_generation_prompt) return out;
  return out + "<|im_start|>assistant\n" + (thinking_off ? "<think>\n\n</think>\n\n" : "");
}

}  // namespace evalrun::testing
