// The fit part: the ladder of context sizes against the fake llama-server
// program as a managed engine, and against an in-process fake as an
// external engine; prompt sizing with the server's tokenizer.
#include "evals/benchmarks/fit/fit_ladder.h"

#include <atomic>
#include <cstdlib>

#include <gtest/gtest.h>

#include "tests/support/counting_tokenizer.h"
#include "tests/support/fake_engine.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

using testing::FakeServerBinary;

std::string Essays() {
  static const std::string* text = [] {
    auto* t = new std::string;
    Status st = LoadFitHaystack(testing::DatasetsDir(), t);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return t;
  }();
  return *text;
}

// The in-process fake's answer: the needle's number, as the program's.
testing::FakeReply EchoNeedle(const nlohmann::json& request) {
  const std::string content = request["messages"].back().value("content", std::string());
  const std::string key = "The special magic number is ";
  testing::FakeReply r;
  size_t at = content.find(key);
  if (at == std::string::npos) return r;
  size_t b = at + key.size(), e = b;
  while (e < content.size() && std::isdigit(static_cast<unsigned char>(content[e]))) ++e;
  r.content = "It is " + content.substr(b, e - b) + ".";
  return r;
}

class FitTest : public testing::FakeEngineTest {
 protected:
  FitTest() : FakeEngineTest("evalrun-fit") {}

  void SetUp() override {
    FakeEngineTest::SetUp();
    if (HasFatalFailure()) return;
    origin_ = "http://127.0.0.1:" + std::to_string(port_);
    opts_.server.base_url = origin_ + "/v1";
    opts_.haystack = Essays();
    opts_.log = [this](const std::string& l) { lines_.push_back(l); };
  }

  std::unique_ptr<ManagedEngine> Managed(std::vector<std::string> extra) {
    return std::make_unique<ManagedEngine>(Options(extra));
  }
  TransportFactory Transports() {
    return [o = origin_] { return MakeHttpTransport(o, ""); };
  }

  std::string origin_;
  FitOptions opts_;
  std::vector<std::string> lines_;
};

