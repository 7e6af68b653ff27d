// evals/benchmarks/livecodebench/lcb_pickle.h: base64 as Python's b64decode, zlib, and the
// restricted pickle reader (the vectors are pickle.dumps outputs of CPython
// 3.11; the fixture rows come from tests/fixtures/livecodebench/make_fixtures.py).
#include "evals/benchmarks/livecodebench/lcb_pickle.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/jsonl_file.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

const char kJson[] = "[{\"input\": \"1\\n\", \"output\": \"\xc3\xa9\\n\", \"testtype\": \"stdin\"}]";

TEST(LcbPickleTest, ReadsAStrPickledWithProtocols2To5) {
  const std::string text_hex =
      "5b7b22696e707574223a2022315c6e222c20226f7574707574223a2022c3a95c6e222c20227465737474797065223a2022737464"
      "696e227d5d";
  const std::string pickles[] = {
      "80025839000000" + text_hex + "71002e",                    // protocol 2: BINUNICODE, BINPUT
      "80035839000000" + text_hex + "71002e",                    // protocol 3
      "8004953d000000000000008c39" + text_hex + "942e",            // protocol 4: FRAME, SHORT_BINUNICODE, MEMOIZE
      "8005953d000000000000008c39" + text_hex + "942e",            // protocol 5
  };
  for (const std::string& hex : pickles) {
    std::string out;
    Status st = ReadPickledStr(FromHex(hex), &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out, kJson);
  }
}

TEST(LcbPickleTest, ReadsALongStrOutsideAFrameAndBinUnicode8) {
  std::string big = FromHex("800458701101") + std::string(1, '\0') + std::string(70000, 'x') + "\x94.";
  std::string out;
  ASSERT_TRUE(ReadPickledStr(big, &out).ok());
  EXPECT_EQ(out, std::string(70000, 'x'));
  std::string eight = FromHex("80048d0200000000000000") + "ab" + "\x94.";
  ASSERT_TRUE(ReadPickledStr(eight, &out).ok());
  EXPECT_EQ(out, "ab");
}

TEST(LcbPickleTest, RefusesEveryOtherOpcodeNamingIt) {
  std::string out;
  // pickle.dumps of an object whose __reduce__ is (os.system, ("echo hi",)).
  Status st = ReadPickledStr(FromHex("800263706f7369780a73797374656d0a710058070000006563686f20686971018571025271032e"), &out);
  EXPECT_EQ(st.message(), "pickle: opcode 0x63 (GLOBAL) not allowed at byte 2 (private_test_cases must be a pickled str)");
  EXPECT_NE(ReadPickledStr(FromHex("5661620a70300a2e"), &out).message().find("0x56 (UNICODE) not allowed"), std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("80049509000000000000005d948c02616294612e"), &out).message().find("EMPTY_LIST"),
            std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("800495060000000000000043026162942e"), &out).message().find("0x43"),
            std::string::npos);  // SHORT_BINBYTES: bytes, not str
  EXPECT_NE(ReadPickledStr(FromHex("80048c026162942e00"), &out).message().find("1 bytes after STOP"), std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("80048c0561622e"), &out).message().find("past the end"), std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("80048c02616294"), &out).message().find("no STOP"), std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("80048c0161" "8c0162" "2e"), &out).message().find("a second value"), std::string::npos);
  EXPECT_NE(ReadPickledStr(FromHex("80042e"), &out).message().find("STOP with 0 values"), std::string::npos);
}

TEST(LcbPickleTest, Base64AsPythonsB64decode) {
  // base64.b64decode(s) of CPython 3.11, default (non-strict) mode.
  const std::pair<const char*, const char*> ok[] = {
      {"YWJj", "abc"}, {"YW Jj\n", "abc"}, {"YWI=", "ab"}, {"YQ==", "a"},
      {"YQ==YWJj", "a"}, {"Y=Q==", "a"}, {"!!YWJj**", "abc"}};
  for (const auto& [in, want] : ok) {
    std::string out;
    ASSERT_TRUE(DecodeBase64(in, &out).ok()) << in;
    EXPECT_EQ(out, want) << in;
  }
  for (const char* bad : {"YWI", "YQ=", "YQ", "Y"}) {
    std::string out;
    EXPECT_FALSE(DecodeBase64(bad, &out).ok()) << bad;
  }
  std::string out;
  EXPECT_EQ(DecodeBase64("YWI", &out).message(), "base64: Incorrect padding");
}

TEST(LcbPickleTest, ZlibRefusesCorruptTruncatedAndOversizedStreams) {
  std::string out;
  std::string packed;
  ASSERT_TRUE(DecodeBase64("eJxLTEoGAAJNASc=", &packed).ok());  // zlib.compress(b"abc")
  ASSERT_TRUE(InflateZlib(packed, &out, 100).ok());
  EXPECT_EQ(out, "abc");
  EXPECT_FALSE(InflateZlib(packed.substr(0, packed.size() - 2), &out, 100).ok());
  EXPECT_FALSE(InflateZlib(packed + "x", &out, 100).ok());
  EXPECT_NE(InflateZlib(packed, &out, 2).message().find("over 2 bytes"), std::string::npos);
  EXPECT_FALSE(InflateZlib("not zlib", &out, 100).ok());
}

TEST(LcbPickleTest, DecodesTheFixtureRowsCompressedPrivateTests) {
  const std::vector<nlohmann::json> rows =
      testing::ReadJsonLines(testing::LcbFixtureDir() + "test.jsonl");
  ASSERT_FALSE(rows.empty());
  const nlohmann::json& row = rows[0];
  std::string json_text;
  Status st = DecodeLcbPrivateTests(row.at("private_test_cases").get<std::string>(), &json_text);
  ASSERT_TRUE(st.ok()) << st.ToString();
  nlohmann::json tests = nlohmann::json::parse(json_text);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[1]["input"], "4\n-5 5 10 -10\n");
  EXPECT_EQ(tests[1]["testtype"], "stdin");
}

}  // namespace
}  // namespace evalrun
