#include "tests/support/run_binary.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace evalrun::testing {

namespace {

// Everything a child needs is built before fork(): the tests run threads (an
// in-process fake server), and after a fork in a threaded process the child
// may only make async-signal-safe calls, so it must not allocate.
std::vector<char*> MakeArgv(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  return a;
}

// This process's environment with each "K=V" of `extra` set (replacing K),
// as putenv would; the pointers stay valid while `extra` and environ do.
std::vector<char*> MakeEnv(const std::vector<std::string>& extra) {
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  for (const auto& kv : extra) {
    const std::string key = kv.substr(0, kv.find('=') + 1);
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const char* e) { return std::strncmp(e, key.c_str(), key.size()) == 0; });
    if (same != env.end()) *same = const_cast<char*>(kv.c_str());
    else env.push_back(const_cast<char*>(kv.c_str()));
  }
  env.push_back(nullptr);
  return env;
}

}  // namespace

BinaryResult RunBinary(const std::vector<std::string>& argv, double timeout_s,
                       const std::vector<std::string>& env_extra) {
  BinaryResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return r;
  auto a = MakeArgv(argv);
  auto env = MakeEnv(env_extra);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    execve(a[0], a.data(), env.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    // The peak RSS since exec is VmHWM; read it while the child lives (wait4's
    // ru_maxrss also counts the pages shared with this process before exec).
    {
      std::ifstream st("/proc/" + std::to_string(pid) + "/status");
      std::string line;
      while (std::getline(st, line))
        if (line.rfind("VmHWM:", 0) == 0) r.max_rss_kb = std::max(r.max_rss_kb, std::strtol(line.c_str() + 6, nullptr, 10));
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long>(left, 100)));
    if (n <= 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      } else {
        (k == 0 ? r.out : r.err).append(buf, got);
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  struct rusage ru{};
  wait4(pid, &status, 0, &ru);
  if (r.max_rss_kb == 0) r.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

int SpawnBinary(const std::vector<std::string>& argv, const std::string& out_path,
                const std::string& err_path) {
  auto a = MakeArgv(argv);
  const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_t pid = -1;
  if (o >= 0 && e >= 0) pid = fork();
  if (pid == 0) {
    dup2(o, 1);  // the copies lose O_CLOEXEC
    dup2(e, 2);
    execv(a[0], a.data());
    _exit(127);
  }
  if (o >= 0) close(o);
  if (e >= 0) close(e);
  return pid;
}

BinaryResult WaitBinary(int pid, double timeout_s) {
  BinaryResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  char* p = mkdtemp(tmpl.data());
  return p ? std::string(p) : std::string();
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  if (!path.empty()) std::filesystem::remove_all(path, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream o(path, std::ios::binary);
  o << text;
}

}  // namespace evalrun::testing
