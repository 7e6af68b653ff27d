#include "evals/watch/proc_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "evals/base/files.h"

namespace evalrun {
namespace {

// Reads up to cap bytes of a (small, /proc) file into buf. Returns the byte
// count, or -1 with errno set.
ssize_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len < cap) {
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  close(fd);
  return static_cast<ssize_t>(len);
}

bool ParseUint(std::string_view s, uint64_t* v, int base = 10) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParsePid(std::string_view s, int* pid) {
  uint64_t v = 0;
  if (!ParseUint(s, &v) || v == 0 || v > 0x7fffffff) return false;
  *pid = static_cast<int>(v);
  return true;
}

// Splits on runs of spaces/tabs/newlines, calling fn(index, token) until it
// returns false.
template <typename Fn>
void ForEachToken(std::string_view s, Fn fn) {
  size_t i = 0;
  int index = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') ++j;
    if (!fn(index++, s.substr(i, j - i))) return;
    i = j;
  }
}

Status GoneOrIo(const char* path) {
  int e = errno;
  if (e == ENOENT || e == ESRCH) return Status::NotFound(std::string(path) + ": process is gone");
  return Status::IoError(std::string(path) + ": " + std::strerror(e));
}

}  // namespace

Status ParseProcStat(std::string_view line, long page_size, ProcStat* stat) {
  size_t open = line.find('(');
  size_t close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::InvalidInput("stat line: expected 'pid (comm) ...', got '" +
                                std::string(line.substr(0, 80)) + "'");
  }
  std::string_view pid_text = line.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ParsePid(pid_text, &stat->pid)) {
    return Status::InvalidInput("stat line: field 1 (pid): expected a number, got '" +
                                std::string(pid_text) + "'");
  }
  stat->comm.assign(line.data() + open + 1, close - open - 1);
  // Fields after the comm start at (3) state.
  std::string_view rest = line.substr(close + 1);
  int found = 0;
  std::string_view bad_field;
  int bad_number = 0;
  ForEachToken(rest, [&](int index, std::string_view tok) {
    int field = index + 3;
    uint64_t v = 0;
    bool want = field == 4 || field == 14 || field == 15 || field == 22 || field == 24;
    if (!want) return true;
    if (!ParseUint(tok, &v)) {
      // ppid of the idle task is 0; a negative value never appears in these
      // fields, so anything else is a malformed line.
      bad_field = tok;
      bad_number = field;
      return false;
    }
    switch (field) {
      case 4:
        stat->ppid = static_cast<int>(v);
        break;
      case 14:
        stat->utime_ticks = v;
        break;
      case 15:
        stat->stime_ticks = v;
        break;
      case 22:
        stat->start_ticks = v;
        break;
      case 24:
        stat->rss_bytes = v * static_cast<uint64_t>(page_size);
        break;
    }
    ++found;
    return field < 24;
  });
  if (bad_number != 0) {
    return Status::InvalidInput("stat line of pid " + std::to_string(stat->pid) + ": field " +
                                std::to_string(bad_number) + ": expected a number, got '" +
                                std::string(bad_field) + "'");
  }
  if (found < 5) {
    return Status::InvalidInput("stat line of pid " + std::to_string(stat->pid) +
                                ": expected at least 24 fields");
  }
  return Status::Ok();
}

Status ParseLoadAvg(std::string_view text, std::array<double, 3>* loadavg) {
  int n = 0;
  bool ok = true;
  ForEachToken(text, [&](int index, std::string_view tok) {
    if (index >= 3) return false;
    double v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || p != tok.data() + tok.size()) {
      ok = false;
      return false;
    }
    (*loadavg)[index] = v;
    ++n;
    return true;
  });
  if (!ok || n != 3) {
    return Status::InvalidInput("loadavg: expected three numbers, got '" +
                                std::string(text.substr(0, 60)) + "'");
  }
  return Status::Ok();
}

void ParseListeningInodes(std::string_view net_tcp, int port, std::vector<uint64_t>* inodes) {
  size_t pos = 0;
  bool header = true;
  while (pos < net_tcp.size()) {
    size_t end = net_tcp.find('\n', pos);
    if (end == std::string_view::npos) end = net_tcp.size();
    std::string_view row = net_tcp.substr(pos, end - pos);
    pos = end + 1;
    if (header) {  // "  sl  local_address rem_address   st ..."
      header = false;
      continue;
    }
    bool port_matches = false;
    bool listening = false;
    uint64_t inode = 0;
    bool have_inode = false;
    ForEachToken(row, [&](int index, std::string_view tok) {
      if (index == 1) {  // local address "0100007F:1F90" (hex, port after the colon)
        size_t colon = tok.rfind(':');
        uint64_t p = 0;
        port_matches = colon != std::string_view::npos &&
                       ParseUint(tok.substr(colon + 1), &p, 16) && p == static_cast<uint64_t>(port);
        return port_matches;
      }
      if (index == 3) {  // st: 0A is TCP_LISTEN
        listening = tok == "0A";
        return listening;
      }
      if (index == 9) {
        have_inode = ParseUint(tok, &inode);
        return false;
      }
      return true;
    });
    if (port_matches && listening && have_inode && inode != 0) inodes->push_back(inode);
  }
}

