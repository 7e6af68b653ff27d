#include "evals/proc/piped_process.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "evals/proc/sigpipe_block.h"

namespace evalrun {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

PipedProcess::PipedProcess(std::unique_ptr<ProcessHandle> handle, ProcessPipes pipes, size_t stderr_cap)
    : handle_(std::move(handle)), pipes_(pipes), stderr_cap_(stderr_cap) {}

PipedProcess::~PipedProcess() { Finish(0); }

void PipedProcess::DrainStderr() {
  char buf[4096];
  while (pipes_.stderr_fd >= 0) {
    pollfd p = {pipes_.stderr_fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) return;
    ssize_t n = read(pipes_.stderr_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return CloseFd(&pipes_.stderr_fd);
    if (stderr_.size() < stderr_cap_)
      stderr_.append(buf, std::min(static_cast<size_t>(n), stderr_cap_ - stderr_.size()));
  }
}

bool PipedProcess::Wait(int fd, short events, double timeout_s) {
  const double deadline = Now() + std::max(0.0, timeout_s);
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {pipes_.stderr_fd, POLLIN, 0}};
    const double left = deadline - Now();
    int ms = left <= 0 ? 0 : static_cast<int>(std::min(left * 1000 + 1, 1e9));
    int n = poll(fds, pipes_.stderr_fd >= 0 ? 2 : 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && fds[1].revents) DrainStderr();
    if (n > 0 && fds[0].revents) return true;
    if (left <= 0) return false;
  }
}

bool PipedProcess::Send(const std::string& text, double timeout_s) {
  const double deadline = Now() + timeout_s;
  ScopedSigpipeBlock no_sigpipe;
  size_t off = 0;
  while (off < text.size()) {
    if (pipes_.stdin_fd < 0 || !Wait(pipes_.stdin_fd, POLLOUT, deadline - Now())) return false;
    ssize_t n = write(pipes_.stdin_fd, text.data() + off, text.size() - off);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      CloseFd(&pipes_.stdin_fd);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

PipedProcess::Read PipedProcess::ReadLine(double timeout_s, size_t max_bytes, std::string* line) {
  const double deadline = Now() + timeout_s;
  char buf[65536];
  for (;;) {
    size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      *line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return Read::kLine;
    }
    if (buffered_.size() > max_bytes) return Read::kTooLong;
    if (pipes_.stdout_fd < 0) return Read::kEnd;
    if (!Wait(pipes_.stdout_fd, POLLIN, deadline - Now())) return Read::kTimeout;
    ssize_t n = read(pipes_.stdout_fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      CloseFd(&pipes_.stdout_fd);
      continue;
    }
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

bool PipedProcess::HasPendingOutput() {
  if (!buffered_.empty()) return true;
  if (pipes_.stdout_fd < 0) return false;
  pollfd p = {pipes_.stdout_fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) return false;
  char c;
  ssize_t n = read(pipes_.stdout_fd, &c, 1);
  if (n == 1) buffered_.push_back(c);
  return n == 1;
}

ProcessExit PipedProcess::Finish(double grace_s) {
  if (finished_) return exit_;
  finished_ = true;
  CloseFd(&pipes_.stdin_fd);
  const double deadline = Now() + grace_s;
  while (!handle_->Reap(false, &exit_) && Now() < deadline) {
    DrainStderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  handle_->SignalGroup(SIGKILL);
  handle_->Reap(true, &exit_);
  DrainStderr();
  CloseFd(&pipes_.stdout_fd);
  CloseFd(&pipes_.stderr_fd);
  return exit_;
}

Status StartConversation(ProcessRunner* runner, const ProcessSpec& spec, size_t stderr_cap,
                         std::unique_ptr<PipedProcess>* out) {
  std::unique_ptr<ProcessHandle> handle;
  ProcessPipes pipes;
  EVALRUN_RETURN_IF_ERROR(runner->StartPiped(spec, &handle, &pipes));
  *out = std::make_unique<PipedProcess>(std::move(handle), pipes, stderr_cap);
  return Status::Ok();
}

}  // namespace evalrun
