// The probe's compare math (scorers/probe/probe_divergence.h) on cases
// computed by hand, and the raw-completion wire format on the replies of the
// real llama-server b10470 (tests/fixtures/llama-server, captured with
// cache_prompt false: /completion with n_probs 3, /v1/completions with
// logprobs 3, the same prompt) and on OpenAI's legacy shape (vLLM).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "evals/base/files.h"
#include "scorers/probe/probe_divergence.h"
#include "evals/server/completion_wire.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

std::vector<TokenLogprob> Dist(std::initializer_list<std::pair<int, double>> probs) {
  std::vector<TokenLogprob> v;
  for (const auto& [id, p] : probs) v.push_back({id, "t" + std::to_string(id), std::log(p)});
  return v;
}

TEST(ProbeDivergence, IdenticalCandidatesGiveExactlyZero) {
  const auto a = Dist({{1, 0.5}, {2, 0.3}, {3, 0.1}});
  const PositionDivergence d = ComparePosition(a, a);
  EXPECT_EQ(d.kld, 0.0);
  EXPECT_TRUE(d.same_top);
  EXPECT_TRUE(d.same_sets);
  EXPECT_EQ(d.abs_delta_top, 0.0);
  EXPECT_NEAR(d.rest_a, 0.1, 1e-12);
}

TEST(ProbeDivergence, SameSetsIsTheKldOfTopKPlusRest) {
  // A {.5, .3} rest .2; B {.4, .4} rest .2:
  // .5 ln(.5/.4) + .3 ln(.3/.4) + .2 ln(.2/.2) = 0.111571776 - 0.086304622.
  const PositionDivergence d = ComparePosition(Dist({{1, 0.5}, {2, 0.3}}), Dist({{1, 0.4}, {2, 0.4}}));
  EXPECT_NEAR(d.kld, 0.025267154, 1e-9);
  EXPECT_TRUE(d.same_top);  // ids 1 and 1 (B's tie keeps its order)
  EXPECT_NEAR(d.abs_delta_top, std::log(0.5 / 0.4), 1e-12);
}

TEST(ProbeDivergence, RestBucketCarriesTheMassOutsideTopK) {
  // A {.6, .2} rest .2; B {.6, .3} rest .1: only the second token and the
  // rest move: .2 ln(.2/.3) + .2 ln(.2/.1) = -0.081093022 + 0.138629436.
  const PositionDivergence d = ComparePosition(Dist({{1, 0.6}, {2, 0.2}}), Dist({{1, 0.6}, {2, 0.3}}));
  EXPECT_NEAR(d.kld, 0.057536414, 1e-9);
  EXPECT_NEAR(d.rest_a, 0.2, 1e-12);
  EXPECT_NEAR(d.rest_b, 0.1, 1e-12);
}

TEST(ProbeDivergence, ATokenMissingFromOneSideTakesItsShareOfThatSidesRest) {
  // A {x .6, y .3} rest .1; B {x .6, z .2} rest .2. On A, z gets
  // min(.3, .1 / 1) = .1 (A's rest is then 0); on B, y gets min(.2, .2 / 1) = .2
  // (B's rest 0). KLD = .6 ln 1 + .3 ln(.3/.2) + .1 ln(.1/.2) = 0.121639532 - 0.069314718.
  const PositionDivergence d = ComparePosition(Dist({{1, 0.6}, {2, 0.3}}), Dist({{1, 0.6}, {3, 0.2}}));
  EXPECT_NEAR(d.kld, 0.052324814, 1e-9);
  EXPECT_FALSE(d.same_sets);
  EXPECT_TRUE(d.same_top);
  EXPECT_NEAR(d.rest_a, 0.0, 1e-12);
  EXPECT_NEAR(d.rest_b, 0.0, 1e-12);
}