TEST_F(FitTest, LadderFindsTheLargestContextThatLoadsAndAnswers) {
  opts_.contexts = {65536, 4096, 8192, 16384, 32768, 8192};  // sorted and deduplicated
  std::atomic<int> gpu_calls{0};
  opts_.gpu_mem_mib = [&]() -> std::optional<double> {
    ++gpu_calls;
    return 2048.5;
  };
  auto engine = Managed({"--fail-load-above", "20000", "--load-ms", "50"});
  nlohmann::json res;
  Status st = RunFit(opts_, engine.get(), Transports(), nullptr, &res);
  ASSERT_TRUE(st.ok()) << st.ToString();

  EXPECT_EQ(res["largest"], 16384);
  EXPECT_EQ(res["largest_correct"], 16384);
  EXPECT_EQ(res["contexts"], (std::vector<int64_t>{4096, 8192, 16384, 32768, 65536}));
  EXPECT_EQ(res["not_tried"], (std::vector<int64_t>{65536}));
  EXPECT_EQ(res["engine"], "managed");
  EXPECT_EQ(res["fill"], 0.95);
  EXPECT_EQ(res["max_tokens"], 96);
  EXPECT_EQ(res["slots"], 1);
  EXPECT_EQ(res["complete"], true);
  ASSERT_EQ(res["steps"].size(), 4u);

  const int64_t sizes[] = {4096, 8192, 16384};
  for (int i = 0; i < 3; ++i) {
    const auto& s = res["steps"][i];
    const int64_t c = sizes[i];
    SCOPED_TRACE(c);
    EXPECT_EQ(s["context"], c);
    EXPECT_EQ(s["loaded"], true);
    EXPECT_TRUE(s["load_s"].is_number());
    EXPECT_EQ(s["n_ctx_slot"], c);
    EXPECT_EQ(s["answered"], true);
    EXPECT_EQ(s["correct"], true);
    EXPECT_EQ(s["expected"], std::to_string(fit_internal::NeedleValue(42, c)));
    EXPECT_EQ(s["answer"], "The special magic number is " + s["expected"].get<std::string>() + ".");
    EXPECT_EQ(s["finish_reason"], "stop");
    EXPECT_EQ(s["target_tokens"], static_cast<int64_t>(0.95 * c));
    // The fill is tight: what the server counted is what was planned, at
    // most 95 % and at least 94.5 % of the context.
    EXPECT_EQ(s["prompt_tokens"], s["prompt_tokens_planned"]);
    const int pt = s["prompt_tokens"].get<int>();
    EXPECT_LE(pt, static_cast<int>(0.95 * c));
    EXPECT_GE(pt, static_cast<int>(0.945 * c));
    EXPECT_GE(pt, static_cast<int>(0.90 * c));
    EXPECT_LE(s["tokenizer_calls"].get<int>(), 40);
    EXPECT_TRUE(s["prompt_per_second"].is_number());
    EXPECT_TRUE(s["predicted_per_second"].is_number());
    // "The special magic number is N ." and the end-of-sequence token, which
    // llama-server counts as generated (reference chat_eos_forced.body: 1 for "").
    EXPECT_EQ(s["completion_tokens"], 8);
    EXPECT_EQ(s["gpu_mem_peak_mib"], 2048.5);
    EXPECT_TRUE(s["error"].is_null());
    EXPECT_TRUE(s["stop_error"].is_null());
  }
  const auto& failed = res["steps"][3];
  EXPECT_EQ(failed["context"], 32768);
  EXPECT_EQ(failed["loaded"], false);
  EXPECT_EQ(failed["answered"], false);
  EXPECT_TRUE(failed["load_s"].is_number());  // the time to the failure
  EXPECT_TRUE(failed["prompt_tokens"].is_null());
  EXPECT_EQ(failed["gpu_mem_peak_mib"], 2048.5);
  const std::string err = failed["error"].get<std::string>();
  EXPECT_NE(err.find("engine exited while loading (exit status 1"), std::string::npos) << err;
  EXPECT_NE(err.find("alloc_tensor_range: failed to allocate CUDA0 buffer of size 4294967296"), std::string::npos);
  EXPECT_GE(gpu_calls.load(), 8);  // at least a first and a last reading per step

  ASSERT_EQ(lines_.size(), 5u);
  EXPECT_EQ(lines_[0].rfind("fit: 4096: loaded in ", 0), 0u) << lines_[0];
  EXPECT_NE(lines_[0].find("answered (correct), " + std::to_string(res["steps"][0]["prompt_tokens"].get<int>()) +
                           " prompt tokens"),
            std::string::npos)
      << lines_[0];
  EXPECT_EQ(lines_[3].rfind("fit: 32768: did not load: engine exited while loading", 0), 0u)
      << lines_[3];
  EXPECT_EQ(lines_[4], "fit: 32768 did not load; larger sizes are not tried");

  // One start per step, each stopped.
  const std::string log = testing::ReadFile(dir_ + "/server.log");
  int starts = 0, stops = 0;
  for (size_t p = 0; (p = log.find("starting engine (context ", p)) != std::string::npos; ++p) ++starts;
  for (size_t p = 0; (p = log.find(" stopped (", p)) != std::string::npos; ++p) ++stops;
  EXPECT_EQ(starts, 4);
  EXPECT_EQ(stops, 4);
  EXPECT_NE(log.find("starting engine (context 16384, slots 1)"), std::string::npos);
  EXPECT_EQ(log.find("starting engine (context 65536"), std::string::npos);
  EXPECT_EQ(engine->pid(), -1);
}

TEST_F(FitTest, ContinueAfterLoadFailureTriesTheLargerSizes) {
  opts_.contexts = {4096, 8192, 16384};
  opts_.continue_after_load_failure = true;
  opts_.fill = 0.5;
  auto engine = Managed({"--fail-load-above", "5000"});
  nlohmann::json res;
  ASSERT_TRUE(RunFit(opts_, engine.get(), Transports(), nullptr, &res).ok());
  ASSERT_EQ(res["steps"].size(), 3u);
  EXPECT_EQ(res["steps"][0]["answered"], true);
  EXPECT_EQ(res["steps"][1]["loaded"], false);
  EXPECT_EQ(res["steps"][2]["loaded"], false);
  EXPECT_EQ(res["not_tried"], nlohmann::json::array());
  EXPECT_EQ(res["largest"], 4096);
  const int pt = res["steps"][0]["prompt_tokens"].get<int>();
  EXPECT_LE(pt, 2048);
  EXPECT_GE(pt, 2048 - 16);
  EXPECT_TRUE(res["steps"][0]["gpu_mem_peak_mib"].is_null());  // no GPU reading given
}

