#include "tests/support/fake_logprobs.h"

#include <algorithm>
#include <cmath>

#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {
namespace {

const char* const kWords[] = {" the", " a", " and", " to", " of", " in", " that", " it", " is", " was",
                              " I", " for", " you", " he", " with", " on"};

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

std::vector<FakeCandidate> FakeTopLogprobs(const std::string& prompt, int k, double shift) {
  const std::vector<uint64_t> h = FakeTokenHashes(prompt);
  const uint64_t ctx = Mix((h.empty() ? 1 : h.back()) * 31 + (h.size() > 1 ? h[h.size() - 2] : 7));
  std::vector<double> logits(kFakeLogprobVocab);
  for (int i = 0; i < kFakeLogprobVocab; ++i) {
    const double u = static_cast<double>(Mix(ctx + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull) >> 11) /
                     9007199254740992.0;  // [0, 1)
    logits[i] = 8.0 * u * u + shift * std::sin(1.0 + i);
  }
  double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double l : logits) sum += std::exp(l - mx);
  const double lse = mx + std::log(sum);
  std::vector<FakeCandidate> all;
  for (int i = 0; i < kFakeLogprobVocab; ++i) {
    FakeCandidate c;
    c.id = 1000 + i;
    c.token = i < 16 ? kWords[i] : " w" + std::to_string(i);
    c.logprob = logits[i] - lse;
    all.push_back(std::move(c));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const FakeCandidate& a, const FakeCandidate& b) { return a.logprob > b.logprob; });
  all.resize(static_cast<size_t>(std::clamp(k, 1, kFakeLogprobVocab)));
  return all;
}

}  // namespace evalrun::testing