TEST(ProbeDivergence, TopOneDisagreementAndATopTokenOutsideB) {
  // A's top (id 1, .7) is not in B's top-2 {2 .5, 3 .3} (rest .2): on B it
  // gets min(.3, .2 / 1) = .2, so |Δ logprob| = ln(.7/.2).
  const PositionDivergence d = ComparePosition(Dist({{1, 0.7}, {2, 0.2}}), Dist({{2, 0.5}, {3, 0.3}}));
  EXPECT_FALSE(d.same_top);
  EXPECT_FALSE(d.top_a_in_b);
  EXPECT_NEAR(d.abs_delta_top, std::log(0.7 / 0.2), 1e-12);
  // Union {1, 2, 3}: A {.7, .2, q=min(.2, .1)=.1} rest 0; B {.2, .5, .3} rest 0.
  const double want = 0.7 * std::log(0.7 / 0.2) + 0.2 * std::log(0.2 / 0.5) + 0.1 * std::log(0.1 / 0.3);
  EXPECT_NEAR(d.kld, want, 1e-12);
}

TEST(ProbeDivergence, TokensWithoutIdsMatchByText) {
  std::vector<TokenLogprob> a = {{-1, " the", std::log(0.5)}, {-1, " a", std::log(0.25)}};
  std::vector<TokenLogprob> b = {{-1, " the", std::log(0.5)}, {-1, " a", std::log(0.25)}};
  EXPECT_EQ(ComparePosition(a, b).kld, 0.0);
  b[1].token = " an";
  EXPECT_FALSE(ComparePosition(a, b).same_sets);
}

TEST(ProbeDivergence, SummaryIsPerplexityCppsPercentiles) {
  // perplexity.cpp: p = fraction * (n - 1), linear between neighbours; the
  // median is the mean of the two middle values for an even count.
  const ValueSummary s = Summarize({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_NEAR(s.p95, 3.85, 1e-12);  // 0.95 * 3 = 2.85: 3 + 0.85 * (4 - 3)
  EXPECT_NEAR(s.p99, 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(Summarize({5, 1, 3}).median, 3);
}

TEST(ProbeDivergence, CountByDecadePutsEachValueOnFixedEdges) {
  const double nan = std::nan("");
  const DecadeCounts c = CountByDecade({0.0, 0.0, -1e-18, 1e-20, 1e-15, 9.99e-15, 1e-14, 2.5e-7, 0.999, 1.0,
                                       9.99, 10.0, 1e9, std::numeric_limits<double>::infinity(), nan});
  ASSERT_EQ(c.decades.size(), static_cast<size_t>(kDecadeHighest - kDecadeLowest + 2));
  EXPECT_EQ(c.zero, 3u);          // 0, 0 and a negative rounding error
  EXPECT_EQ(c.not_a_number, 1u);
  EXPECT_EQ(c.decades[0], 1u);    // (0, 1e-15): 1e-20
  EXPECT_EQ(c.decades[1], 2u);    // [1e-15, 1e-14): 1e-15, 9.99e-15
  EXPECT_EQ(c.decades[2], 1u);    // [1e-14, 1e-13)
  EXPECT_EQ(c.decades[-7 - kDecadeLowest + 1], 1u);  // [1e-7, 1e-6): 2.5e-7
  EXPECT_EQ(c.decades[-1 - kDecadeLowest + 1], 1u);  // [0.1, 1): 0.999
  EXPECT_EQ(c.decades[0 - kDecadeLowest + 1], 2u);   // [1, 10): 1, 9.99
  EXPECT_EQ(c.decades.back(), 3u);                  // from 10 up: 10, 1e9, inf
  size_t total = c.zero + c.not_a_number;
  for (size_t n : c.decades) total += n;
  EXPECT_EQ(total, 15u);
}

std::string Fixture(const std::string& name) {
  std::string text;
  EXPECT_TRUE(ReadFileToString(testing::FixturePath("llama-server/" + name), &text).ok())
      << name;
  return text;
}

TEST(CompletionWire, RealLlamaServerRepliesOfBothEndpointsParseTheSame) {
  Completion native, oai;
  ASSERT_TRUE(ParseCompletionReply(Fixture("completion_n_probs.body"), &native).ok());
  ASSERT_TRUE(ParseCompletionReply(Fixture("v1_completions_logprobs.body"), &oai).ok());
  ASSERT_EQ(native.top_logprobs.size(), 3u);
  ASSERT_EQ(oai.top_logprobs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(native.top_logprobs[i].id, oai.top_logprobs[i].id);
    EXPECT_EQ(native.top_logprobs[i].token, oai.top_logprobs[i].token);
    EXPECT_EQ(native.top_logprobs[i].logprob, oai.top_logprobs[i].logprob);
  }
  EXPECT_EQ(native.top_logprobs[0].id, 410);
  EXPECT_EQ(native.top_logprobs[1].token, " with");
  EXPECT_DOUBLE_EQ(native.top_logprobs[0].logprob, -0.8908946514129639);
  // The prompt's tokens (BOS included): tokens_evaluated and usage.prompt_tokens.
  EXPECT_EQ(native.prompt_tokens, 21);
  EXPECT_EQ(oai.prompt_tokens, 21);
  EXPECT_EQ(native.finish_reason, "length");
  EXPECT_EQ(oai.finish_reason, "length");
  EXPECT_EQ(oai.content, " ");
}

TEST(CompletionWire, OpenAiLegacyLogprobsParseAndSort) {
  const std::string vllm = R"({"choices":[{"text":" the","logprobs":{"tokens":[" the"],"token_logprobs":[-0.5],
    "top_logprobs":[{" a":-1.5," the":-0.5}],"text_offset":[0]},"finish_reason":"length"}],
    "usage":{"prompt_tokens":12,"completion_tokens":1}})";
  Completion c;
  ASSERT_TRUE(ParseCompletionReply(vllm, &c).ok());
  ASSERT_EQ(c.top_logprobs.size(), 2u);
  EXPECT_EQ(c.top_logprobs[0].token, " the");
  EXPECT_EQ(c.top_logprobs[0].id, -1);
  EXPECT_EQ(c.top_logprobs[1].logprob, -1.5);
  EXPECT_EQ(c.prompt_tokens, 12);
}

