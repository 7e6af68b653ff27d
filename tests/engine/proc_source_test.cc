#include "evals/watch/proc_source.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

// A stat line as Linux 6.x prints it (52 fields), comm given.
std::string StatLine(int pid, const std::string& comm, int ppid, int utime, int stime, int start,
                     int rss_pages) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) +
         " 7700 7700 34816 7700 4194560 120 0 0 0 " + std::to_string(utime) + " " +
         std::to_string(stime) + " 0 0 20 0 1 0 " + std::to_string(start) + " 9109504 " +
         std::to_string(rss_pages) +
         " 18446744073709551615 94 95 96 0 0 0 65536 4 65538 1 0 0 17 1 0 0 0 0 0 97 98 99 100 "
         "101 102 103 0\n";
}

TEST(ParseProcStatTest, ReadsTheFieldsTheSamplerUses) {
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(StatLine(4242, "bash", 7699, 1234, 56, 98765, 300), 4096, &s).ok());
  EXPECT_EQ(s.pid, 4242);
  EXPECT_EQ(s.comm, "bash");
  EXPECT_EQ(s.ppid, 7699);
  EXPECT_EQ(s.utime_ticks, 1234u);
  EXPECT_EQ(s.stime_ticks, 56u);
  EXPECT_EQ(s.start_ticks, 98765u);
  EXPECT_EQ(s.rss_bytes, 300u * 4096u);
}

TEST(ParseProcStatTest, CommWithSpacesAndParenthesesEndsAtTheLastParen) {
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(StatLine(7, "we (ird) na)me", 1, 5, 6, 7, 8), 4096, &s).ok());
  EXPECT_EQ(s.comm, "we (ird) na)me");
  EXPECT_EQ(s.ppid, 1);
  EXPECT_EQ(s.utime_ticks, 5u);
  EXPECT_EQ(s.stime_ticks, 6u);
  ASSERT_TRUE(ParseProcStat(StatLine(8, ") S 99 ", 3, 1, 2, 3, 4), 4096, &s).ok());
  EXPECT_EQ(s.comm, ") S 99 ");
  EXPECT_EQ(s.ppid, 3);
}

TEST(ParseProcStatTest, MalformedLinesNameWhatIsWrong) {
  ProcStat s;
  Status st = ParseProcStat("garbage", 4096, &s);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), "stat line: expected 'pid (comm) ...', got 'garbage'");
  st = ParseProcStat("12 (x) S 1 2 3", 4096, &s);
  EXPECT_EQ(st.message(), "stat line of pid 12: expected at least 24 fields");
  st = ParseProcStat("12 (x) S 1 2 3 4 5 6 7 8 9 10 zz 5", 4096, &s);
  EXPECT_EQ(st.message(), "stat line of pid 12: field 14: expected a number, got 'zz'");
  st = ParseProcStat("x1 (x) S 1", 4096, &s);
  EXPECT_EQ(st.message(), "stat line: field 1 (pid): expected a number, got 'x1'");
}

TEST(ParseLoadAvgTest, ThreeNumbers) {
  std::array<double, 3> l{};
  ASSERT_TRUE(ParseLoadAvg("0.28 0.21 0.09 1/95 7727\n", &l).ok());
  EXPECT_DOUBLE_EQ(l[0], 0.28);
  EXPECT_DOUBLE_EQ(l[1], 0.21);
  EXPECT_DOUBLE_EQ(l[2], 0.09);
  EXPECT_EQ(ParseLoadAvg("0.28 x", &l).code(), Status::Code::kInvalidInput);
}

TEST(ParseListeningInodesTest, OnlyListenRowsOnThePort) {
  // /proc/net/tcp: 127.0.0.1:8080 listening (inode 5001), an established
  // connection on 8080 (not a listener), a listener on 2024 (07E8).
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        "
      "0 5001 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:1F90 0100007F:A2B4 01 00000000:00000000 00:00000000 00000000  1000        "
      "0 5002 1 0000000000000000 20 4 30 10 -1\n"
      "   2: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 1081 1 0000000000000000 100 0 0 10 0\n";
  // /proc/net/tcp6: [::]:8080 listening (inode 6001).
  const std::string tcp6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000  1000        0 6001 1 0000000000000000 100 0 0 10 "
      "0\n";
  std::vector<uint64_t> inodes;
  ParseListeningInodes(tcp, 8080, &inodes);
  ParseListeningInodes(tcp6, 8080, &inodes);
  EXPECT_EQ(inodes, (std::vector<uint64_t>{5001, 6001}));
  inodes.clear();
  ParseListeningInodes(tcp, 2024, &inodes);
  EXPECT_EQ(inodes, (std::vector<uint64_t>{1081}));
  inodes.clear();
  ParseListeningInodes(tcp, 9, &inodes);
  EXPECT_TRUE(inodes.empty());
}

