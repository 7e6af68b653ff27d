// The fake llama-server's next-token distribution: what its scripted model
// "predicts" after a prompt, for the logprobs of POST /completion (n_probs)
// and /v1/completions (logprobs). A pure function of the prompt text (the
// hashes of its last two fake tokens) over a vocabulary of kFakeLogprobVocab
// words, so that two servers asked the same prompt answer the same
// logprobs, bit for bit; `shift` (FakeServerOptions::logprob_shift) bends
// every logit a little, as an engine bug would.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_LOGPROBS_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_LOGPROBS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace evalrun::testing {

inline constexpr int kFakeLogprobVocab = 64;

struct FakeCandidate {
  int id = 0;          // 1000 + the word's index (ids as a real vocabulary has them, not 0-based)
  std::string token;   // " w<index>" or a word of the list
  double logprob = 0;  // natural log of its softmax probability
};

// The `k` most likely candidates (k clamped to [1, vocab]), most likely first.
std::vector<FakeCandidate> FakeTopLogprobs(const std::string& prompt, int k, double shift);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_LOGPROBS_H_
