// What the load sampler needs to know about the machine's processes, behind a
// small interface (after ninja's DiskInterface, "abstract so it can be mocked
// out for tests"). RealProcSource reads Linux's /proc; tests plant processes
// in tests/support/fake_proc_source.h.
//
// Processes come and go while they are read: a pid listed a moment ago may be
// gone when its files are opened. Every per-pid read therefore returns
// Status::NotFound for a vanished process, and callers skip it.
//
// Thread-safety: RealProcSource keeps no state and may be used from several
// threads at once. Callers own the output vectors; methods clear them first
// and reuse their capacity (the sampler calls them every few seconds and must
// not allocate on each pass).
#ifndef EVALRUN_EVALS_WATCH_PROC_SOURCE_H_
#define EVALRUN_EVALS_WATCH_PROC_SOURCE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// The fields of /proc/<pid>/stat the sampler uses (proc(5) numbering).
struct ProcStat {
  int pid = 0;
  std::string comm;          // (2) the name between the first '(' and the LAST ')'
  int ppid = 0;              // (4)
  uint64_t utime_ticks = 0;  // (14) user CPU, clock ticks, all threads
  uint64_t stime_ticks = 0;  // (15) system CPU, clock ticks, all threads
  uint64_t start_ticks = 0;  // (22) start time after boot; tells a reused pid apart
  uint64_t rss_bytes = 0;    // (24) resident pages x page size (statm's 'resident')
};

class ProcSource {
 public:
  virtual ~ProcSource() = default;

  // Writes the pids of all processes (thread-group leaders; /proc/[0-9]*)
  // to *pids, in no particular order. IoError when /proc cannot be listed.
  virtual Status ListPids(std::vector<int>* pids) = 0;

  // Reads /proc/<pid>/stat into *stat. NotFound when the process is gone;
  // InvalidInput when the line does not parse (names the pid and the field).
  virtual Status ReadStat(int pid, ProcStat* stat) = 0;

  // Reads /proc/<pid>/cmdline with the NUL separators turned into spaces and
  // the trailing one dropped, at most max_bytes of it. Kernel threads and
  // zombies have an empty command line (ok, ""). NotFound when gone.
  virtual Status ReadCmdline(int pid, size_t max_bytes, std::string* cmdline) = 0;

  // Reads the 1, 5 and 15 minute load averages from /proc/loadavg.
  virtual Status ReadLoadAvg(std::array<double, 3>* loadavg) = 0;

  // Writes the pids of the processes holding a TCP socket in LISTEN state on
  // `port` (IPv4 or IPv6, any address): /proc/net/tcp{,6} give the sockets'
  // inodes, /proc/<pid>/fd/* links "socket:[inode]" give their owners. Ok
  // with an empty list when nothing listens on the port. NotFound when a
  // listening socket exists but no readable fd table holds it (its owner runs
  // as another user or in another PID namespace); the message says so. This
  // reads every process's fd table: call it rarely, not once a sample.
  virtual Status ListeningPids(int port, std::vector<int>* pids) = 0;

  // The calling process's pid.
  virtual int SelfPid() = 0;

  // sysconf(_SC_CLK_TCK): the unit of utime/stime/start_ticks (usually 100).
  virtual long ClockTicksPerSecond() = 0;
};

class RealProcSource : public ProcSource {
 public:
  // `proc_root` is "/proc" except in tests that point it at a copied tree.
  explicit RealProcSource(std::string proc_root = "/proc");

  Status ListPids(std::vector<int>* pids) override;
  Status ReadStat(int pid, ProcStat* stat) override;
  Status ReadCmdline(int pid, size_t max_bytes, std::string* cmdline) override;
  Status ReadLoadAvg(std::array<double, 3>* loadavg) override;
  Status ListeningPids(int port, std::vector<int>* pids) override;
  int SelfPid() override;
  long ClockTicksPerSecond() override;

 private:
  std::string root_;
  long page_size_;
};

// Parsers, public so tests can feed them strings (ninja's ParseTest style).

// Parses one /proc/<pid>/stat line. The comm field may hold spaces and
// parentheses ("(a) b)"), so it is taken up to the LAST ')'. `page_size`
// converts field 24 to bytes. InvalidInput names the missing field.
Status ParseProcStat(std::string_view line, long page_size, ProcStat* stat);

// Parses /proc/loadavg ("0.28 0.21 0.09 1/95 7727").
Status ParseLoadAvg(std::string_view text, std::array<double, 3>* loadavg);

// Appends to *inodes the socket inodes of /proc/net/tcp or /proc/net/tcp6
// rows in LISTEN state (st 0A) whose local port is `port`. The header row is
// skipped; rows that do not parse are skipped too (the kernel's format is
// fixed, so there are none in practice).
void ParseListeningInodes(std::string_view net_tcp, int port, std::vector<uint64_t>* inodes);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_WATCH_PROC_SOURCE_H_
