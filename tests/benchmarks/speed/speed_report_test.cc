// The speed part's cold check on /metrics (evals/benchmarks/speed/speed_run.h) and its
// "How fast it runs" section (evals/benchmarks/speed/speed_section.h).
#include <gtest/gtest.h>

#include "evals/benchmarks/speed/speed_request.h"
#include "evals/benchmarks/speed/speed_run.h"
#include "evals/benchmarks/speed/speed_section.h"
#include "tests/support/markdown_tables.h"

namespace evalrun::testing {
namespace {

TEST(SpeedCold, MetricsAtZeroAreColdAnythingElseSaysWhyNot) {
  std::string why;
  EXPECT_TRUE(MetricsSayCold("# HELP x\nllamacpp:prompt_tokens_total 0\nllamacpp:n_decode_total 0\n"
                             "llamacpp:requests_processing 0\n", &why));
  EXPECT_FALSE(MetricsSayCold("llamacpp:prompt_tokens_total 0\nllamacpp:tokens_predicted_total 17\n", &why));
  EXPECT_NE(why.find("llamacpp:tokens_predicted_total 17"), std::string::npos) << why;
  EXPECT_FALSE(MetricsSayCold("vllm:num_requests_running 0\n", &why));
  EXPECT_NE(why.find("unknown"), std::string::npos) << why;
}

TEST(SpeedSection, StepsColdRowAndRefusalsAreShown) {
  nlohmann::json results = nlohmann::json::parse(R"({"parts": {"speed": {
    "engine": {"managed": false, "build_info": "b10470", "n_ctx_slot": 8192, "slots": 4},
    "cold": {"cold": true, "why_not_cold": null, "decode_client_tps": 16.8, "decode_server_tps": 17.0,
             "ttft_s": 0.9, "decode_cold_to_warm": 0.268, "ttft_cold_to_warm": 3.1},
    "steps": [
      {"name": "decode/code", "kind": "decode", "attempts": [{}, {}], "note": null, "refused": null, "marks": [],
       "result": {"decode_client_tps": {"median": 62.6, "min": 62.1, "max": 63.1, "n": 2},
                  "decode_server_tps": {"median": 62.9, "min": 62.4, "max": 63.4, "n": 2},
                  "decode_gap_pct": -0.48, "ttft_s": {"median": 0.2, "min": 0.2, "max": 0.2, "n": 2}}},
      {"name": "ctx/8192", "kind": "ctx", "attempts": [], "note": null, "result": null, "marks": [],
       "refused": "ctx/8192: a prompt of 8192 tokens and an answer of 64 need 8256 tokens"}],
    "refused": ["ctx/8192: a prompt of 8192 tokens and an answer of 64 need 8256 tokens"], "error": null}}})");
  const nlohmann::json speed = SpeedSectionModel(results);
  const std::string md = UnpadTables(RenderSpeedMarkdown(speed));
  EXPECT_NE(md.find("## How fast it runs"), std::string::npos) << md;
  EXPECT_NE(md.find("| decode/code | decode t/s | 62.6 (62.1–63.1, n 2) | 62.9 (62.4–63.4, n 2) | -0.5 | 0.200 "
                    "(0.200–0.200, n 2) | — | 2 |"),
            std::string::npos)
      << md;
  // The marks are numbered notes under the table, the rows carry their numbers.
  EXPECT_NE(md.find("| cold | first request, decode t/s | 16.8 | 17.0 | — | 0.900 | — | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("1. cold/warm decode 0.27, TTFT 3.10\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| ctx/8192 | ctx | — | — | — | — | — | 0 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("2. ctx/8192: a prompt of 8192 tokens"), std::string::npos) << md;
  const std::string html = RenderSpeedHtml(speed);
  EXPECT_NE(html.find("<section id=\"speed\"><h2>How fast it runs</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">62.6<br><span class=\"spread\"><span>(62.1–63.1,</span> <span>n 2)</span></span></td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<ol class=\"notes\"><li>cold/warm decode 0.27, TTFT 3.10</li><li>ctx/8192: a prompt"),
            std::string::npos)
      << html;
  EXPECT_TRUE(SpeedSectionModel(nlohmann::json::parse(R"({"parts": {}})")).is_null());
  EXPECT_EQ(RenderSpeedMarkdown(nullptr), "");
}

// A mark every step shares (the raw route's) is one note, and every row
// refers to it by the same number.
TEST(SpeedSection, AMarkSharedByRowsIsOneNumberedNote) {
  const std::string raw = "the chat stream was refused by the output parser (HTTP 500) and sent over /completion";
  nlohmann::json speed = nlohmann::json::parse(R"({"engine": null, "cold": null, "error": null, "steps": []})");
  for (const char* name : {"decode/code", "decode/prose", "prefill/2048"})
    speed["steps"].push_back({{"name", name}, {"kind", "decode"}, {"attempts", {1}}, {"note", nullptr},
                              {"refused", nullptr}, {"result", nullptr}, {"marks", {raw}}});
  speed["steps"][2]["note"] = "a note of its own";
  const std::string html = RenderSpeedHtml(speed);
  size_t times = 0;
  for (size_t at = html.find(raw); at != std::string::npos; at = html.find(raw, at + 1)) ++times;
  EXPECT_EQ(times, 1u) << html;
  EXPECT_NE(html.find("<td class=\"num\">1, 2</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<ol class=\"notes\"><li>" + raw + "</li><li>a note of its own</li></ol>"), std::string::npos)
      << html;
}

}  // namespace
}  // namespace evalrun::testing

namespace evalrun::testing {
namespace {

TEST(SpeedRecord, MarksWhatMakesARequestDoubtful) {
  SpeedRequest req;
  req.step = "decode/code";
  req.role = "measured";
  req.prompt_id = "code";
  req.target_prompt_tokens = 512;
  req.max_tokens = 64;
  req.message = "Session 000000000001.\nhello";
  req.salt = "Session 000000000001.";
  StreamedReply r;
  r.status = CallStatus::kOk;
  r.completion.prompt_tokens = 511;
  r.completion.completion_tokens = 40;
  r.timing = {0.01, 0.2, 1.2, 1.25, {0.2, 0.6, 1.2}};
  nlohmann::json j = RequestRecord(req, r, 0.5);
  const std::string marks = j["marks"].dump();
  EXPECT_NE(marks.find("the server counted 511 prompt tokens, not the 512 asked"), std::string::npos) << marks;
  EXPECT_NE(marks.find("the answer has 40 tokens, not max_tokens 64"), std::string::npos) << marks;
  EXPECT_NE(marks.find("no timings"), std::string::npos) << marks;
  EXPECT_EQ(j["target_prompt_tokens"], 512);
  EXPECT_EQ(j["prompt_tokens"], 511);
  EXPECT_EQ(j["times"]["send_s"], 0.5);
  EXPECT_NEAR(j["rates"]["decode_client_tps"].get<double>(), 39.0, 1e-9);  // 39 tokens after the first in 1 s
  EXPECT_EQ(j["chunk_gaps"]["n"], 2);
  EXPECT_EQ(j["salt_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["prompt_sha256"].get<std::string>().size(), 64u);
  r.status = CallStatus::kFailed;
  r.error = "HTTP 500";
  EXPECT_EQ(RequestRecord(req, r, 0)["marks"], nlohmann::json::array({"failed: HTTP 500"}));
}

}  // namespace
}  // namespace evalrun::testing
