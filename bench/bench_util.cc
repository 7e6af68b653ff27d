#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "bench/bench.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {

std::string LoadAverage() {
  std::string s = testing::ReadFile("/proc/loadavg");
  // "1.76 3.00 3.84 2/345 6789": keep the three averages.
  std::istringstream in(s);
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {
double ClockSeconds(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}
}  // namespace

double ProcessCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }
double ThreadCpuSeconds() { return ClockSeconds(CLOCK_THREAD_CPUTIME_ID); }

namespace {
// utime + stime of a /proc .../stat file, in seconds; -1 when unreadable.
double StatCpuSeconds(const std::string& path) {
  const std::string stat = testing::ReadFile(path);
  // The command name (field 2) is in parentheses and may hold spaces; count
  // fields after the last ')'. utime and stime are fields 14 and 15.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 > stat.size()) return -1;
  std::istringstream in(stat.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int f = 3; f <= 15 && in >> field; ++f) {
    if (f == 14) utime = std::atoll(field.c_str());
    if (f == 15) stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}
}  // namespace

std::map<int, ThreadCpu> ReadThreadCpu(int pid) {
  std::map<int, ThreadCpu> out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const int tid = std::atoi(e.path().filename().c_str());
    const double cpu = StatCpuSeconds(e.path().string() + "/stat");
    if (tid <= 0 || cpu < 0) continue;
    std::string name = testing::ReadFile(e.path().string() + "/comm");
    while (!name.empty() && name.back() == '\n') name.pop_back();
    out[tid] = {cpu, name};
  }
  return out;
}

bool ReadProcCpuAndHwm(int pid, double* cpu_s, int64_t* hwm_kb) {
  const double cpu = StatCpuSeconds("/proc/" + std::to_string(pid) + "/stat");
  if (cpu < 0) return false;
  *cpu_s = cpu;
  *hwm_kb = 0;
  std::istringstream st(testing::ReadFile("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(st, line)) {
    if (line.rfind("VmHWM:", 0) == 0) *hwm_kb = std::atoll(line.c_str() + 6);
  }
  return true;
}

bool ChildProcess::Start(const std::vector<std::string>& argv, const std::string& dir,
                         const std::string& tag) {
  run_ = ChildRun();
  run_.out_path = dir + "/" + tag + ".stdout";
  run_.err_path = dir + "/" + tag + ".stderr";
  run_.start_s = NowSeconds();
  pid_ = testing::SpawnBinary(argv, run_.out_path, run_.err_path);
  run_.pid = pid_;
  return pid_ > 0;
}

ChildRun ChildProcess::Wait(double timeout_s) {
  std::atomic<bool> done{false};
  std::atomic<bool> killed{false};
  const int pid = pid_;
  // The child's own peak RSS is its VmHWM since exec, read while it lives:
  // wait4's ru_maxrss also counts the pages it shared with this (large)
  // process between fork and exec.
  std::atomic<int64_t> hwm_kb{0};
  std::thread watchdog([&] {
    const double deadline = NowSeconds() + timeout_s;
    while (!done.load()) {
      double cpu = 0;
      int64_t hwm = 0;
      if (ReadProcCpuAndHwm(pid, &cpu, &hwm) && hwm > hwm_kb.load()) hwm_kb = hwm;
      if (NowSeconds() > deadline) {
        killed = true;
        kill(pid, SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  int status = 0;
  rusage ru{};
  pid_t w;
  do {
    w = wait4(pid, &status, 0, &ru);
  } while (w < 0 && errno == EINTR);
  run_.end_s = NowSeconds();
  done = true;
  watchdog.join();
  run_.timed_out = killed.load();
  if (w == pid && WIFEXITED(status)) run_.exit_code = WEXITSTATUS(status);
  run_.user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
  run_.sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  run_.max_rss_kb = hwm_kb.load() > 0 ? hwm_kb.load() : ru.ru_maxrss;
  run_.minor_faults = ru.ru_minflt;
  run_.major_faults = ru.ru_majflt;
  run_.vol_ctx = ru.ru_nvcsw;
  run_.invol_ctx = ru.ru_nivcsw;
  pid_ = -1;
  return run_;
}

std::string FileTail(const std::string& path, size_t max_bytes) {
  std::string s = testing::ReadFile(path);
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

void PrintFigures(const std::vector<Figure>& input, std::FILE* out) {
  // Long values (error messages) are cut in the table; stderr has them whole.
  std::vector<Figure> figures = input;
  for (auto& f : figures)
    if (f.value.size() > 90) f.value = f.value.substr(0, 87) + "...";
  size_t wn = 6, wv = 8, wt = 6;
  for (const auto& f : figures) {
    wn = std::max(wn, f.name.size());
    wv = std::max(wv, f.value.size());
    wt = std::max(wt, f.target.size());
  }
  const int n = static_cast<int>(wn), v = static_cast<int>(wv), t = static_cast<int>(wt);
  std::string section;
  std::fprintf(out, "%-*s  %-*s  %-*s  %s\n", n, "figure", v, "measured", t, "target", "");
  for (const auto& f : figures) {
    if (f.section != section) {
      section = f.section;
      std::fprintf(out, "-- %s\n", section.c_str());
    }
    const char* verdict = f.verdict == Verdict::kPass ? "PASS" : f.verdict == Verdict::kMiss ? "MISS" : "";
    std::fprintf(out, "%-*s  %-*s  %-*s  %s\n", n, f.name.c_str(), v, f.value.c_str(), t, f.target.c_str(),
                 verdict);
  }
  std::fflush(out);
}

}  // namespace evalrun::bench
