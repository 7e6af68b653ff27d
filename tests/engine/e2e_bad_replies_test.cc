// Replies no real server should send, from a raw loopback server: one larger
// than the card's bound, a body that never ends, a reply in the wrong
// encoding. Each is a clear per-request failure (failed.jsonl names it),
// never a crash, and evalrun's memory stays bounded.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "tests/support/e2e.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

// Answers every connection by `reply(request_text, fd)`; GET /health and
// /props are answered as llama-server does. One thread per connection,
// stopped by Stop().
class RawServer {
 public:
  using ChatReply = std::function<void(int fd, const std::atomic<bool>& stop)>;
  explicit RawServer(ChatReply chat) : chat_(std::move(chat)) {}
  ~RawServer() { Stop(); }
  bool Start() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return false;
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] {
      while (!stop_) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        conns_.emplace_back([this, c] { Serve(c); });
      }
    });
    return true;
  }
  void Stop() {
    if (stop_.exchange(true)) return;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (accept_.joinable()) accept_.join();
    for (auto& t : conns_)
      if (t.joinable()) t.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  static void Send(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += n;
    }
  }
  static std::string Json200(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }
  void Serve(int c) {
    std::string req;
    char buf[65536];
    // Read the head and, for a POST, the body (Content-Length).
    for (;;) {
      ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      req.append(buf, n);
      size_t head = req.find("\r\n\r\n");
      if (head == std::string::npos) continue;
      size_t cl = req.find("Content-Length: ");
      size_t want = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
      if (req.size() >= head + 4 + want) break;
    }
    if (req.rfind("GET /health", 0) == 0) {
      Send(c, Json200("{\"status\":\"ok\"}"));
    } else if (req.rfind("GET /props", 0) == 0) {
      Send(c, Json200("{\"default_generation_settings\":{\"n_ctx\":8192},\"total_slots\":1,"
                      "\"model_path\":\"m.gguf\",\"build_info\":\"b1\"}"));
    } else if (req.rfind("POST /v1/chat/completions", 0) == 0) {
      chat_(c, stop_);
    } else {
      Send(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    close(c);
  }

  ChatReply chat_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_;
  std::vector<std::thread> conns_;
};

class E2eBadReplies : public E2eTest {
 protected:
  // test_card.h's bare card, named "bad", with one slot, no retries, short
  // timeouts and `server_extra` added to its server.
  std::string Card(const RawServer& s, nlohmann::json server_extra) {
    nlohmann::json card = BareCard(s.base_url(), {{"mmlupro", {{"questions", 2}, {"max_tokens", 8}}}});
    card["name"] = "bad";
    card["server"].update({{"slots", 1}, {"retries", 0}, {"ready_timeout_s", 5}, {"request_timeout_base_s", 3}});
    for (auto& [k, v] : server_extra.items()) card["server"][k] = v;
    return WriteCard(card);
  }
  void ExpectFailedBoth(const BinaryResult& r, const std::string& error_part) {
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.signal, 0) << "crashed";
    ASSERT_EQ(r.exit_code, 3) << r.err;
    auto failed = Lines(dir_ + "/runs/b/mmlupro/failed.jsonl");
    ASSERT_EQ(failed.size(), 2u);
    for (const auto& f : failed)
      EXPECT_NE(f["error"].get<std::string>().find(error_part), std::string::npos) << f.dump();
    EXPECT_EQ(ReadFile(dir_ + "/runs/b/mmlupro/samples.jsonl"), "");
  }
};

TEST_F(E2eBadReplies, AReplyLargerThanTheBoundFailsThatRequest) {
  // 64 MiB of content against a 4 MiB bound.
  RawServer s([](int fd, const std::atomic<bool>&) {
    const size_t n = size_t{64} << 20;
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(n + 64) + "\r\n\r\n{\"choices\":[{\"message\":{\"content\":\"";
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    std::string chunk(1 << 20, 'x');
    for (size_t sent = 0; sent < n; sent += chunk.size())
      if (send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) return;
  });
  ASSERT_TRUE(s.Start());
  BinaryResult r = Run({"--card", Card(s, {{"max_reply_mb", 4}}), "--job", "b"});
  ExpectFailedBoth(r, "larger than 4 MiB");
  EXPECT_LT(r.max_rss_kb, 60 * 1024) << "the reply was held beyond the bound";
}

TEST_F(E2eBadReplies, ABodyThatNeverEndsFailsAtTheRequestDeadline) {
  // A byte every 50 ms, forever: no read ever times out.
  RawServer s([](int fd, const std::atomic<bool>& stop) {
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    while (!stop.load()) {
      if (send(fd, "1\r\n \r\n", 6, MSG_NOSIGNAL) <= 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  ASSERT_TRUE(s.Start());
  const auto t0 = std::chrono::steady_clock::now();
  BinaryResult r = Run({"--card", Card(s, {{"request_timeout_base_s", 1}, {"min_decode_tps", 1000}}), "--job", "b"},
                       60);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ExpectFailedBoth(r, "no complete reply within");
  EXPECT_LT(took, 20);
}

TEST_F(E2eBadReplies, AReplyInTheWrongEncodingIsNotScored) {
  // UTF-16LE JSON, then a Latin-1 body (not UTF-8).
  std::atomic<int> n{0};
  RawServer s([&](int fd, const std::atomic<bool>&) {
    const std::string json = "{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":\"Answer: B\"}}]}";
    std::string body;
    if (n++ % 2 == 0) {
      for (char ch : json) body += std::string{ch, '\0'};
    } else {
      body = "{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":\"Antwort: \xE4 B\"}}]}";
    }
    std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-16\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  });
  ASSERT_TRUE(s.Start());
  BinaryResult r = Run({"--card", Card(s, {}), "--job", "b"});
  ExpectFailedBoth(r, "reply is not valid JSON");
}

}  // namespace
}  // namespace evalrun::testing
