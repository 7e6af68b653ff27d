// The sample's `endpoint` field (several server.endpoints): written when the
// record names one, absent otherwise, read back as written, and a line
// whose endpoint is not a string refused with its place.
#include <gtest/gtest.h>

#include "evals/run/sample_codec.h"

namespace evalrun {
namespace {

SampleRecord Choice(const std::string& endpoint) {
  SampleRecord r;
  r.id = "q1";
  r.category = "math";
  r.prompt_sha256 = std::string(64, 'a');
  r.response = "B";
  r.finish_reason = "stop";
  r.latency_ms = 12.5;
  r.attempts = 1;
  r.endpoint = endpoint;
  ChoiceVerdict v;
  v.extracted = 'B';
  v.correct = true;
  r.verdict = v;
  return r;
}

TEST(SampleEndpointField, WrittenOnlyWhenNamedAndReadBack) {
  const nlohmann::json with = EncodeSample(Choice("http://10.0.0.2:8080/v1"));
  ASSERT_TRUE(with.contains("endpoint"));
  EXPECT_EQ(with["endpoint"], "http://10.0.0.2:8080/v1");
  SampleRecord back;
  ASSERT_TRUE(DecodeSample(VerdictKind::kChoice, with, "s.jsonl:1", &back).ok());
  EXPECT_EQ(back.endpoint, "http://10.0.0.2:8080/v1");

  const nlohmann::json without = EncodeSample(Choice(""));
  EXPECT_FALSE(without.contains("endpoint"));
  ASSERT_TRUE(DecodeSample(VerdictKind::kChoice, without, "s.jsonl:2", &back).ok());
  EXPECT_EQ(back.endpoint, "");
}

TEST(SampleEndpointField, NotAStringIsRefusedWithItsPlace) {
  nlohmann::json line = EncodeSample(Choice("http://a/v1"));
  line["endpoint"] = 3;
  SampleRecord back;
  Status st = DecodeSample(VerdictKind::kChoice, line, "s.jsonl:7", &back);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("s.jsonl:7"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("endpoint"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace evalrun
