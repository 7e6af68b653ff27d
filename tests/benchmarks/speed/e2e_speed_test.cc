// The speed part end to end: the real evalrun binary against the
// fake llama-server with planted service times (prefill ms per prompt
// token, ms per generated token): decode, prefill, totals and TTFT come out
// within 1 % of what was planted; every prompt is exactly its target by the
// server's usage; a conc level above the slots (C8 on 4 slots) runs, with a
// note that the rest queue in the server (which never runs more than its
// slots), and its queue time (TTFT - prompt_ms) shows the wait; each
// request's body in speed/requests.jsonl is what the server received; a
// server that reuses its cache whatever it is asked is
// caught; a step too long for the slot context is refused before any
// request, naming it; the report has its "How fast it runs" section; a
// chat stream the server's output parser refuses is measured over the raw
// route, with what was sent before it recorded in order.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "evals/publish/report.h"
#include "tests/support/markdown_tables.h"
#include "tests/support/capture_output.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2eSpeed : public E2eTest {
 protected:
  // A guard that never fires: the load on a shared test machine is not what these tests plant.
  static std::string Speed(const std::string& keys) {
    return R"({"speed": {"guard_threshold_pct": 99999, )" + keys + "}}";
  }
  nlohmann::json Step(const nlohmann::json& speed, const std::string& name) {
    for (const auto& s : speed["steps"])
      if (s["name"] == name) return s;
    ADD_FAILURE() << "no step " << name;
    return nlohmann::json::object();
  }
  static double Median(const nlohmann::json& step, const char* key) {
    return step["result"][key]["median"].get<double>();
  }
};

void ExpectWithin1Pct(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 0.01 * want) << what << ": got " << got << ", planted " << want;
}