TEST_F(FitTest, ASlotSmallerThanAskedIsRecordedAsCappedAndFilledToWhatItHas) {
  // The template fixes -np 2: each slot gets half the context. The prompt is
  // sized to the 4096 tokens the slot really has (not 95 % of 8192, which
  // the server would refuse with HTTP 400), and the step says it was capped.
  opts_.contexts = {8192};
  ManagedEngineOptions o;
  o.command = {FakeServerBinary(), "--port", "{port}", "-c", "{context}", "-np", "2"};
  o.origin = origin_;
  o.log_path = dir_ + "/server.log";
  ManagedEngine engine(o);
  nlohmann::json res;
  ASSERT_TRUE(RunFit(opts_, &engine, Transports(), nullptr, &res).ok());
  ASSERT_EQ(res["steps"].size(), 1u);
  const auto& s = res["steps"][0];
  EXPECT_EQ(s["loaded"], true);
  EXPECT_EQ(s["context"], 8192);
  EXPECT_EQ(s["n_ctx_slot"], 4096);
  EXPECT_EQ(s["capped"], true);
  EXPECT_EQ(s["effective_context"], 4096);
  EXPECT_EQ(s["target_tokens"], static_cast<int>(0.95 * 4096));
  EXPECT_EQ(s["answered"], true);
  EXPECT_EQ(s["correct"], true);
  EXPECT_LE(s["prompt_tokens"].get<int>(), static_cast<int>(0.95 * 4096));
  EXPECT_TRUE(s["http_status"].is_null());
  // What answered is a 4096-token slot, not the 8192 asked for.
  EXPECT_EQ(res["largest"], 4096);
  EXPECT_EQ(res["largest_correct"], 4096);
  EXPECT_EQ(res["complete"], true);
}

TEST_F(FitTest, ExternalEngineTriesEverySizeOnTheRunningServer) {
  testing::FakeServerOptions fo;
  fo.port = port_;
  fo.slots = 1;
  fo.n_ctx = 8192;
  testing::FakeServer server(fo);
  server.SetResponder(EchoNeedle);
  ASSERT_TRUE(server.Start());
  opts_.contexts = {2048, 8192, 16384};
  opts_.fill = 0.9;
  ExternalEngine engine(origin_);
  nlohmann::json res;
  ASSERT_TRUE(RunFit(opts_, &engine, Transports(), nullptr, &res).ok());
  EXPECT_EQ(res["engine"], "external");
  ASSERT_EQ(res["steps"].size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const auto& s = res["steps"][i];
    EXPECT_EQ(s["loaded"], true);
    EXPECT_TRUE(s["load_s"].is_null());
    EXPECT_EQ(s["answered"], true);
    EXPECT_EQ(s["correct"], true);
    EXPECT_EQ(s["n_ctx_slot"], 8192);
    const int c = s["context"].get<int>();
    const int pt = s["prompt_tokens"].get<int>();
    EXPECT_LE(pt, static_cast<int>(0.9 * c));
    EXPECT_GE(pt, static_cast<int>(0.895 * c));
  }
  // 16384 is more than the running server's slot: sized to its 8192, capped.
  const auto& big = res["steps"][2];
  EXPECT_EQ(big["capped"], true);
  EXPECT_EQ(big["n_ctx_slot"], 8192);
  EXPECT_EQ(big["answered"], true);
  EXPECT_LE(big["prompt_tokens"].get<int>(), static_cast<int>(0.9 * 8192));
  EXPECT_FALSE(res["steps"][0]["capped"].get<bool>());
  EXPECT_EQ(res["largest"], 8192);
  // The request carried the sampling given and max_tokens.
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0]["max_tokens"], 96);
}

// Counts as the fake server does, without asking it.
class LocalFakeTokenizer : public testing::CountingTokenizer {
 public:
  LocalFakeTokenizer()
      : CountingTokenizer(testing::FakeTokenCount, [](std::string_view content) {
          return testing::FakeTokenCount(testing::FakeApplyTemplate(
                     nlohmann::json::array({{{"role", "user"}, {"content", content}}}))) +
                 1;
        }) {}
};

