// HttpTransport::PostStreamed over evalrun's own HTTP/1.1 client (http://):
// pieces handed over as they are read, de-chunked, with the integrity,
// timeout and size rules of Post. The server is a raw socket that sends
// scripted bytes (tests/support/scripted_socket.h).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "evals/server/http.h"
#include "tests/support/scripted_socket.h"

namespace evalrun::testing {
namespace {

struct Streamed {
  HttpResponse resp;
  std::vector<std::string> pieces;
  std::vector<int> written_at_piece;  // the server's writes sent when each piece came
  double seconds = 0;
  std::string Joined() const {
    std::string s;
    for (const auto& p : pieces) s += p;
    return s;
  }
};

Streamed PostTo(ScriptedSocketServer& server, double timeout_s = 5, size_t max_bytes = kDefaultMaxReplyBytes,
                HttpTransport* reuse = nullptr, int stop_after = -1) {
  auto owned = reuse ? nullptr : MakeHttpTransport(server.origin(), "", max_bytes);
  HttpTransport* t = reuse ? reuse : owned.get();
  Streamed s;
  const auto start = std::chrono::steady_clock::now();
  s.resp = t->PostStreamed("/v1/chat/completions", "{\"stream\":true}", timeout_s, [&](std::string_view piece) {
    s.pieces.emplace_back(piece);
    s.written_at_piece.push_back(server.written());
    return stop_after < 0 || static_cast<int>(s.pieces.size()) < stop_after;
  });
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

const std::string kChunkedHead = ReplyHead("Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n");

TEST(HttpPostStreamed, ChunkedPiecesComeAsTheyAreSent) {
  ScriptedSocketServer server({{{0, kChunkedHead + Chunk("data: one\n\n")},
                                {150, Chunk("data: two\n\n")},
                                {150, Chunk("data: [DONE]\n\n") + "0\r\n\r\n"}}});
  Streamed s = PostTo(server);
  EXPECT_EQ(s.resp.status, 200);
  EXPECT_EQ(s.resp.error, "");
  EXPECT_EQ(s.resp.body, "");
  EXPECT_EQ(s.Joined(), "data: one\n\ndata: two\n\ndata: [DONE]\n\n");
  ASSERT_GE(s.pieces.size(), 3u);
  // The first piece was handed over before the server wrote the second.
  EXPECT_EQ(s.written_at_piece.front(), 1);
  EXPECT_EQ(s.written_at_piece.back(), 3);
  EXPECT_NE(server.last_request().find("POST /v1/chat/completions HTTP/1.1"), std::string::npos);
}

TEST(HttpPostStreamed, ContentLengthAndCloseDelimitedBodies) {
  {
    ScriptedSocketServer server({{{0, ReplyHead("Content-Length: 12\r\n") + "hello "}, {100, "world!"}}, 1000});
    Streamed s = PostTo(server);
    EXPECT_EQ(s.resp.status, 200);
    EXPECT_EQ(s.resp.error, "");
    EXPECT_EQ(s.Joined(), "hello world!");
    EXPECT_EQ(s.written_at_piece.front(), 1);
  }
  {
    ScriptedSocketServer server({{{0, ReplyHead("Connection: close\r\n") + "until "}, {100, "the close"}}});
    Streamed s = PostTo(server);
    EXPECT_EQ(s.resp.status, 200);
    EXPECT_EQ(s.resp.error, "");
    EXPECT_EQ(s.Joined(), "until the close");
  }
}

TEST(HttpPostStreamed, BytesAfterTheLastChunkFailAndDropTheConnection) {
  ScriptedSocketServer server(
      {{{0, kChunkedHead + Chunk("data: [DONE]\n\n") + "0\r\n\r\n" + ReplyHead("Content-Length: 2\r\n") + "{}"}},
       1000});
  auto t = MakeHttpTransport(server.origin(), "");
  Streamed s = PostTo(server, 5, kDefaultMaxReplyBytes, t.get());
  EXPECT_EQ(s.resp.status, 0);
  EXPECT_NE(s.resp.error.find("followed by"), std::string::npos) << s.resp.error;
  EXPECT_EQ(t->connections_opened(), 1);
  PostTo(server, 2, kDefaultMaxReplyBytes, t.get());
  EXPECT_EQ(t->connections_opened(), 2);  // the old connection was not used again
}

TEST(HttpPostStreamed, ACutStreamFails) {
  ScriptedSocketServer server({{{0, kChunkedHead + Chunk("data: one\n\n")}, {50, "5\r\nda"}}});
  Streamed s = PostTo(server);
  EXPECT_EQ(s.resp.status, 0);
  EXPECT_NE(s.resp.error.find("closed"), std::string::npos) << s.resp.error;
  EXPECT_EQ(s.Joined().substr(0, 11), "data: one\n\n");  // what came was handed over; the call says it failed
}

TEST(HttpPostStreamed, TheTimeoutBoundsTheWholeExchange) {
  // A piece every 100 ms for ever: no read ever times out, the deadline does.
  SocketScript script{{{0, kChunkedHead}}, 0};
  for (int i = 0; i < 40; ++i) script.writes.push_back({100, Chunk(": ping\n\n")});
  ScriptedSocketServer server(script);
  Streamed s = PostTo(server, 0.5);
  EXPECT_EQ(s.resp.status, 0);
  EXPECT_NE(s.resp.error.find("no complete reply within 0.5 s"), std::string::npos) << s.resp.error;
  EXPECT_LT(s.seconds, 1.0);
  EXPECT_GE(s.seconds, 0.5);
  EXPECT_FALSE(s.pieces.empty());
  server.Stop();
}

TEST(HttpPostStreamed, TheSizeLimitHoldsOverAllPieces) {
  const std::string k400(400, 'x');
  ScriptedSocketServer server({{{0, kChunkedHead + Chunk(k400)}, {50, Chunk(k400)}, {50, Chunk(k400)},
                                {50, "0\r\n\r\n"}}});
  Streamed s = PostTo(server, 5, 1000);
  EXPECT_EQ(s.resp.status, 0);
  EXPECT_NE(s.resp.error.find("evalrun's limit"), std::string::npos) << s.resp.error;
  EXPECT_LE(s.Joined().size(), 1000u);
}

TEST(HttpPostStreamed, AnErrorStatusKeepsItsBodyWhole) {
  const std::string body = R"({"error":{"code":400,"message":"too long","type":"exceed_context_size_error"}})";
  ScriptedSocketServer server({{{0, ReplyHead("Transfer-Encoding: chunked\r\n", 400) + Chunk(body.substr(0, 10))},
                                {50, Chunk(body.substr(10)) + "0\r\n\r\n"}}});
  Streamed s = PostTo(server);
  EXPECT_EQ(s.resp.status, 400);
  EXPECT_EQ(s.resp.body, body);
  EXPECT_TRUE(s.pieces.empty());
}

TEST(HttpPostStreamed, TheReaderCanStop) {
  SocketScript script{{{0, kChunkedHead + Chunk("a")}}, 2000};
  for (int i = 0; i < 5; ++i) script.writes.push_back({30, Chunk("b")});
  ScriptedSocketServer server(script);
  auto t = MakeHttpTransport(server.origin(), "");
  Streamed s = PostTo(server, 5, kDefaultMaxReplyBytes, t.get(), 2);
  EXPECT_EQ(s.resp.status, 200);
  EXPECT_EQ(s.resp.error, "stopped by the reader");
  EXPECT_EQ(s.pieces.size(), 2u);
  EXPECT_LT(s.seconds, 1.5);  // it did not wait for the rest
  server.Stop();
}

}  // namespace
}  // namespace evalrun::testing