TEST_F(E2eSpeed, PlantedServiceTimesComeOutWithinOnePercentOnBothClocks) {
  FakeServerOptions fo;
  fo.slots = 4;
  fo.n_ctx = 8192;
  fo.prefill_ms_per_token = 3.0;  // 333.3 prompt tokens/s
  // 33.3 tokens/s. TTFTs of 3 s and more, requests of about 5 s: on a loaded
  // test machine the fake admits a request some 15-25 ms late, under 1 % of that.
  fo.ms_per_token = 30;
  fo.ping_every_ms = 40;          // ": ping" comments during the prefill, skipped
  fo.metrics = true;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "4", Speed(R"(
      "steps": ["decode", "prefill", "conc"], "prompt_ids": ["code"], "decode_prompt_tokens": 1000, "runs": 2,
      "warmups": 0, "max_tokens": 64, "prefill_depths": [1500], "prefill_runs": 2, "conc_levels": [1, 2, 4, 8],
      "conc_rounds": 1)"));
  BinaryResult r = Run({"--card", card, "--job", "s", "--parts", "speed"}, 240);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json speed = Results("s")["parts"]["speed"];
  ASSERT_TRUE(speed["complete"].get<bool>()) << speed["error"];

  const nlohmann::json decode = Step(speed, "decode/code");
  ExpectWithin1Pct(Median(decode, "decode_client_tps"), 1000.0 / 30, "client decode");
  ExpectWithin1Pct(Median(decode, "decode_server_tps"), 1000.0 / 30 * 64 / 63, "server decode (predicted_n / ms)");
  ExpectWithin1Pct(Median(decode, "ttft_s"), 3.0, "decode TTFT");
  const nlohmann::json prefill = Step(speed, "prefill/1500");
  ExpectWithin1Pct(Median(prefill, "prefill_client_tps"), 1000.0 / 3, "client prefill");
  ExpectWithin1Pct(Median(prefill, "prefill_server_tps"), 1000.0 / 3, "server prefill");
  ExpectWithin1Pct(Median(prefill, "ttft_s"), 4.5, "prefill TTFT");
  const double per_request_s = 3.0 + 63 * 0.030;  // prefill, then 63 gaps
  for (int c : {1, 2, 4}) {
    const nlohmann::json s = Step(speed, "conc/C" + std::to_string(c));
    ExpectWithin1Pct(Median(s, "total_tps"), c * 64 / per_request_s, "C" + std::to_string(c) + " total");
    ExpectWithin1Pct(Median(s, "per_request_tps"), 64 / per_request_s, "C" + std::to_string(c) + " per request");
    EXPECT_LE(s["result"]["peak_in_flight"].get<int>(), c);
  }
  // C8 on 4 slots: run, not refused; the 4 beyond the slots wait in the server for a whole request.
  const nlohmann::json c8 = Step(speed, "conc/C8");
  EXPECT_TRUE(c8["refused"].is_null()) << c8["refused"];
  EXPECT_NE(c8["note"].get<std::string>().find("8 requests at once on 4 slots: the 4 beyond the slots queue in the "
                                                "server"),
            std::string::npos)
      << c8["note"];
  EXPECT_NE(r.err.find("speed: conc/C8: 8 requests at once on 4 slots: the 4 beyond the slots queue"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(c8["result"]["requests_ok"], 8);
  // Queue times are not below 0 by more than clock noise: the server starts
  // its prompt clock when it has read the request, which may be a hair
  // before the client's write returns (CI saw -25 and -42 us).
  constexpr double kClockNoiseS = -0.005;
  EXPECT_GE(c8["result"]["queue_s"]["min"].get<double>(), kClockNoiseS);
  EXPECT_GE(c8["result"]["queue_s"]["max"].get<double>(), 0.9 * per_request_s) << c8["result"]["queue_s"];
  EXPECT_LE(server.max_running(), 4);
  EXPECT_GE(server.max_waiting(), 1);
  for (const char* name : {"decode/code", "prefill/1500", "conc/C1", "conc/C4"}) {
    const nlohmann::json q = Step(speed, name)["result"]["queue_s"];
    EXPECT_EQ(q["n"], Step(speed, name)["result"]["requests"]) << name;
    EXPECT_GE(q["min"].get<double>(), kClockNoiseS) << name << ": " << q;
  }

  EXPECT_TRUE(speed["cold"]["cold"].get<bool>()) << speed["cold"];  // /metrics at zero before the part
  EXPECT_TRUE(speed["cold"]["decode_cold_to_warm"].is_number());
  const auto samples = Samples("s", "speed");
  ASSERT_EQ(samples.size(), 1u + 2 + 2 + 1 + 2 + 4 + 8);  // cold, decode, prefill, C1, C2, C4, C8
  EXPECT_EQ(samples[0]["role"], "cold");
  for (const auto& s : samples) {
    EXPECT_EQ(s["prompt_tokens"], s["target_prompt_tokens"]) << s.dump();
    EXPECT_EQ(s["completion_tokens"], s["max_tokens"]) << s.dump();
    EXPECT_TRUE(s["marks"].empty()) << s.dump();
    EXPECT_EQ(s["timings"]["cache_n"], 0);
  }
  std::set<std::string> received;
  for (const auto& body : server.requests()) {
    EXPECT_EQ(body.value("cache_prompt", true), false);
    EXPECT_EQ(body.value("ignore_eos", false), true);
    EXPECT_EQ(body.value("stream", false), true);
    received.insert(body.dump());
  }
  // speed/requests.jsonl: every request's body as the server received it, joined to its record by seq.
  const auto bodies = Lines(dir_ + "/runs/s/speed/requests.jsonl");
  ASSERT_EQ(bodies.size(), samples.size());
  std::set<uint64_t> seqs;
  for (const auto& s : samples) seqs.insert(s["seq"].get<uint64_t>());
  for (const auto& b : bodies) {
    EXPECT_TRUE(seqs.count(b["seq"].get<uint64_t>())) << b["seq"];
    EXPECT_EQ(b["path"], "/v1/chat/completions");
    EXPECT_TRUE(received.count(nlohmann::json::parse(b["body"].get<std::string>()).dump())) << b["seq"];
  }

  ReportOptions ro;
  ro.run_dir = dir_ + "/runs/s";
  Captured rep = Capture([&](FILE* out, FILE* err) { return ReportRun(ro, out, err); });
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string md = UnpadTables(ReadFile(ro.run_dir + "/report.md"));
  EXPECT_NE(md.find("## How fast it runs"), std::string::npos) << md;
  EXPECT_NE(md.find("| conc/C4 | total t/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| queue s |"), std::string::npos) << md;
  EXPECT_NE(ReadFile(ro.run_dir + "/report.html").find("<h2>How fast it runs</h2>"), std::string::npos);
}

TEST_F(E2eSpeed, AServerThatReusesItsCacheIsCaughtAndOneWithoutMetricsIsNotCalledCold) {
  FakeServerOptions fo;
  fo.force_cache_n = 100;
  fo.ms_per_token = 1;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "4", Speed(R"(
      "steps": ["decode"], "prompt_ids": ["prose"], "decode_prompt_tokens": 300, "runs": 2, "warmups": 0,
      "max_tokens": 16)"));
  BinaryResult r = Run({"--card", card, "--job", "c", "--parts", "speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json speed = Results("c")["parts"]["speed"];
  const nlohmann::json step = Step(speed, "decode/prose");
  EXPECT_NE(step["marks"].dump().find("the server reused its cache (cache_n = 100) (2 requests)"), std::string::npos)
      << step["marks"];
  for (const auto& s : Samples("c", "speed")) EXPECT_EQ(s["timings"]["cache_n"], 100);
  EXPECT_FALSE(speed["cold"]["cold"].get<bool>());
  EXPECT_NE(speed["cold"]["why_not_cold"].get<std::string>().find("/metrics"), std::string::npos);
}

TEST_F(E2eSpeed, AStepTooLongForTheSlotIsRefusedBeforeAnyRequestNamingIt) {
  FakeServerOptions fo;
  fo.n_ctx = 4096;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "4", Speed(R"(
      "steps": ["ctx"], "prompt_ids": ["code"], "decode_prompt_tokens": 300, "warmups": 0, "max_tokens": 64,
      "ctx_depths": [2048, 4096, 8192], "ctx_runs": 1)"));
  BinaryResult r = Run({"--card", card, "--job", "t", "--parts", "speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json speed = Results("t")["parts"]["speed"];
  const nlohmann::json big = Step(speed, "ctx/8192");
  ASSERT_TRUE(big["refused"].is_string());
  EXPECT_EQ(big["refused"].get<std::string>().rfind("ctx/8192: ", 0), 0u) << big["refused"];
  EXPECT_TRUE(big["attempts"].empty());
  EXPECT_NE(r.err.find("ctx/8192: a prompt of 8192 tokens"), std::string::npos) << r.err;
  const nlohmann::json full = Step(speed, "ctx/4096");
  EXPECT_EQ(full["target_prompt_tokens"], 3072);  // the slot context itself: room left for the answer
  EXPECT_TRUE(full["note"].is_string());
  for (const auto& s : Samples("t", "speed")) {
    EXPECT_NE(s["step"], "ctx/8192");
    EXPECT_EQ(s["prompt_tokens"], s["target_prompt_tokens"]);
  }
}

// llama-server b10470's output parser ends a chat stream with an error event
// at the first token it cannot take: the speed part sends that request again
// over /completion (raw text, an accept-anything chat_parser), measures it
// there, and records in requests.jsonl what it sent in order: the refused
// chat stream and /apply-template (untimed), then the timed /completion.
TEST_F(E2eSpeed, AChatStreamTheParserRefusesIsMeasuredOverTheRawRouteAndRecordedInOrder) {
  FakeServerOptions fo;
  fo.ms_per_token = 1;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  std::atomic<int> asked{0};
  server.SetResponder([&](const nlohmann::json&) {
    FakeReply r{"The answer is B, for reasons that take a while to write down", "", "stop"};
    if (asked++ % 2 == 1) r.fault = Fault::kParserRefusal;
    return r;
  });
  const std::string card = WriteCard(server.base_url(), "4", Speed(R"(
      "steps": ["decode", "conc"], "prompt_ids": ["code"], "decode_prompt_tokens": 300, "runs": 4, "warmups": 1,
      "max_tokens": 16, "conc_levels": [1, 4], "conc_rounds": 1)"));
  BinaryResult r = Run({"--card", card, "--job", "raw", "--parts", "speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json speed = Results("raw")["parts"]["speed"];
  EXPECT_TRUE(speed["complete"].get<bool>()) << speed.dump(2);
  const auto samples = Samples("raw", "speed");
  ASSERT_EQ(samples.size(), 1u + 1 + 4 + 1 + 4);  // cold, warm-up, 4 decode, C1, 4 of C4
  std::map<uint64_t, std::vector<std::string>> chains;
  for (const auto& b : Lines(dir_ + "/runs/raw/speed/requests.jsonl"))
    chains[b["seq"].get<uint64_t>()].push_back(b["path"].get<std::string>() + (b["timed"] == true ? "" : " (untimed)"));
  int raw = 0;
  for (const auto& x : samples) {
    EXPECT_EQ(x["status"], "ok") << x.dump();
    EXPECT_EQ(x["completion_tokens"], 16) << x.dump();
    EXPECT_TRUE(x["rates"]["ttft_s"].is_number()) << x.dump();
    const auto& chain = chains[x["seq"].get<uint64_t>()];
    if (x["route"] == "completion") {
      ++raw;
      EXPECT_NE(x.value("refused_chat", std::string()).find("peg-native"), std::string::npos) << x.dump();
      EXPECT_NE(x["marks"].dump().find("sent over /completion"), std::string::npos) << x["marks"];
      EXPECT_EQ(chain, (std::vector<std::string>{"/v1/chat/completions (untimed)", "/apply-template (untimed)",
                                                 "/completion"}))
          << x["seq"];
    } else {
      EXPECT_EQ(chain, std::vector<std::string>{"/v1/chat/completions"}) << x["seq"];
    }
  }
  EXPECT_GE(raw, 4) << "every other chat stream is refused";
  EXPECT_EQ(chains.size(), samples.size());
  EXPECT_EQ(server.requests().size(), samples.size() + raw);  // each chat once, each raw route's /completion once
}

// A run of the speed part alone with "slots": "auto" records the server's
// own count (GET /props total_slots), as the page's Setup table shows it, not
// 1, though no question pool needed sizing.
TEST_F(E2eSpeed, ASpeedOnlyRunWithAutoSlotsRecordsTheServersOwnCount) {
  FakeServerOptions fo;
  fo.ms_per_token = 1;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "\"auto\"", Speed(R"(
      "steps": ["decode"], "prompt_ids": ["prose"], "decode_prompt_tokens": 300, "runs": 1, "warmups": 0,
      "max_tokens": 8)"));
  BinaryResult r = Run({"--card", card, "--job", "auto", "--parts", "speed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/auto/run.json"));
  EXPECT_EQ(run["slots"], 4);
}

}  // namespace
}  // namespace evalrun::testing
