// Waiting in a test for something another process or thread makes happen
// (a line in a file, a request at the fake server), bounded. Tests only.
//
//   ASSERT_TRUE(WaitFor([&] { return server.chat_requests() >= 2; }, 60));
//
// Thread-safety: as safe as `done` is.
#ifndef EVALRUN_TESTS_SUPPORT_WAIT_FOR_H_
#define EVALRUN_TESTS_SUPPORT_WAIT_FOR_H_

#include <chrono>
#include <thread>

namespace evalrun::testing {

// Polls `done` every 10 ms for up to `timeout_s`; true when it held (asked
// once more at the deadline).
template <typename F>
bool WaitFor(F done, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_WAIT_FOR_H_
