// The nvidia profile against NVIDIA's own prepare.py.
//
// tests/fixtures/ruler/nvidia_reference.json holds what NVIDIA/RULER
// c3f5e3b4's prepare.py produced (seed 42, model template base) with a
// tokenizer that counted as Tokenizer::CountChat against llama-server on
// stories260K (README.md there says how it was made): per sample the sha256
// of input + answer_prefix and of the outputs, the runs that did not finish,
// and the count of every text that tokenizer was asked about. TableTokenizer
// answers from those counts, so evalrun gets exactly NVIDIA's answers, and
// fails loudly on a text NVIDIA's script never counted.
// nvidia_bytes4_reference.json is the same run with a tokenizer that is a
// formula, (UTF-8 bytes + 3) / 4, under which vt and cwe finish at both
// lengths (with stories260K vt's 500-token example never fits).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evals/benchmarks/ruler/ruler_builders.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/base/sha256.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

nlohmann::json LoadFixture(const std::string& name) {
  const std::string path = testing::FixturePath("ruler/" + name);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  EXPECT_TRUE(j.is_object()) << path << " is missing or not JSON";
  return j;
}

const RulerInputs& Inputs() {
  static const RulerInputs* inputs = [] {
    auto* in = new RulerInputs;
    const Status st = LoadRulerInputs(testing::DatasetsDir() + "/ruler", RulerLoadOptions{}, in);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return in;
  }();
  return *inputs;
}

// CountChat from {sha256(text): count}; anything else is an error.
class TableTokenizer : public Tokenizer {
 public:
  explicit TableTokenizer(const nlohmann::json* counts) : counts_(counts) {}
  Status Count(std::string_view text, int* n) override {
    ++calls_;
    return Status::Internal("the nvidia profile asked for a raw count (NVIDIA's scripts make none)");
  }
  Status CountChat(std::string_view content, int* n) override {
    ++calls_;
    const std::string h = Sha256Hex(content);
    auto it = counts_->find(h);
    if (it == counts_->end()) {
      unknown_.push_back(h);
      return Status::Internal("no recorded count for a text of " + std::to_string(content.size()) +
                              " bytes, sha256 " + h + ": NVIDIA's script never counted it");
    }
    *n = it->get<int>();
    return Status::Ok();
  }
  int calls() const override { return calls_; }

 private:
  const nlohmann::json* counts_;
  std::vector<std::string> unknown_;
  int calls_ = 0;
};

struct Got {
  std::string input_sha256, outputs_sha256;
  int tokens = 0;
  int calls = 0;
};

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "\n" : "") + v[i];
  return s;
}

// (UTF-8 bytes + 3) / 4 for every count: the harness's bytes4 tokenizer.
class Bytes4Tokenizer : public Tokenizer {
 public:
  Status Count(std::string_view text, int* n) override {
    ++calls_;
    return Status::Internal("the nvidia profile asked for a raw count (NVIDIA's scripts make none)");
  }
  Status CountChat(std::string_view content, int* n) override {
    ++calls_;
    *n = static_cast<int>((content.size() + 3) / 4);
    return Status::Ok();
  }
  int calls() const override { return calls_; }

 private:
  int calls_ = 0;
};

// Counts NVIDIA makes that evalrun has no use for, per sample: niah.py's
// token_position_answer and freq_words_extraction.py's second count of the
// accepted text.
int ExtraCountsPerSample(const RulerTaskConfig& t) {
  return t.family == RulerFamily::kNiah || t.family == RulerFamily::kFreqWords ? 1 : 0;
}

struct Tally {
  int finished = 0, identical = 0, skipped = 0, redrawn = 0, samples = 0;
};

