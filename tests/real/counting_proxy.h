// A loopback HTTP proxy in front of a real server that counts the requests
// it forwards, by method and path: the real llama-server logs none, and the
// lane must tell how often a question was asked. Forwards bodies and status
// codes as they are (not streaming; one upstream connection per handler
// thread); StripChatTemplateKwargs plays a gateway that drops the thinking
// switch. Tests only.
#ifndef EVALRUN_TESTS_REAL_COUNTING_PROXY_H_
#define EVALRUN_TESTS_REAL_COUNTING_PROXY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace evalrun::testing {

class CountingProxy {
 public:
  explicit CountingProxy(std::string upstream_origin);
  ~CountingProxy();
  bool Start();  // 127.0.0.1, a free port
  void Stop();
  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string base_url() const { return origin() + "/v1"; }
  // How many requests of "POST /v1/chat/completions" (etc.) were forwarded.
  int Count(const std::string& method_and_path) const;
  // From now on, removes chat_template_kwargs from the bodies of chat
  // requests (POST .../chat/completions), as a gateway that drops it does.
  void StripChatTemplateKwargs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_REAL_COUNTING_PROXY_H_
