// server.endpoints: several servers behind one card (evals/run/card.h).
#include <gtest/gtest.h>

#include "evals/run/card.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

std::string CardWith(const std::string& server) {
  return R"({"name": "t", "model": {"name": "m"}, "server": )" + server +
         R"(, "parts": {"mmlupro": {"questions": 4, "max_tokens": 64}}})";
}

Status Parse(const std::string& server, Card* c) { return ParseCard(CardWith(server), "cards/x.json", c); }

std::string Err(const std::string& server) {
  Card c;
  Status st = Parse(server, &c);
  EXPECT_FALSE(st.ok());
  return st.message();
}

TEST(CardEndpoints, SeveralEndpointsEachWithItsSlotsAndToken) {
  Card c;
  Status st = Parse(R"({"endpoints": [{"base_url": "http://127.0.0.1:8081/v1/"},
                                      {"base_url": "http://10.0.0.2:8080/v1", "slots": 2, "api_key_env": "B_TOK"}],
                        "slots": 4, "api_key_env": "TOK", "ready_timeout_s": 30})",
                    &c);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(c.server.EndpointCount(), 2u);
  EXPECT_FALSE(c.server.endpoints_differ);
  // The first endpoint is also the one-endpoint fields.
  EXPECT_EQ(c.server.base_url, "http://127.0.0.1:8081/v1");
  const ServerConfig a = c.server.ForEndpoint(0), b = c.server.ForEndpoint(1);
  EXPECT_EQ(a.base_url, "http://127.0.0.1:8081/v1");
  EXPECT_EQ(a.slots, 4) << "server.slots is the default";
  EXPECT_EQ(a.api_key_env, "TOK");
  EXPECT_EQ(b.base_url, "http://10.0.0.2:8080/v1");
  EXPECT_EQ(b.Origin(), "http://10.0.0.2:8080");
  EXPECT_EQ(b.slots, 2);
  EXPECT_EQ(b.api_key_env, "B_TOK");
  EXPECT_EQ(b.ready_timeout_s, 30) << "the other server fields apply to all";
  EXPECT_TRUE(b.endpoints.empty());
}

TEST(CardEndpoints, OneEndpointFormIsUnchanged) {
  Card c;
  ASSERT_TRUE(Parse(R"({"base_url": "http://127.0.0.1:8080/v1", "slots": 3})", &c).ok());
  EXPECT_EQ(c.server.EndpointCount(), 1u);
  EXPECT_EQ(c.server.ForEndpoint(0).base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(c.server.ForEndpoint(0).slots, 3);
}

TEST(CardEndpoints, DifferentBuildsOnPurpose) {
  Card c;
  ASSERT_TRUE(Parse(R"({"endpoints": [{"base_url": "http://a:1/v1"}, {"base_url": "http://b:1/v1"}],
                        "endpoints_differ": true})",
                    &c)
                  .ok());
  EXPECT_TRUE(c.server.endpoints_differ);
  EXPECT_NE(Err(R"({"base_url": "http://a:1/v1", "endpoints_differ": true})").find("only with server.endpoints"),
            std::string::npos);
}

TEST(CardEndpoints, BadListsNameTheField) {
  EXPECT_NE(Err(R"({"endpoints": []})").find("server.endpoints"), std::string::npos);
  EXPECT_NE(Err(R"({"endpoints": "http://a/v1"})").find("non-empty list"), std::string::npos);
  const std::string both = Err(R"({"base_url": "http://a:1/v1", "endpoints": [{"base_url": "http://b:1/v1"}]})");
  EXPECT_NE(both.find("either server.base_url"), std::string::npos) << both;
  const std::string twice = Err(R"({"endpoints": [{"base_url": "http://a:1/v1"}, {"base_url": "http://a:1/v1/"}]})");
  EXPECT_NE(twice.find("server.endpoints[1].base_url"), std::string::npos) << twice;
  EXPECT_NE(twice.find("listed twice"), std::string::npos) << twice;
  const std::string slots = Err(R"({"endpoints": [{"base_url": "http://a:1/v1", "slots": 0}]})");
  EXPECT_NE(slots.find("server.endpoints[0].slots"), std::string::npos) << slots;
  const std::string typo = Err(R"({"endpoints": [{"base_url": "http://a:1/v1", "slot": 2}]})");
  EXPECT_NE(typo.find("slots"), std::string::npos) << typo;
  EXPECT_NE(Err(R"({"endpoints": [{"slots": 2}]})").find("base_url"), std::string::npos);
  EXPECT_NE(Err(R"({"endpoints": [{"base_url": "ftp://a/v1"}]})").find("server.endpoints[0].base_url"),
            std::string::npos);
  const std::string managed =
      Err(R"({"endpoints": [{"base_url": "http://a:1/v1"}], "command": ["llama-server"], "context": 4096})");
  EXPECT_NE(managed.find("one engine"), std::string::npos) << managed;
}

TEST(CardEndpoints, ExampleCardParses) {
  Card c;
  Status st = LoadCard(evalrun::testing::SourceDir() + "/cards/two-servers.json", &c);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(c.server.EndpointCount(), 2u);
  EXPECT_EQ(c.server.ForEndpoint(1).base_url, "http://127.0.0.1:8082/v1");
}

}  // namespace
}  // namespace evalrun