// RealProcSource over a planted tree: a listed process whose files are gone
// (it ended between the listing and the read) is NotFound, not an error.
TEST(RealProcSourceTest, PlantedTreeAndVanishedProcess) {
  namespace fs = std::filesystem;
  const testing::TempDir tmp("evalrun_proc");
  const fs::path root = tmp.path();
  fs::create_directories(root / "42");
  fs::create_directories(root / "43");  // vanished: no stat inside
  fs::create_directories(root / "self");
  fs::create_directories(root / "net");
  std::ofstream(root / "42" / "stat") << StatLine(42, "my proc", 1, 300, 20, 1000, 256);
  std::ofstream(root / "42" / "cmdline") << std::string("/bin/my\0--flag\0x y\0", 20);
  std::ofstream(root / "loadavg") << "1.50 0.75 0.25 2/100 999\n";

  RealProcSource proc(root.string());
  std::vector<int> pids;
  ASSERT_TRUE(proc.ListPids(&pids).ok());
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{42, 43}));

  ProcStat s;
  ASSERT_TRUE(proc.ReadStat(42, &s).ok());
  EXPECT_EQ(s.comm, "my proc");
  EXPECT_EQ(s.utime_ticks, 300u);
  EXPECT_EQ(s.rss_bytes, 256u * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  Status gone = proc.ReadStat(43, &s);
  EXPECT_EQ(gone.code(), Status::Code::kNotFound);
  EXPECT_EQ(gone.message(), root.string() + "/43/stat: process is gone");

  std::string cmd;
  ASSERT_TRUE(proc.ReadCmdline(42, 256, &cmd).ok());
  EXPECT_EQ(cmd, "/bin/my --flag x y");
  ASSERT_TRUE(proc.ReadCmdline(42, 8, &cmd).ok());
  EXPECT_EQ(cmd, "/bin/my");
  EXPECT_EQ(proc.ReadCmdline(43, 256, &cmd).code(), Status::Code::kNotFound);

  std::array<double, 3> l{};
  ASSERT_TRUE(proc.ReadLoadAvg(&l).ok());
  EXPECT_DOUBLE_EQ(l[0], 1.5);

  // No /proc/net/tcp at all: an I/O error that names the file.
  std::vector<int> listeners;
  Status st = proc.ListeningPids(8080, &listeners);
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message(), root.string() + "/net/tcp: cannot read");
}

TEST(RealProcSourceTest, ReadsItsOwnProcess) {
  RealProcSource proc;
  EXPECT_EQ(proc.SelfPid(), getpid());
  EXPECT_EQ(proc.ClockTicksPerSecond(), sysconf(_SC_CLK_TCK));
  ProcStat s;
  ASSERT_TRUE(proc.ReadStat(getpid(), &s).ok());
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  EXPECT_EQ(s.comm, comm);
  EXPECT_EQ(s.ppid, getppid());
  EXPECT_GT(s.rss_bytes, 0u);
  std::vector<int> pids;
  ASSERT_TRUE(proc.ListPids(&pids).ok());
  EXPECT_NE(std::find(pids.begin(), pids.end(), getpid()), pids.end());
  std::array<double, 3> l{-1, -1, -1};
  ASSERT_TRUE(proc.ReadLoadAvg(&l).ok());
  EXPECT_GE(l[0], 0.0);
}

TEST(RealProcSourceTest, EndedProcessIsNotFound) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  RealProcSource proc;
  ProcStat s;
  EXPECT_EQ(proc.ReadStat(child, &s).code(), Status::Code::kNotFound);
  std::string cmd;
  EXPECT_EQ(proc.ReadCmdline(child, 64, &cmd).code(), Status::Code::kNotFound);
}

TEST(RealProcSourceTest, FindsTheProcessListeningOnALoopbackPort) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  RealProcSource proc;
  std::vector<int> pids;
  Status st = proc.ListeningPids(port, &pids);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(pids, std::vector<int>{getpid()});

  close(fd);
  st = proc.ListeningPids(port, &pids);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(pids.empty());
}

}  // namespace
}  // namespace evalrun