RealProcSource::RealProcSource(std::string proc_root)
    : root_(std::move(proc_root)), page_size_(sysconf(_SC_PAGESIZE)) {
  if (page_size_ <= 0) page_size_ = 4096;
}

Status RealProcSource::ListPids(std::vector<int>* pids) {
  pids->clear();
  DIR* dir = opendir(root_.c_str());
  if (dir == nullptr) return Status::IoError(root_ + ": cannot list: " + std::strerror(errno));
  while (struct dirent* e = readdir(dir)) {
    int pid = 0;
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && ParsePid(e->d_name, &pid)) {
      pids->push_back(pid);
    }
  }
  closedir(dir);
  return Status::Ok();
}

Status RealProcSource::ReadStat(int pid, ProcStat* stat) {
  char path[256];
  std::snprintf(path, sizeof path, "%s/%d/stat", root_.c_str(), pid);
  char buf[2048];
  ssize_t n = ReadSmallFile(path, buf, sizeof buf);
  if (n < 0) return GoneOrIo(path);
  if (n == 0) return Status::NotFound(std::string(path) + ": empty (process is gone)");
  Status st = ParseProcStat(std::string_view(buf, static_cast<size_t>(n)), page_size_, stat);
  if (!st.ok()) return st.Prefixed(path);
  return Status::Ok();
}

Status RealProcSource::ReadCmdline(int pid, size_t max_bytes, std::string* cmdline) {
  char path[256];
  std::snprintf(path, sizeof path, "%s/%d/cmdline", root_.c_str(), pid);
  cmdline->assign(max_bytes, '\0');
  ssize_t n = ReadSmallFile(path, cmdline->data(), max_bytes);
  if (n < 0) {
    cmdline->clear();
    return GoneOrIo(path);
  }
  cmdline->resize(static_cast<size_t>(n));
  while (!cmdline->empty() && cmdline->back() == '\0') cmdline->pop_back();
  std::replace(cmdline->begin(), cmdline->end(), '\0', ' ');
  return Status::Ok();
}

Status RealProcSource::ReadLoadAvg(std::array<double, 3>* loadavg) {
  std::string path = root_ + "/loadavg";
  char buf[256];
  ssize_t n = ReadSmallFile(path.c_str(), buf, sizeof buf);
  if (n < 0) return Status::IoError(path + ": " + std::strerror(errno));
  return ParseLoadAvg(std::string_view(buf, static_cast<size_t>(n)), loadavg).Prefixed(path);
}

Status RealProcSource::ListeningPids(int port, std::vector<int>* pids) {
  pids->clear();
  std::vector<uint64_t> inodes;
  std::string text;
  bool any_table = false;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    if (!ReadFileToString(root_ + table, &text).ok()) continue;  // tcp6 is absent without IPv6
    any_table = true;
    ParseListeningInodes(text, port, &inodes);
  }
  if (!any_table) return Status::IoError(root_ + "/net/tcp: cannot read");
  if (inodes.empty()) return Status::Ok();
  std::sort(inodes.begin(), inodes.end());

  std::vector<int> all;
  EVALRUN_RETURN_IF_ERROR(ListPids(&all));
  int unreadable = 0;
  char path[256];
  char link[64];
  for (int pid : all) {
    std::snprintf(path, sizeof path, "%s/%d/fd", root_.c_str(), pid);
    DIR* dir = opendir(path);
    if (dir == nullptr) {
      if (errno == EACCES || errno == EPERM) ++unreadable;
      continue;  // gone, or not ours to read
    }
    int dfd = dirfd(dir);
    bool holds = false;
    while (struct dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      ssize_t n = readlinkat(dfd, e->d_name, link, sizeof link - 1);
      if (n <= 0) continue;
      std::string_view target(link, static_cast<size_t>(n));
      constexpr std::string_view kPrefix = "socket:[";
      if (target.size() < kPrefix.size() + 2 || target.substr(0, kPrefix.size()) != kPrefix ||
          target.back() != ']') {
        continue;
      }
      uint64_t inode = 0;
      if (!ParseUint(target.substr(kPrefix.size(), target.size() - kPrefix.size() - 1), &inode)) {
        continue;
      }
      if (std::binary_search(inodes.begin(), inodes.end(), inode)) {
        holds = true;
        break;
      }
    }
    closedir(dir);
    if (holds) pids->push_back(pid);
  }
  if (pids->empty()) {
    return Status::NotFound("TCP port " + std::to_string(port) + " has " +
                            std::to_string(inodes.size()) + " listening socket(s) (inode " +
                            std::to_string(inodes[0]) + ") but no readable " + root_ +
                            "/<pid>/fd holds one (" + std::to_string(unreadable) +
                            " fd tables unreadable): the server runs as another user or in "
                            "another PID namespace");
  }
  std::sort(pids->begin(), pids->end());
  return Status::Ok();
}

int RealProcSource::SelfPid() { return static_cast<int>(getpid()); }

long RealProcSource::ClockTicksPerSecond() {
  long t = sysconf(_SC_CLK_TCK);
  return t > 0 ? t : 100;
}

}  // namespace evalrun