TEST(CompletionWire, AReplyWithoutLogprobsIsAnErrorNamingIt) {
  Completion c;
  // The reference /v1/completions reply, asked without logprobs.
  const Status st = ParseCompletionReply(
      R"({"choices":[{"text":", there","index":0,"logprobs":null,"finish_reason":"length"}]})", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("choices[0].logprobs is null"), std::string::npos) << st.message();
  EXPECT_FALSE(ParseCompletionReply("{\"error\":{\"message\":\"boom\"}}", &c).ok());
  EXPECT_FALSE(ParseCompletionReply("not json", &c).ok());
}

TEST(CompletionWire, BodiesAskOneTokenWithoutThePromptCache) {
  Prompt p;
  p.messages.push_back({"user", "Once upon a time"});
  p.params.seed = 42;
  p.logprobs = LogprobRequest{5, false};
  nlohmann::json oai = nlohmann::json::parse(CompletionRequestBody(p, ""));
  EXPECT_EQ(oai["prompt"], "Once upon a time");
  EXPECT_EQ(oai["max_tokens"], 1);
  EXPECT_EQ(oai["logprobs"], 5);
  EXPECT_EQ(oai["temperature"], 0.0);
  EXPECT_EQ(oai["cache_prompt"], false);
  EXPECT_FALSE(oai.contains("messages"));
  EXPECT_EQ(CompletionPath(*p.logprobs, "/v1"), "/v1/completions");
  p.logprobs->llama_completion = true;
  nlohmann::json native = nlohmann::json::parse(CompletionRequestBody(p, ""));
  EXPECT_EQ(native["n_probs"], 5);
  EXPECT_EQ(native["n_predict"], 1);
  EXPECT_EQ(CompletionPath(*p.logprobs, "/v1"), "/completion");
}

}  // namespace
}  // namespace evalrun
