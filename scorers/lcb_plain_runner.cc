#include "scorers/lcb_plain_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

extern char** environ;

namespace evalrun {

namespace {

constexpr size_t kKeep = size_t{16} << 20;

struct Pipes {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  ~Pipes() {
    for (int* p : {in, out, err})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) close(p[i]);
  }
};

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

Status Spawn(const std::string& python, const std::string& source, Pipes* p, pid_t* pid) {
  for (int* fds : {p->in, p->out, p->err})
    if (pipe2(fds, O_CLOEXEC) != 0) return Status::IoError(std::string("lcb runner: pipe: ") + strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, p->in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, p->out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, p->err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  std::vector<std::string> args = {python, "-I", "-c", source};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = posix_spawnp(pid, python.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::NotFound("lcb runner: cannot start " + python + ": " + strerror(rc));
  CloseFd(&p->in[0]);
  CloseFd(&p->out[1]);
  CloseFd(&p->err[1]);
  fcntl(p->in[1], F_SETFL, O_NONBLOCK);
  return Status::Ok();
}

// Feeds stdin and drains stdout/stderr until both close or the deadline.
void Pump(Pipes* p, const std::string& input, double limit_s, LcbRunResult* out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  size_t written = 0;
  if (input.empty()) CloseFd(&p->in[1]);
  char buf[65536];
  while (p->out[0] >= 0 || p->err[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out->timed_out = true;
      return;
    }
    pollfd fds[3] = {{p->out[0], POLLIN, 0}, {p->err[0], POLLIN, 0}, {p->in[1], POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0 && errno != EINTR) return;
    if (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t n = write(p->in[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // the reader went away
      if (written == input.size()) CloseFd(&p->in[1]);
    }
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int* fd = i == 0 ? &p->out[0] : &p->err[0];
      std::string* text = i == 0 ? &out->stdout_text : &out->stderr_text;
      ssize_t n = read(*fd, buf, sizeof buf);
      if (n > 0 && text->size() < kKeep) text->append(buf, std::min(static_cast<size_t>(n), kKeep - text->size()));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) CloseFd(fd);
    }
  }
}

Status RunPlain(const std::string& python, const LcbRunRequest& req, LcbRunResult* out) {
  *out = LcbRunResult();
  Pipes pipes;
  pid_t pid = -1;
  EVALRUN_RETURN_IF_ERROR(Spawn(python, req.program_source, &pipes, &pid));
  Pump(&pipes, req.stdin_text, req.wall_limit_s, out);
  kill(-pid, SIGKILL);  // its process group: the program and anything it left behind
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) out->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out->term_signal = WTERMSIG(status);
  return Status::Ok();
}

}  // namespace

LcbRunner PlainPythonRunner(std::string python) {
  return [python = std::move(python)](const LcbRunRequest& req, LcbRunResult* out) {
    return RunPlain(python, req, out);
  };
}

}  // namespace evalrun
