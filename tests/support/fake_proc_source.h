// A ProcSource whose processes a test plants and moves by hand.
//
//   FakeProcSource proc;
//   proc.set_self(100);
//   proc.Add(300, 1, "indexer", "/usr/bin/indexer --all");
//   proc.AddTicks(300, 2000);          // +20 s of CPU at 100 ticks/s
//   proc.Listen(8080, 200);            // pid 200 listens on TCP 8080
//   proc.VanishOnRead(301);            // listed, but gone when its stat is read
//
// Thread-safe (a mutex), so a sampler thread may read it while a test
// changes it. Counts calls, so tests can check what a pass costs.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_PROC_SOURCE_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_PROC_SOURCE_H_

#include <array>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "evals/watch/proc_source.h"
#include "evals/base/status.h"

namespace evalrun::testing {

class FakeProcSource : public ProcSource {
 public:
  struct Proc {
    int ppid = 1;
    std::string comm;
    std::string cmdline;
    uint64_t utime = 0;
    uint64_t stime = 0;
    uint64_t start = 0;
    uint64_t rss_bytes = 0;
  };

  // Plants (or replaces, with a new start time: a reused pid) a process.
  void Add(int pid, int ppid, std::string comm, std::string cmdline = "",
           uint64_t rss_bytes = 10u << 20) {
    std::lock_guard<std::mutex> lk(mu_);
    Proc& p = procs_[pid];
    p = Proc{ppid, std::move(comm), std::move(cmdline), 0, 0, ++start_counter_, rss_bytes};
  }
  void AddTicks(int pid, uint64_t user, uint64_t sys = 0) {
    std::lock_guard<std::mutex> lk(mu_);
    procs_[pid].utime += user;
    procs_[pid].stime += sys;
  }
  void Remove(int pid) {
    std::lock_guard<std::mutex> lk(mu_);
    procs_.erase(pid);
    vanishing_.erase(pid);
  }
  // The pid is listed, but reading its stat finds it gone.
  void VanishOnRead(int pid) {
    std::lock_guard<std::mutex> lk(mu_);
    vanishing_.insert(pid);
  }
  void Listen(int port, int pid) {
    std::lock_guard<std::mutex> lk(mu_);
    listeners_[port].push_back(pid);
  }
  // ListeningPids(port) answers NotFound (a socket whose owner is unreadable).
  void ListenUnreadable(int port) {
    std::lock_guard<std::mutex> lk(mu_);
    unreadable_ports_.insert(port);
  }
  void set_self(int pid) { self_ = pid; }
  void set_hz(long hz) { hz_ = hz; }
  void set_loadavg(std::array<double, 3> l) {
    std::lock_guard<std::mutex> lk(mu_);
    loadavg_ = l;
  }
  int list_calls() const {
    std::lock_guard<std::mutex> lk(mu_);
    return list_calls_;
  }
  int stat_calls() const {
    std::lock_guard<std::mutex> lk(mu_);
    return stat_calls_;
  }
  int cmdline_calls() const {
    std::lock_guard<std::mutex> lk(mu_);
    return cmdline_calls_;
  }
  int listen_calls() const {
    std::lock_guard<std::mutex> lk(mu_);
    return listen_calls_;
  }

  Status ListPids(std::vector<int>* pids) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++list_calls_;
    pids->clear();
    // Newest first, like no promise of order at all.
    for (auto it = procs_.rbegin(); it != procs_.rend(); ++it) pids->push_back(it->first);
    for (int v : vanishing_) {
      if (!procs_.count(v)) pids->push_back(v);
    }
    return Status::Ok();
  }
  Status ReadStat(int pid, ProcStat* stat) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++stat_calls_;
    auto it = procs_.find(pid);
    if (it == procs_.end() || vanishing_.count(pid)) {
      return Status::NotFound("/proc/" + std::to_string(pid) + "/stat: process is gone");
    }
    const Proc& p = it->second;
    stat->pid = pid;
    stat->comm = p.comm;
    stat->ppid = p.ppid;
    stat->utime_ticks = p.utime;
    stat->stime_ticks = p.stime;
    stat->start_ticks = p.start;
    stat->rss_bytes = p.rss_bytes;
    return Status::Ok();
  }
  Status ReadCmdline(int pid, size_t max_bytes, std::string* cmdline) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++cmdline_calls_;
    auto it = procs_.find(pid);
    if (it == procs_.end()) return Status::NotFound("/proc/" + std::to_string(pid) + "/cmdline");
    *cmdline = it->second.cmdline.substr(0, max_bytes);
    return Status::Ok();
  }
  Status ReadLoadAvg(std::array<double, 3>* loadavg) override {
    std::lock_guard<std::mutex> lk(mu_);
    *loadavg = loadavg_;
    return Status::Ok();
  }
  Status ListeningPids(int port, std::vector<int>* pids) override {
    std::lock_guard<std::mutex> lk(mu_);
    ++listen_calls_;
    pids->clear();
    if (unreadable_ports_.count(port)) {
      return Status::NotFound("TCP port " + std::to_string(port) +
                              " has 1 listening socket(s) but no readable fd table holds one");
    }
    auto it = listeners_.find(port);
    if (it != listeners_.end()) {
      for (int pid : it->second) {
        if (procs_.count(pid)) pids->push_back(pid);
      }
    }
    return Status::Ok();
  }
  int SelfPid() override { return self_; }
  long ClockTicksPerSecond() override { return hz_; }

 private:
  mutable std::mutex mu_;
  std::map<int, Proc> procs_;
  std::set<int> vanishing_;
  std::map<int, std::vector<int>> listeners_;
  std::set<int> unreadable_ports_;
  std::array<double, 3> loadavg_{0.5, 0.25, 0.125};
  uint64_t start_counter_ = 0;
  int self_ = 1;
  long hz_ = 100;
  int list_calls_ = 0, stat_calls_ = 0, cmdline_calls_ = 0, listen_calls_ = 0;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_PROC_SOURCE_H_
