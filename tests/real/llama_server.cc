#include "tests/real/llama_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "evals/server/http.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {

std::string LlamaServerBinary() {
  const char* b = std::getenv("EVALRUN_LLAMA_SERVER");
  return b ? b : "";
}

std::string ModelPath(const std::string& name) {
  return !name.empty() && name[0] == '/' ? name : SharedDir() + "/models/" + name;
}

std::vector<std::string> LlamaServerArgv(const LlamaServerArgs& a, int port, const std::string& port_text) {
  std::vector<std::string> v = {LlamaServerBinary(), "-m", ModelPath(a.model), "--host", "127.0.0.1",
                                "--port", port_text.empty() ? std::to_string(port) : port_text,
                                "-t", "1", "--no-webui"};
  if (!a.chat_template.empty()) {
    v.push_back("--chat-template");
    v.push_back(a.chat_template);
  }
  if (a.ctx > 0) {
    v.push_back("-c");
    v.push_back(std::to_string(a.ctx));
  }
  if (a.parallel > 0) {
    v.push_back("-np");
    v.push_back(std::to_string(a.parallel));
  }
  if (a.kv_unified) v.push_back("--kv-unified");
  if (a.metrics) v.push_back("--metrics");
  if (!a.alias.empty()) {
    v.push_back("--alias");
    v.push_back(a.alias);
  }
  v.insert(v.end(), a.extra.begin(), a.extra.end());
  return v;
}

namespace {

bool Reap(pid_t pid, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

bool LlamaServer::Start(const std::string& log_path, std::string* err, int port) {
  if (running()) {
    *err = "already running";
    return false;
  }
  if (LlamaServerBinary().empty()) {
    *err = "EVALRUN_LLAMA_SERVER is not set";
    return false;
  }
  port_ = port > 0 ? port : FreeLoopbackPort();
  log_path_ = log_path;
  const std::vector<std::string> argv = LlamaServerArgv(args_, port_);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    *err = log_path + ": cannot open the log";
    return false;
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(log, 1);
    dup2(log, 2);
    execv(a[0], a.data());
    _exit(127);
  }
  close(log);
  if (pid < 0) {
    *err = "fork failed";
    return false;
  }
  pid_ = pid;
  auto t = MakeHttpTransport(origin(), "");
  for (int i = 0; i < 600; ++i) {  // 60 s
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *err = "llama-server exited while loading (status " + std::to_string(status) + "); log:\n" + Log();
      return false;
    }
    HttpResponse r = t->Get("/health", 1);
    if (r.status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *err = "llama-server not ready within 60 s; log:\n" + Log();
  Kill();
  return false;
}

void LlamaServer::Stop() {
  if (!running()) return;
  kill(pid_, SIGTERM);
  if (!Reap(pid_, 10)) {
    kill(pid_, SIGKILL);
    Reap(pid_, 10);
  }
  pid_ = -1;
}

void LlamaServer::Kill() {
  if (!running()) return;
  kill(pid_, SIGKILL);
  Reap(pid_, 10);
  pid_ = -1;
}

std::string LlamaServer::Log() const { return ReadFile(log_path_); }

double MetricValue(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, name.size(), name) == 0 && line.size() > name.size() && line[name.size()] == ' ')
      return std::strtod(line.c_str() + name.size() + 1, nullptr);
  }
  return -1;
}

MetricsPoller::MetricsPoller(std::string origin) : origin_(std::move(origin)) {}

void MetricsPoller::Start() {
  stop_ = false;
  thread_ = std::thread([this] {
    auto t = MakeHttpTransport(origin_, "");
    while (!stop_.load()) {
      HttpResponse r = t->Get("/metrics", 2);
      const double p = r.status == 200 ? MetricValue(r.body, "llamacpp:requests_processing") : -1;
      const double d = r.status == 200 ? MetricValue(r.body, "llamacpp:requests_deferred") : -1;
      if (p < 0 || d < 0) {
        ++failures_;
      } else {
        ++polls_;
        if (p > max_processing_) max_processing_ = static_cast<int>(p);
        if (d > max_deferred_) max_deferred_ = static_cast<int>(d);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

void MetricsPoller::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace evalrun::testing
