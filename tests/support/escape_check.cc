#include "tests/support/escape_check.h"

#include <dirent.h>
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "evals/sandbox/box_cleanup.h"
#include "evals/sandbox/sandbox_uids.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsSandboxUid(long uid) { return uid >= kFirstSandboxUid && uid < kFirstSandboxUid + kSandboxUids; }

struct Proc {
  ProcStatus status;
  std::string cmdline;
};

bool ReadProc(const std::string& pid, Proc* p) {
  if (!ReadProcStatus(pid, &p->status)) return false;
  p->cmdline = Slurp("/proc/" + pid + "/cmdline");
  for (char& c : p->cmdline)
    if (c == '\0') c = ' ';
  return true;
}

void ProcessLeftovers(std::vector<std::string>* out) {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  const bool root = geteuid() == 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    Proc p;
    if (!ReadProc(e->d_name, &p)) continue;
    const bool marked = p.cmdline.find(EscapeMark() + "-") != std::string::npos;
    const bool our_zombie = root && IsSandboxUid(p.status.uid) && p.status.state == 'Z' && p.status.ppid == getpid();
    if (marked || our_zombie)
      out->push_back("process " + std::string(e->d_name) + " uid " + std::to_string(p.status.uid) + " state " +
                     p.status.state + ": " + p.cmdline);
  }
  closedir(proc);
}

bool OurIpcKey(long key) { return key >= EscapeIpcKey() && key < EscapeIpcKey() + 8; }

void IpcLeftovers(std::vector<std::string>* out) {
  for (const SysvObject& o : ListSysvObjects())
    if ((IsSandboxUid(o.uid) || IsSandboxUid(o.cuid)) && OurIpcKey(o.key))
      out->push_back("System V " + o.kind + " " + std::to_string(o.id) + " key " + std::to_string(o.key) +
                     " uid " + std::to_string(o.uid));
}

std::vector<std::string> MarkedFiles() {
  std::vector<std::string> files;
  const std::string name = EscapeMark() + "-";
  for (const std::string& pattern : {"/tmp/" + name + "*", "/dev/shm/" + name + "*", "/var/tmp/" + name + "*",
                                     "/tmp/evalrun-box-*/" + name + "*"}) {
    glob_t g;
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) files.push_back(g.gl_pathv[i]);
    globfree(&g);
  }
  if (Slurp("/var/tmp/platform.py").find(EscapeMark()) != std::string::npos) files.push_back("/var/tmp/platform.py");
  return files;
}

}  // namespace

const std::string& EscapeMark() {
  static const std::string mark = "evalrun-escape-" + std::to_string(getpid());
  return mark;
}

const std::string& EscapeKey() {
  static const std::string key = "sk-evalrun-escape-" + std::to_string(getpid());
  return key;
}

const std::vector<std::string>& EscapeAnswerNames() {
  static const std::vector<std::string> names = {
      "read_tests_by_walking", "read_tests_from_cmdline", "steal_api_key", "outlive_grading",
      "cpu_burners_escape",    "cpu_burn_during_run",     "clone_parent_zombies", "sysv_residue",
      "file_residue",          "memory_children"};
  return names;
}

long EscapeIpcKey() { return 0x45000000L + (getpid() % 0x100000) * 8; }

std::string EscapeAnswer(const std::string& name) {
  std::string code = Slurp(FixturePath("escape/" + name + ".py"));
  for (const auto& [placeholder, value] : {std::pair<std::string, std::string>{"@MARK@", EscapeMark()},
                                           {"@IPCKEY@", std::to_string(EscapeIpcKey())}})
    for (size_t at = code.find(placeholder); at != std::string::npos; at = code.find(placeholder, at))
      code.replace(at, placeholder.size(), value);
  return code;
}

EscapeDecoy::EscapeDecoy() {
  chmod(dir_.path().c_str(), 0755);
  rows_path_ = dir_.path() + "/test.jsonl";
  WriteText(rows_path_, Slurp(FixturePath("livecodebench/test.jsonl")));
  chmod(rows_path_.c_str(), 0644);
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 600; :", "llama-server", "--api-key", EscapeKey(), "--input", rows_path_};
  spec.stdout_to = spec.stderr_to = OutputTo::kDiscard;
  if (!RealProcessRunner::Default()->Start(spec, &handle_).ok()) handle_.reset();
}

EscapeDecoy::~EscapeDecoy() {
  if (handle_) handle_->SignalGroup(SIGKILL);
  ProcessExit exit;
  if (handle_) handle_->Reap(true, &exit);
}

std::vector<std::string> EscapeLeftovers() {
  std::vector<std::string> out;
  ProcessLeftovers(&out);
  if (geteuid() == 0) IpcLeftovers(&out);
  for (const std::string& f : MarkedFiles()) out.push_back("file " + f);
  return out;
}

void RemoveEscapeFiles() {
  for (const std::string& f : MarkedFiles()) unlink(f.c_str());
}

}  // namespace evalrun::testing