// Replays every run of the fixture through GenerateRulerSamples (nvidia).
void CheckAgainst(const nlohmann::json& fx, const std::function<std::unique_ptr<Tokenizer>()>& make_tok,
                  Tally* tally) {
  ASSERT_TRUE(fx.contains("runs"));
  const int num_samples = fx.at("num_samples");
  int& finished = tally->finished;
  int& identical = tally->identical;
  int& skipped = tally->skipped;
  int& redrawn = tally->redrawn;
  for (const nlohmann::json& run : fx.at("runs")) {
    const std::string name = run.at("task");
    const int length = run.at("length");
    const std::string where = name + " at " + std::to_string(length);
    RulerTaskConfig task;
    ASSERT_TRUE(RulerTaskByName(name, &task).ok()) << name;
    ASSERT_EQ(task.profile, RulerProfile::kNvidia) << "nvidia is the default profile";
    std::unique_ptr<Tokenizer> tok_owner = make_tok();
    Tokenizer& tok = *tok_owner;
    std::vector<Got> got;
    const RulerSampleSink sink = [&](RulerSample s) {
      got.push_back({s.prompt_sha256, Sha256Hex(Joined(s.gold)), s.exact_prompt_tokens, s.tokenizer_calls});
      EXPECT_EQ(s.prompt_sha256, Sha256Hex(s.prompt + s.assistant_prefix));
      return Status::Ok();
    };
    RulerGenStats stats;
    const Status st = GenerateRulerSamples(Inputs(), task, length, num_samples, 42, &tok, sink, &stats);
    ASSERT_TRUE(st.ok()) << where << ": " << st.ToString();
    if (run.at("finished").get<bool>()) {
      ++finished;
      ASSERT_FALSE(stats.cannot_prepare) << where << ": " << stats.reason;
      const nlohmann::json& want = run.at("samples");
      ASSERT_EQ(got.size(), want.size()) << where;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].input_sha256, want[i].at("input_sha256").get<std::string>()) << where << " sample " << i;
        EXPECT_EQ(got[i].outputs_sha256, want[i].at("outputs_sha256").get<std::string>())
            << where << " sample " << i;
        EXPECT_EQ(got[i].tokens + task.max_tokens, want[i].at("length").get<int>()) << where << " sample " << i;
        identical += got[i].input_sha256 == want[i].at("input_sha256").get<std::string>();
        redrawn += got[i].calls > 1;  // stepped down and redrawn at least once
      }
      // The same tokenizer calls as NVIDIA's script, less those evalrun does not need.
      EXPECT_EQ(stats.tokenizer_calls + ExtraCountsPerSample(task) * num_samples,
                run.at("tokenizer_calls").get<int>())
          << where;
    } else {
      ++skipped;
      // NVIDIA's script did not finish: a skip, not a hang, and a reason
      // naming the task and the length.
      EXPECT_TRUE(stats.cannot_prepare) << where << " produced " << got.size() << " samples";
      EXPECT_NE(stats.reason.find(where), std::string::npos) << stats.reason;
      if (run.contains("counts_kept")) {
        EXPECT_LE(stats.tokenizer_calls, run.at("counts_kept").get<int>()) << where;
      }
      std::printf("skipped after %d counts: %s\n", stats.tokenizer_calls, stats.reason.c_str());
    }
  }
  tally->samples = finished * num_samples;
  std::printf("nvidia profile: %d runs finished upstream, %d of their %d samples byte-identical (%d of them "
              "after a step-down and redraw); %d runs skipped where NVIDIA's script did not finish\n",
              finished, identical, finished * num_samples, redrawn, skipped);
}

TEST(RulerNvidia, ReproducesNvidiasPreparePyByteForByte) {
  const nlohmann::json fx = LoadFixture("nvidia_reference.json");
  ASSERT_TRUE(fx.contains("counts"));
  const nlohmann::json* counts = &fx.at("counts");
  Tally t;
  CheckAgainst(fx, [counts] { return std::make_unique<TableTokenizer>(counts); }, &t);
  EXPECT_GT(t.finished, 0);
  EXPECT_GT(t.skipped, 0);
  EXPECT_EQ(t.identical, t.samples);
}

TEST(RulerNvidia, ReproducesNvidiasPreparePyWithAFormulaTokenizer) {
  const nlohmann::json fx = LoadFixture("nvidia_bytes4_reference.json");
  ASSERT_EQ(fx.value("tokenizer", ""), "bytes4: (UTF-8 bytes + 3) // 4");
  Tally t;
  CheckAgainst(fx, [] { return std::make_unique<Bytes4Tokenizer>(); }, &t);
  EXPECT_GT(t.finished, 0);
  EXPECT_EQ(t.identical, t.samples);
}



// One token per byte: fwe's template alone is longer than 256 - 50.
class BytesTokenizer : public Tokenizer {
 public:
  Status Count(std::string_view text, int* n) override { return Status::Internal("raw count"); }
  Status CountChat(std::string_view content, int* n) override {
    ++calls_;
    *n = static_cast<int>(content.size());
    return Status::Ok();
  }
  int calls() const override { return calls_; }

 private:
  int calls_ = 0;
};

RulerTaskConfig NvidiaTask(const std::string& name) {
  RulerTaskConfig t;
  EXPECT_TRUE(RulerTaskByName(name, &t).ok()) << name;
  return t;
}

TEST(RulerNvidia, WhereTheScriptWouldLoopOrCrashItIsACannotPrepare) {
  {  // fwe: the step-down loop has no floor; the bare template does not fit.
    BytesTokenizer tok;
    std::vector<RulerSample> out;
    RulerGenStats stats;
    ASSERT_TRUE(GenerateRulerSamples(Inputs(), NvidiaTask("fwe"), 256, 3, 42, &tok, &out, &stats).ok());
    EXPECT_TRUE(stats.cannot_prepare);
    EXPECT_TRUE(out.empty());
    EXPECT_NE(stats.reason.find("fwe at 256: NVIDIA's freq_words_extraction.py never finishes here: even the "
                                "template without words needs"),
              std::string::npos)
        << stats.reason;
    EXPECT_LT(stats.tokenizer_calls, 100);
    // Without stats the outcome is an error, so it cannot pass unnoticed.
    const Status st = GenerateRulerSamples(Inputs(), NvidiaTask("fwe"), 256, 3, 42, &tok, &out);
    EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
    EXPECT_EQ(st.message(), stats.reason);
  }
  {  // cwe at 128K: the search probes more words than wonderwords has (and
     // english_words.json is absent): random.sample raises, the script dies.
    Bytes4Tokenizer tok;
    std::vector<RulerSample> out;
    RulerGenStats stats;
    ASSERT_TRUE(GenerateRulerSamples(Inputs(), NvidiaTask("cwe"), 131072, 2, 42, &tok, &out, &stats).ok());
    EXPECT_TRUE(stats.cannot_prepare);
    EXPECT_NE(stats.reason.find("cwe at 131072: NVIDIA's common_words_extraction.py would crash in its size "
                                "search (ValueError: Sample larger than population"),
              std::string::npos)
        << stats.reason;
    EXPECT_NE(stats.reason.find("english_words.json"), std::string::npos) << stats.reason;
  }
}

