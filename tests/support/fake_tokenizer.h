// The fake llama-server's tokenizer and chat template: deterministic, so a
// test can count what the server will count. Every count the fake reports
// comes from here, so /tokenize, /apply-template + /tokenize, usage and the
// context checks agree (as on the real server, where usage.prompt_tokens is
// /apply-template then /tokenize with add_special: true, i.e. plus BOS).
//
// A token is a run of letters, digits or bytes >= 0x80, or one other
// non-space character; spaces are free. Not additive across joins
// ("a" + "b" = 1 token, not 2), like BPE. A token's piece is its text with
// the whitespace before it (" world"), so the pieces of a text put back
// together give the text (whitespace at its end aside).
//
// Thread-safe (the vocabulary behind the ids is locked).
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_TOKENIZER_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

int FakeTokenCount(std::string_view text);

// One token of `text`: its piece is text.substr(begin, end - begin).
struct FakeToken {
  size_t begin = 0;  // where its leading whitespace starts
  size_t end = 0;    // one past its last byte
};
std::vector<FakeToken> FakeTokenize(std::string_view text);

// The first `n` tokens of `text` (up to the end of the n-th; all of it when
// it has fewer).
std::string FakeFirstTokens(std::string_view text, int n);

// Token ids, as /tokenize and /detokenize use them: BOS is 1 ("<s>"), EOS 2
// ("</s>"); other pieces get ids from 3 up in the order this process first
// sees them. FakeTokenPiece of an unknown id is "".
constexpr int kFakeBos = 1;
constexpr int kFakeEos = 2;
int FakeTokenId(std::string_view piece);
std::string FakeTokenPiece(int id);

// A hash of each token's piece (the prompt cache compares these).
std::vector<uint64_t> FakeTokenHashes(std::string_view text);

// The chat template the fake applies (chatml, as the reference server's
// fallback): "<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n".
// A content array contributes its "text" parts joined by newlines, as
// llama-server flattens them; other content counts as "".
// `thinking_off`: Qwen3's template with enable_thinking false, the empty
// think block "<think>\n\n</think>\n\n" after the generation prompt.
std::string FakeApplyTemplate(const nlohmann::json& messages, bool add_generation_prompt = true,
                              bool thinking_off = false);

// The template text /props reports (llama-server's chatml fallback), and
// the one of a server with Qwen3's thinking switch (its generation prompt).
extern const char kFakeChatTemplate[];
extern const char kFakeQwen3ChatTemplate[];

// Whether a request body asks the template for thinking off
// (chat_template_kwargs.enable_thinking false).
bool FakeThinkingOff(const nlohmann::json& body);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_TOKENIZER_H_
