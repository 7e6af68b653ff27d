// The HTTP reply reader (evals/server/http_reply.h) on bytes, and the real
// transport (MakeHttpTransport) against a scripted hostile server: a reply
// belongs to its request.
#include "evals/server/http_reply.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "evals/server/http.h"
#include "tests/support/fake_server.h"
#include "tests/support/hostile_proxy.h"

namespace evalrun {
namespace {

using testing::FakeReply;
using testing::FakeServer;
using testing::HostileAction;
using testing::HostileProxy;
using testing::ProxiedExchange;
using testing::ReplyBytes;

using State = HttpReplyReader::State;

// Feeds `bytes` in pieces of `step` bytes.
HttpReplyReader Read(const std::string& bytes, size_t step, bool close = false, size_t limit = 1 << 20) {
  HttpReplyReader r(limit);
  for (size_t i = 0; i < bytes.size(); i += step) r.Feed(std::string_view(bytes).substr(i, step));
  if (close) r.End();
  return r;
}

TEST(HttpReplyReader, OneReplyWhateverTheSplit) {
  const std::string length = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRetry-After: 3\r\n\r\nhello";
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=1\r\nhe\r\n3\r\nllo\r\n0\r\nTrailer: t\r\n\r\n";
  const std::string continued = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  for (const std::string& bytes : {length, chunked, continued}) {
    for (size_t step : {size_t{1}, size_t{2}, size_t{7}, bytes.size()}) {
      HttpReplyReader r = Read(bytes, step);
      EXPECT_EQ(r.state(), State::kDone) << bytes << " step " << step << ": " << r.error();
      EXPECT_EQ(r.status(), 200);
      EXPECT_EQ(r.body(), "hello");
      EXPECT_EQ(r.extra(), 0u);
      EXPECT_TRUE(r.keep_alive());
    }
  }
  EXPECT_EQ(Read(length, 3).retry_after(), "3");
  // Framed by the close.
  HttpReplyReader close = Read("HTTP/1.0 200 OK\r\n\r\nhello", 4, true);
  EXPECT_EQ(close.state(), State::kDone);
  EXPECT_EQ(close.body(), "hello");
  EXPECT_FALSE(close.keep_alive());
  EXPECT_FALSE(Read("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 5).keep_alive());
}

TEST(HttpReplyReader, BytesAfterTheReplyAreCountedAsExtra) {
  const std::string one = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  HttpReplyReader twice = Read(one + one, 9);
  EXPECT_EQ(twice.state(), State::kDone);
  EXPECT_EQ(twice.body(), "hello");
  EXPECT_EQ(twice.extra(), one.size());
  // A Content-Length too short: the rest of the body is extra.
  HttpReplyReader short_length = Read("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nhello", 100);
  EXPECT_EQ(short_length.state(), State::kDone);
  EXPECT_EQ(short_length.extra(), 2u);
}

TEST(HttpReplyReader, WhatIsNotOneWellFormedReplyIsBad) {
  for (const std::string& bytes : {
           std::string("garbage\r\n\r\n"),
           std::string("HTTP/1.1 2000 OK\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhexx"),
           std::string("HTTP/1.1 200 OK\r\nno colon\r\n\r\n"),
           std::string("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
       }) {
    HttpReplyReader r = Read(bytes, 3);
    EXPECT_EQ(r.state(), State::kBad) << bytes;
    EXPECT_FALSE(r.error().empty());
  }
  // Closed before its end.
  EXPECT_EQ(Read("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello", 4, true).state(), State::kBad);
  HttpReplyReader none(100);
  EXPECT_EQ(none.End(), State::kBad);
  EXPECT_FALSE(none.started());
  // Over the limit, as declared or as sent.
  EXPECT_TRUE(Read("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", 8, false, 100).too_big());
  EXPECT_TRUE(Read("HTTP/1.0 200 OK\r\n\r\n" + std::string(200, 'x'), 8, false, 100).too_big());
  EXPECT_EQ(Read("HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'x'), 4096).state(), State::kBad);
}

// A chat body for the fake server and the content of its reply.
std::string Chat(const std::string& say) {
  return nlohmann::json{{"messages", {{{"role", "user"}, {"content", say}}}}}.dump();
}
std::string ContentOf(const HttpResponse& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("choices")) return "(no content: " + r.error + ")";
  return j["choices"][0]["message"]["content"].get<std::string>();
}

class HostileTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    server_.SetResponder([](const nlohmann::json& req) {
      FakeReply r;
      r.content = req["messages"][0]["content"].get<std::string>();
      return r;
    });
  }
  FakeServer server_;
};

// The server sends one reply too many, a moment after the right one: the
// next request must not take it for its own (before the fix it did).
TEST_F(HostileTransport, AReplyNobodyAskedForIsNeverReadAsTheNextReply) {
  HostileProxy proxy(server_.port(), [](const ProxiedExchange& x) {
    HostileAction a = testing::PassThrough(x);
    if (x.n == 0) {
      const std::string stale = nlohmann::json{{"choices", {{{"message", {{"content", "stale"}}}}}}}.dump();
      a.writes.push_back(ReplyBytes(200, stale));
      a.pause_ms = 30;
    }
    return a;
  });
  ASSERT_TRUE(proxy.Start());
  auto t = MakeHttpTransport(proxy.origin(), "");
  HttpResponse one = t->Post("/v1/chat/completions", Chat("one"), 10);
  EXPECT_EQ(ContentOf(one), "one");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the stale reply is there now
  HttpResponse two = t->Post("/v1/chat/completions", Chat("two"), 10);
  EXPECT_EQ(two.status, 200) << two.error;
  EXPECT_EQ(ContentOf(two), "two");
  EXPECT_EQ(proxy.connections(), 2);  // the connection with bytes pending was not reused
  EXPECT_EQ(t->connections_opened(), 2);
}

// Two replies in one write, or a Content-Length shorter than the body: the
// attempt fails and the connection closes; the next request gets its own.
TEST_F(HostileTransport, BytesAfterAReplyFailTheAttemptAndCloseTheConnection) {
  for (int variant = 0; variant < 2; ++variant) {
    HostileProxy proxy(server_.port(), [variant](const ProxiedExchange& x) {
      HostileAction a = testing::PassThrough(x);
      if (x.n == 0 && variant == 0) a.writes[0] += a.writes[0];
      if (x.n == 0 && variant == 1)
        a.writes[0] = ReplyBytes(x.status, x.reply_body, "", static_cast<long>(x.reply_body.size()) - 10);
      return a;
    });
    ASSERT_TRUE(proxy.Start());
    auto t = MakeHttpTransport(proxy.origin(), "");
    HttpResponse one = t->Post("/v1/chat/completions", Chat("one"), 10);
    EXPECT_FALSE(one.transport_ok()) << variant << ": " << one.body;
    EXPECT_NE(one.error.find("more bytes on the connection"), std::string::npos) << one.error;
    HttpResponse two = t->Post("/v1/chat/completions", Chat("two"), 10);
    EXPECT_EQ(ContentOf(two), "two") << variant;
    EXPECT_EQ(proxy.connections(), 2) << variant;
  }
}

// A reply that is not HTTP at all, and a kept connection the server closed
// while idle: a failure, and a new connection without a failure.
TEST_F(HostileTransport, GarbageFailsAndAClosedIdleConnectionIsReplacedQuietly) {
  HostileProxy proxy(server_.port(), [](const ProxiedExchange& x) {
    HostileAction a = testing::PassThrough(x);
    if (x.n == 0) a.writes = {"SMTP ready\r\n\r\n"};
    if (x.n == 1) a.close_after = true;
    return a;
  });
  ASSERT_TRUE(proxy.Start());
  auto t = MakeHttpTransport(proxy.origin(), "");
  HttpResponse bad = t->Post("/v1/chat/completions", Chat("one"), 10);
  EXPECT_FALSE(bad.transport_ok());
  EXPECT_NE(bad.error.find("not one well-formed HTTP reply"), std::string::npos) << bad.error;
  EXPECT_EQ(ContentOf(t->Post("/v1/chat/completions", Chat("two"), 10)), "two");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(ContentOf(t->Post("/v1/chat/completions", Chat("three"), 10)), "three");
  EXPECT_EQ(proxy.connections(), 3);
}

}  // namespace
}  // namespace evalrun