TEST(RulerNvidia, SamplesStreamToTheSinkWhichCanStopThem) {
  Bytes4Tokenizer tok;
  RulerGenStats stats;
  int seen = 0;
  const RulerSampleSink sink = [&](RulerSample s) {
    EXPECT_EQ(s.index, seen);
    EXPECT_EQ(s.id, "niah_single_1/4096/" + std::to_string(seen));
    EXPECT_LE(s.exact_prompt_tokens + s.max_tokens, 4096);
    EXPECT_EQ(s.haystack_units % 25, stats.haystack_units % 25);  // the fixed size, or 25 less per step
    return ++seen == 2 ? Status::Cancelled("enough") : Status::Ok();
  };
  const Status st = GenerateRulerSamples(Inputs(), NvidiaTask("niah_single_1"), 4096, 5, 42, &tok, sink, &stats);
  EXPECT_EQ(st.code(), Status::Code::kCancelled);
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(stats.samples, 1);  // the second was refused
  EXPECT_GT(stats.haystack_units, 0);
  EXPECT_GT(stats.setup_calls, 1);  // the estimate and the search
}

// variable_tracking.py's name collision: with random.seed(s) and
// np.random.seed(s), generate_input_output(10, 1, 4, is_icl) draws two
// equal names, appends one, and raises IndexError on the one-name second
// chain (after its np.random.randint when not is_icl); the next call starts
// after those draws. Expected values from the script's own functions under
// Debian's python3 / numpy 1.24.2 (seeds found by search: 35 is the first
// with coinciding 3-letter names, 849400 with 5-letter ones).
TEST(RulerNvidia, VtNameCollisionRaisesAfterItsDraws) {
  struct Case {
    uint32_t seed;
    bool icl;
    const char* next_sha256;
    std::vector<std::string> next_gold;
    int64_t np_after;
    double random_after;
  };
  const Case cases[] = {
      {35, true, "8885323d82469d944eb3a73372ec042a827880d0812d5803b7836467b1b1166d",
       {"SJA", "RBG", "IEE", "BVC", "ECX"}, 81369, 0.6188554047712738},
      {849400, false, "7c87deda58374b36ddbb2c113da9583e61afcfe52be8ce8a6058e5dda119bcf4",
       {"YHHSQ", "WZPKL", "SVODZ", "ZATQW", "TNGQT"}, 74250, 0.13551745688124883},
  };
  RulerTaskConfig task;
  ASSERT_TRUE(RulerTaskByName("vt", &task).ok());
  for (const Case& c : cases) {
    RulerBuildContext ctx;
    ctx.inputs = &Inputs();
    ctx.task = &task;
    ctx.length = 4096;
    ctx.seed = c.seed;
    ctx.python_exceptions = true;
    RulerStreams streams{PyRandom(c.seed), NpRandom(c.seed)};
    std::unique_ptr<RulerSampleBuilder> b;
    ASSERT_TRUE(MakeRulerBuilder(&ctx, 0, streams, c.icl, &b).ok());
    std::string text = "x";
    ASSERT_TRUE(b->Build(10, &text).ok());
    EXPECT_TRUE(text.empty());
    EXPECT_EQ(b->Result(10).raised.rfind("IndexError", 0), 0u) << b->Result(10).raised;
    streams = b->Result(10).after;
    ASSERT_TRUE(MakeRulerBuilder(&ctx, 0, streams, c.icl, &b).ok());
    ASSERT_TRUE(b->Build(10, &text).ok());
    EXPECT_TRUE(b->Result(10).raised.empty());
    EXPECT_EQ(Sha256Hex(text), c.next_sha256) << c.seed;
    EXPECT_EQ(b->Result(10).gold, c.next_gold) << c.seed;
    RulerStreams after = b->Result(10).after;
    EXPECT_EQ(after.np.RandInt(10000, 99999), c.np_after) << c.seed;
    EXPECT_EQ(after.py.Random(), c.random_after) << c.seed;
    // The fit profile redraws instead of raising.
    ctx.python_exceptions = false;
    ASSERT_TRUE(MakeRulerBuilder(&ctx, 0, RulerStreams{PyRandom(c.seed), NpRandom(c.seed)}, c.icl, &b).ok());
    ASSERT_TRUE(b->Build(10, &text).ok());
    EXPECT_TRUE(b->Result(10).raised.empty());
    EXPECT_FALSE(text.empty());
  }
}

}  // namespace
}  // namespace evalrun