TEST_F(FitTest, WithoutTokenizerEndpointsTheStepSaysSoUnlessATokenizerIsGiven) {
  testing::FakeServerOptions fo;
  fo.port = port_;
  fo.n_ctx = 4096;
  fo.tokenize_endpoints = false;
  testing::FakeServer server(fo);
  server.SetResponder(EchoNeedle);
  ASSERT_TRUE(server.Start());
  ExternalEngine engine(origin_);
  opts_.contexts = {4096};
  nlohmann::json res;
  ASSERT_TRUE(RunFit(opts_, &engine, Transports(), nullptr, &res).ok());
  const auto& s = res["steps"][0];
  EXPECT_EQ(s["loaded"], true);
  EXPECT_EQ(s["answered"], false);
  EXPECT_EQ(s["error"].get<std::string>().rfind("sizing the prompt: " + origin_ + " cannot count tokens: neither "
                                                "llama-server's POST /apply-template + /tokenize nor", 0),
            0u)
      << s["error"];
  EXPECT_EQ(server.chat_requests(), 0);

  int made = 0;
  opts_.make_tokenizer = [&](std::unique_ptr<HttpTransport>) -> std::unique_ptr<Tokenizer> {
    ++made;
    return std::make_unique<LocalFakeTokenizer>();
  };
  ASSERT_TRUE(RunFit(opts_, &engine, Transports(), nullptr, &res).ok());
  EXPECT_EQ(made, 1);
  const auto& t = res["steps"][0];
  EXPECT_EQ(t["answered"], true);
  EXPECT_EQ(t["correct"], true);
  EXPECT_EQ(t["prompt_tokens"], t["prompt_tokens_planned"]);
  EXPECT_LE(t["prompt_tokens"].get<int>(), 3891);
  EXPECT_GE(t["prompt_tokens"].get<int>(), 3891 - 19);
  EXPECT_GE(t["tokenizer_calls"].get<int>(), 2);
  EXPECT_EQ(res["largest"], 4096);
}

TEST_F(FitTest, CancelStopsTheEngineAndReturnsCancelled) {
  CancelToken cancel;
  opts_.contexts = {4096, 8192};
  opts_.gpu_mem_mib = [&]() -> std::optional<double> {
    cancel.Cancel();  // during the first step
    return std::nullopt;
  };
  auto engine = Managed({"--load-ms", "100"});
  nlohmann::json res;
  Status st = RunFit(opts_, engine.get(), Transports(), &cancel, &res);
  EXPECT_EQ(st.code(), Status::Code::kCancelled) << st.ToString();
  ASSERT_EQ(res["steps"].size(), 1u);
  EXPECT_EQ(res["steps"][0]["error"], "interrupted");
  EXPECT_TRUE(res["steps"][0]["gpu_mem_peak_mib"].is_null());
  EXPECT_EQ(res["complete"], false);
  EXPECT_TRUE(res["largest"].is_null());
  EXPECT_EQ(engine->pid(), -1);
}

// an engine that dies in the middle of the request (here
// SIGBUS, as a model file cut short under its mmap) is a failed step naming
// the signal and the log's last lines, never "answered" with an empty answer.
TEST_F(FitTest, AnEngineThatDiesMidRequestMakesItsStepAFailedStep) {
  opts_.contexts = {4096, 8192};
  auto engine = Managed({"--crash-on-chat-above", "6000"});
  nlohmann::json res;
  Status st = RunFit(opts_, engine.get(), Transports(), nullptr, &res);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(res["steps"].size(), 2u);
  const auto& ok = res["steps"][0];
  EXPECT_EQ(ok["answered"], true);
  EXPECT_TRUE(ok["engine_exit"].is_null());
  const auto& died = res["steps"][1];
  EXPECT_EQ(died["loaded"], true);
  EXPECT_EQ(died["answered"], false) << died.dump(1);
  EXPECT_EQ(died["correct"], false);
  EXPECT_TRUE(died["prompt_tokens"].is_null());
  EXPECT_EQ(died["engine_exit"], "killed by signal 7 (SIGBUS)") << died.dump(1);
  const std::string error = died["error"].is_string() ? died["error"].get<std::string>() : "";
  EXPECT_NE(error.find("the engine died during the request (killed by signal 7 (SIGBUS))"), std::string::npos)
      << error;
  EXPECT_NE(error.find("bus error reading tensor data"), std::string::npos) << error;
  EXPECT_NE(died["log_tail"].get<std::string>().find("bus error reading tensor data"), std::string::npos);
  EXPECT_EQ(res["largest"], 4096);
  EXPECT_EQ(res["largest_correct"], 4096);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[1].rfind("fit: 8192: loaded in ", 0), 0u) << lines_[1];
  EXPECT_NE(lines_[1].find("no answer: the engine died during the request"), std::string::npos) << lines_[1];
  EXPECT_EQ(engine->pid(), -1);
}

TEST_F(FitTest, BadOptionsAreRefusedBeforeAnyStart) {
  auto engine = Managed({});
  nlohmann::json res;
  opts_.fill = 0;
  EXPECT_EQ(RunFit(opts_, engine.get(), Transports(), nullptr, &res).code(), Status::Code::kInvalidInput);
  opts_.fill = 0.95;
  opts_.contexts = {4096, 0};
  Status st = RunFit(opts_, engine.get(), Transports(), nullptr, &res);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), "parts.fit.contexts: expected sizes >= 1, got 0");
  EXPECT_EQ(res["steps"].size(), 0u);
  EXPECT_EQ(testing::ReadFile(dir_ + "/server.log"), "");
}

