#include "evals/sandbox/box_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace evalrun {
namespace {

// One place evalrun may make groups: a mount and evalrun's own group in it.
struct Hierarchy {
  bool v2 = false;
  std::vector<std::string> controllers;  // v1: this mount's; v2: unused
  std::string own_dir;                   // the mount point + evalrun's group
};

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  for (const auto& x : list)
    if (x == item) return true;
  return false;
}

// evalrun's group per hierarchy, from /proc/self/cgroup: "4:memory:/a/b",
// "0::/c" (v2, under the key "").
std::vector<std::pair<std::vector<std::string>, std::string>> OwnGroups() {
  std::vector<std::pair<std::vector<std::string>, std::string>> groups;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    groups.emplace_back(Split(line.substr(a + 1, b - a - 1), ','), line.substr(b + 1));
  }
  return groups;
}

// The path of `own` (a group's path in its hierarchy) under a mount whose
// root in the hierarchy is `root`; "" when the mount does not hold it.
std::string UnderMount(const std::string& mount_point, const std::string& root, const std::string& own) {
  if (root == "/") return mount_point + (own == "/" ? "" : own);
  if (own.rfind(root, 0) != 0) return "";
  return mount_point + own.substr(root.size());
}

// The hierarchies whose controllers the box uses (v1 memory, pids, cpu) and
// the v2 mount, each with evalrun's own group, from /proc/self/mountinfo.
std::vector<Hierarchy> FindHierarchies() {
  std::vector<Hierarchy> found;
  const auto own = OwnGroups();
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto fields = Split(line, ' ');
    size_t dash = 0;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 5 || dash + 3 >= fields.size()) continue;
    const std::string& type = fields[dash + 1];
    Hierarchy h;
    h.v2 = type == "cgroup2";
    if (type == "cgroup") h.controllers = Split(fields[dash + 3], ',');
    if (!h.v2 && !(Has(h.controllers, "memory") || Has(h.controllers, "pids") || Has(h.controllers, "cpu")))
      continue;
    for (const auto& [controllers, path] : own) {
      const bool match = h.v2 ? controllers.empty() || (controllers.size() == 1 && controllers[0].empty())
                              : !controllers.empty() && Has(h.controllers, controllers[0]);
      if (match) h.own_dir = UnderMount(fields[4], fields[3], path);
    }
    if (!h.own_dir.empty()) found.push_back(h);
  }
  return found;
}

const std::vector<Hierarchy>& Hierarchies() {
  static const std::vector<Hierarchy> hierarchies = FindHierarchies();
  return hierarchies;
}

bool WriteFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::vector<pid_t> Procs(const std::string& dir) {
  std::vector<pid_t> pids;
  std::ifstream in(dir + "/cgroup.procs");
  long pid;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

}  // namespace

struct BoxCgroupBuilder {
  // Sets the limits this hierarchy can hold; the names of what it holds.
  static std::vector<std::string> Limit(const Hierarchy& h, const std::string& dir, const BoxCgroupLimits& l,
                                        bool* cpu) {
    std::vector<std::string> held;
    const std::string mem = std::to_string(l.memory_bytes), pids = std::to_string(l.processes);
    const std::string quota = std::to_string(static_cast<long>(l.cpus * 100000));
    if (h.v2) {
      if (WriteFile(dir + "/memory.max", mem)) held.push_back("memory");
      WriteFile(dir + "/memory.swap.max", "0");
      if (WriteFile(dir + "/pids.max", pids)) held.push_back("pids");
      if (WriteFile(dir + "/cpu.max", quota + " 100000")) held.push_back("cpu");
      if (Exists(dir + "/cgroup.kill")) held.push_back("kill");
    } else {
      if (Has(h.controllers, "memory") && WriteFile(dir + "/memory.limit_in_bytes", mem)) {
        WriteFile(dir + "/memory.memsw.limit_in_bytes", mem);
        held.push_back("memory");
      }
      if (Has(h.controllers, "pids") && WriteFile(dir + "/pids.max", pids)) held.push_back("pids");
      if (Has(h.controllers, "cpu") && WriteFile(dir + "/cpu.cfs_period_us", "100000") &&
          WriteFile(dir + "/cpu.cfs_quota_us", quota))
        held.push_back("cpu");
    }
    if (Has(held, "cpu")) *cpu = true;
    return held;
  }

  static void Add(BoxCgroup* box, const std::string& dir, bool v2) {
    const std::string procs = dir + "/cgroup.procs";
    if (box->join_.count < BoxCgroupJoin::kMax && procs.size() < sizeof box->join_.procs[0]) {
      std::strcpy(box->join_.procs[box->join_.count++], procs.c_str());
      box->dirs_.push_back(dir);
      if (v2 && Exists(dir + "/cgroup.kill")) box->kill_file_ = dir + "/cgroup.kill";
    }
  }
};

Status BoxCgroup::Make(const std::string& name, const BoxCgroupLimits& limits, std::unique_ptr<BoxCgroup>* out) {
  std::unique_ptr<BoxCgroup> box(new BoxCgroup());
  std::string why = Hierarchies().empty() ? "no cgroup file system holds evalrun's group" : "";
  for (const Hierarchy& h : Hierarchies()) {
    const std::string dir = h.own_dir + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0 && errno == EEXIST) {
      BoxCgroup stale;  // a group a crashed run left: end it first
      stale.dirs_ = {dir};
      if (h.v2) stale.kill_file_ = dir + "/cgroup.kill";
    }
    if (!Exists(dir + "/cgroup.procs") && mkdir(dir.c_str(), 0755) != 0) {
      why += (why.empty() ? "" : "; ") + dir + ": " + strerror(errno);
      continue;
    }
    const auto held = BoxCgroupBuilder::Limit(h, dir, limits, &box->limits_cpu_);
    std::string names;
    for (const auto& n : held) names += (names.empty() ? "" : ",") + n;
    box->describe_ += (box->describe_.empty() ? "" : "; ") + std::string(h.v2 ? "v2 " : "v1 ") + names;
    BoxCgroupBuilder::Add(box.get(), dir, h.v2);
  }
  if (box->dirs_.empty()) return Status::Unavailable("cgroup: cannot make one: " + why);
  *out = std::move(box);
  return Status::Ok();
}

bool BoxCgroup::KillAll() {
  if (!kill_file_.empty()) WriteFile(kill_file_, "1");
  for (int round = 0; round < 400; ++round) {
    bool empty = true;
    for (const std::string& dir : dirs_)
      for (pid_t pid : Procs(dir)) {
        empty = false;
        kill(pid, SIGKILL);
      }
    if (empty) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

BoxCgroup::~BoxCgroup() {
  KillAll();
  for (const std::string& dir : dirs_)
    for (int tries = 0; tries < 100 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

int JoinBoxCgroup(const void* arg) {
  const BoxCgroupJoin& join = *static_cast<const BoxCgroupJoin*>(arg);
  for (int i = 0; i < join.count; ++i) {
    int fd = open(join.procs[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t put = write(fd, "0", 1);
    int err = errno;
    close(fd);
    if (put != 1) return err;
  }
  return 0;
}

}  // namespace evalrun
