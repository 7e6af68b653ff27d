// HttpServerWatch (evals/server/server_watch.h) on a scripted transport and a
// fake clock: the wait for a server that went away is timed and slept on the
// clock (no real second passes), ends when /health answers again and the
// server is the same, gives up after server.ready_timeout_s, and stops at
// once when cancelled.
#include "evals/server/server_watch.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_transport.h"

namespace evalrun {
namespace {

using testing::FakeClock;
using testing::FakeRequest;
using testing::FakeTransport;
using testing::HttpBroken;
using testing::HttpStatus;

constexpr const char* kProps =
    R"({"model_path": "m.gguf", "build_info": "b10470-34af94c", "total_slots": 4,
        "default_generation_settings": {"n_ctx": 8192}, "chat_template": "{{ x }}"})";

ServerConfig Server() {
  ServerConfig s;
  s.base_url = "http://127.0.0.1:8080/v1";
  return s;
}

// /health fails (connection refused) for the first `down` checks, then 200;
// /props and /v1/models answer as the server did when the run began.
struct Script {
  int down = 0;
  int health = 0;
  HttpResponse operator()(const FakeRequest& r) {
    if (r.path == "/health") return health++ < down ? HttpBroken("could not connect") : HttpStatus(200, "{}");
    if (r.path == "/props") return HttpStatus(200, kProps);
    if (r.path == "/v1/models") return HttpStatus(200, R"({"data": [{"id": "m"}]})");
    return HttpStatus(404, "{}");
  }
};

ServerProps Expected() {
  FakeTransport t(Script{});
  ServerProps p;
  EXPECT_TRUE(FetchServerProps(&t, Server(), &p).ok());
  return p;
}

class ServerWatchTest : public ::testing::Test {
 protected:
  HttpServerWatch Watch(double ready_timeout_s) {
    return HttpServerWatch([this] { return std::make_unique<FakeTransport>([this](const FakeRequest& r) {
                             return script_(r);
                           }); },
                           Server(), Expected(), ready_timeout_s, [this](const std::string& l) { log_.push_back(l); },
                           &clock_);
  }
  Script script_;
  FakeClock clock_;
  std::vector<std::string> log_;
};

TEST_F(ServerWatchTest, AServerThatAnswersAtOnceWasNotDown) {
  HttpServerWatch w = Watch(600);
  bool was_down = true;
  EXPECT_TRUE(w.AwaitRecovery(nullptr, &was_down).ok());
  EXPECT_FALSE(was_down);
  EXPECT_EQ(clock_.slept(), 0.0);
  EXPECT_TRUE(log_.empty());
}

TEST_F(ServerWatchTest, ComingBackAfterThreeChecksWaitsOneAndAHalfSecondsOnTheClock) {
  script_.down = 3;
  HttpServerWatch w = Watch(600);
  bool was_down = false;
  EXPECT_TRUE(w.AwaitRecovery(nullptr, &was_down).ok());
  EXPECT_TRUE(was_down);
  EXPECT_EQ(clock_.sleeps(), (std::vector<double>{0.5, 0.5, 0.5}));
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_NE(log_[0].find("stopped answering; waiting for it (up to 600 s, server.ready_timeout_s)"),
            std::string::npos)
      << log_[0];
  EXPECT_NE(log_[1].find("answers again after 1.5 s, serving the same model"), std::string::npos) << log_[1];
}

TEST_F(ServerWatchTest, AServerGoneForLongerThanTheWaitIsUnavailableWithoutARealWait) {
  script_.down = 1 << 30;
  HttpServerWatch w = Watch(600);
  bool was_down = false;
  const Status st = w.AwaitRecovery(nullptr, &was_down);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("did not come back within 600 s (server.ready_timeout_s); last: could not connect"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(was_down);
  EXPECT_GT(clock_.slept(), 600.0);
  EXPECT_LE(clock_.slept(), 601.0);
}

TEST_F(ServerWatchTest, ACancelStopsTheWaitAtOnce) {
  script_.down = 1 << 30;
  HttpServerWatch w = Watch(600);
  CancelToken cancel;
  cancel.Cancel();
  bool was_down = false;
  EXPECT_EQ(w.AwaitRecovery(&cancel, &was_down).code(), Status::Code::kCancelled);
  EXPECT_EQ(clock_.slept(), 0.0);
}

TEST_F(ServerWatchTest, AServerBackWithAnotherBuildIsChanged) {
  script_.down = 2;
  HttpServerWatch w([this] { return std::make_unique<FakeTransport>([this](const FakeRequest& r) {
                      if (r.path == "/props")
                        return HttpStatus(200, R"({"model_path": "m.gguf", "build_info": "b10480-0000000",
                                                   "total_slots": 4, "chat_template": "{{ x }}"})");
                      return script_(r);
                    }); },
                    Server(), Expected(), 600, nullptr, &clock_);
  bool was_down = false;
  const Status st = w.AwaitRecovery(nullptr, &was_down);
  EXPECT_EQ(st.code(), Status::Code::kChanged);
  EXPECT_NE(st.message().find("build_info: \"b10470-34af94c\" -> \"b10480-0000000\""), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace evalrun