TEST(FitInternalTest, NeedleValueIsSevenDigitsAndStable) {
  // Values from a Python transcription of the same splitmix64.
  EXPECT_EQ(fit_internal::NeedleValue(42, 4096), 4666162);
  EXPECT_EQ(fit_internal::NeedleValue(42, 8192), 5638439);
  EXPECT_EQ(fit_internal::NeedleValue(7, 4096), 5344664);
  EXPECT_EQ(fit_internal::NeedleValue(-1, 131072), 7913445);
}

TEST(FitInternalTest, BuildMessageCutsAtAWordAndPutsTheNeedleAtHalfDepth) {
  const std::string src = "Alpha beta. Gamma delta. Epsilon zeta. Eta theta.";
  const std::string head =
      "A special magic number is hidden within the following text. Make sure to memorize it. "
      "I will quiz you about the number afterwards.\n";
  const std::string tail =
      "\nWhat is the special magic number mentioned in the provided text? Answer with the number.";
  const std::string needle = "The special magic number is 1234567.";
  using fit_internal::BuildMessage;
  EXPECT_EQ(BuildMessage(src, 0, 1234567), head + needle + tail);
  EXPECT_EQ(BuildMessage(src, src.size(), 1234567),
            head + "Alpha beta. Gamma delta. " + needle + " Epsilon zeta. Eta theta." + tail);
  EXPECT_EQ(BuildMessage(src, 200, 1234567), BuildMessage(src, src.size(), 1234567));
  EXPECT_EQ(BuildMessage(src, 30, 1234567), head + "Alpha beta. " + needle + " Gamma delta." + tail);
  EXPECT_EQ(BuildMessage(src, 27, 1234567), BuildMessage(src, 30, 1234567));
  EXPECT_EQ(BuildMessage(src, 8, 1234567), head + needle + " Alpha" + tail);
  EXPECT_EQ(BuildMessage(src, 3, 1234567), head + needle + tail);
}

TEST(FitInternalTest, LoadFitHaystackCollapsesWhitespace) {
  std::string text;
  ASSERT_TRUE(LoadFitHaystack(testing::DatasetsDir(), &text).ok());
  // Python: re.sub(r'\s+', ' ', json.load(f)['text']).strip(): 3,002,807 bytes.
  EXPECT_EQ(text.size(), 3002807u);
  EXPECT_EQ(text.rfind("July 2010What hard liquor, cigarettes, heroin, and crack have in common is that", 0), 0u);
  EXPECT_EQ(text.substr(text.size() - 32), "because the paint was still wet.");
  EXPECT_EQ(text.find("  "), std::string::npos);
  EXPECT_EQ(text.find('\n'), std::string::npos);

  Status st = LoadFitHaystack("/nonexistent-data", &text);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "/nonexistent-data/ruler/PaulGrahamEssays.json: cannot open for reading");
}

TEST(FitInternalTest, OptionsFromTheCard) {
  Card card;
  ASSERT_TRUE(ParseCard(R"({"name": "c", "server": {"base_url": "http://127.0.0.1:9/v1",
                          "command": ["llama-server", "--port", "{port}"]},
                          "sampling": {"temperature": 0.5, "seed": 7}, "thinking": true,
                          "parts": {"fit": {"contexts": [4096, 8192], "fill": 0.9, "max_tokens": 64}}})",
                        "card.json", &card)
                  .ok());
  FitOptions o = FitOptionsFromCard(card, &card.FindPart("fit")->settings);
  EXPECT_EQ(o.contexts, (std::vector<int64_t>{4096, 8192}));
  EXPECT_EQ(o.fill, 0.9);
  EXPECT_EQ(o.max_tokens, 64);
  EXPECT_EQ(o.slots, 1);
  EXPECT_EQ(o.seed, 7);
  EXPECT_EQ(o.params.temperature, 0.5);
  EXPECT_EQ(o.params.enable_thinking, true);
  EXPECT_EQ(o.server.command.size(), 3u);
  FitOptions d = FitOptionsFromCard(card, nullptr);
  EXPECT_EQ(d.contexts, DefaultFitContexts());
  EXPECT_EQ(d.max_tokens, 96);
  EXPECT_EQ(DefaultFitContexts(), (std::vector<int64_t>{4096, 8192, 16384, 32768, 65536, 131072}));
}

}  // namespace
}  // namespace evalrun
