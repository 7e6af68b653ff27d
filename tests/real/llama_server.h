// A real llama.cpp llama-server for the opt-in real-server lane: started on
// 127.0.0.1 on a free port from the binary named by EVALRUN_LLAMA_SERVER,
// serving a model from ../shared/models, stopped by its PID.
//
// The project never builds or ships llama.cpp: the lane takes the path of a
// binary somebody built (docs/speed.md, "The real-server lane").
//
// Every wait is bounded; the child gets SIGKILL if the test process dies
// (PR_SET_PDEATHSIG), so a crashed test leaves no server behind.
#ifndef EVALRUN_TESTS_REAL_LLAMA_SERVER_H_
#define EVALRUN_TESTS_REAL_LLAMA_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/loopback_port.h"

namespace evalrun::testing {

// The binary under test: $EVALRUN_LLAMA_SERVER ("" when unset).
std::string LlamaServerBinary();
// ../shared/models/<name>, or `name` itself when it is an absolute path (a
// model a test made in its temp folder).
std::string ModelPath(const std::string& name);

// How one llama-server is started (its own flags).
struct LlamaServerArgs {
  std::string model = "stories260K-ctx128k.gguf";  // in ../shared/models
  int parallel = 4;         // -np; 0: not given (the server's auto: 4 slots, unified KV)
  int ctx = 8192;           // -c (the whole KV cache); 0: not given
  bool kv_unified = false;  // --kv-unified
  bool metrics = true;      // --metrics
  std::string alias;        // --alias, when not empty
  std::vector<std::string> extra;  // more flags, as they are
  // --chat-template; "": not given (the model's own, e.g. with --jinja in extra)
  std::string chat_template = "chatml";
};

// The full argv for a port (binary first): --host 127.0.0.1 --port N -t 1
// --chat-template chatml (args.chat_template) --no-webui and the args. `port_text` replaces the
// port number when not empty (a card's "{port}" placeholder).
std::vector<std::string> LlamaServerArgv(const LlamaServerArgs& args, int port,
                                         const std::string& port_text = "");

class LlamaServer {
 public:
  explicit LlamaServer(LlamaServerArgs args) : args_(std::move(args)) {}
  ~LlamaServer() { Stop(); }
  LlamaServer(const LlamaServer&) = delete;
  LlamaServer& operator=(const LlamaServer&) = delete;

  // Starts it (on `port`, or a free one when 0), its output to `log_path`
  // (appended), and waits up to 60 s for GET /health 200. False with *err
  // set (and nothing left running) otherwise.
  bool Start(const std::string& log_path, std::string* err, int port = 0);
  // SIGTERM, up to 10 s, then SIGKILL; reaps it. Nothing when not running.
  void Stop();
  // SIGKILL at once (a crash), reaped.
  void Kill();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string base_url() const { return origin() + "/v1"; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;  // the log as it is now
  const LlamaServerArgs& args() const { return args_; }

 private:
  LlamaServerArgs args_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

// Polls GET /metrics of a server (started with --metrics) every 20 ms on a
// thread of its own until Stop(), and keeps the largest
// llamacpp:requests_processing and llamacpp:requests_deferred seen.
class MetricsPoller {
 public:
  explicit MetricsPoller(std::string origin);
  ~MetricsPoller() { Stop(); }
  void Start();
  void Stop();
  int max_processing() const { return max_processing_.load(); }
  int max_deferred() const { return max_deferred_.load(); }
  int polls() const { return polls_.load(); }      // answered polls
  int failures() const { return failures_.load(); }  // polls without a usable answer

 private:
  std::string origin_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> max_processing_{0}, max_deferred_{0}, polls_{0}, failures_{0};
};

// The value of one gauge or counter in Prometheus text ("name value" lines);
// -1 when absent.
double MetricValue(const std::string& text, const std::string& name);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_REAL_LLAMA_SERVER_H_
