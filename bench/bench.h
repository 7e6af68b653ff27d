// evalrun-bench: speed figures of the runner, printed as a table
// next to their targets. Not a test: nothing here asserts; a missed target
// is a MISS line, and the exit code says only whether every figure could be
// measured.
//
// Sections (bench_occupancy.cc, bench_ruler.cc, bench_scoring.cc):
//   occupancy  the real evalrun binary against the in-process fake
//              llama-server: slot occupancy, CPU per request, peak RSS;
//   ruler      RULER prompt preparation (in-process) and a 128K RULER run of
//              the real binary (peak RSS);
//   scoring    IFEval and MMLU-Pro scoring speed (scorer API and the real
//              `evalrun score` path);
//   probe      the logprob probe through the real binary: CPU per position
//              (bench_probe.cc);
//   client     evalrun against a real llama-server beside a Python client
//              sending the same requests (not in the default sections: it
//              needs EVALRUN_LLAMA_SERVER);
//   stream     streamed chat completions on a real llama-server: the
//              runner's CPU per streamed token and its TTFT beside a bare
//              Python client (bench_stream.cc; not in the default sections:
//              it needs EVALRUN_LLAMA_SERVER);
//   livecodebench  LiveCodeBench grading in the sandbox: the cost per answer
//              and per test case, and the pool's occupancy with grading on
//              (bench_livecodebench.cc; not in the default sections);
//   ruler-full RULER at its published size (13 tasks x 500 samples) at 32K
//              and 128K through the real binary: preparation time and peak
//              RSS (not in the default sections: it takes a long while).
//
// Single-threaded driver: the sections run one after another on the main
// thread; only the fake server and the watchdog of a child run on others.
#ifndef EVALRUN_BENCH_BENCH_H_
#define EVALRUN_BENCH_BENCH_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace evalrun::bench {

enum class Verdict { kInfo, kPass, kMiss };

// One printed line: a figure, its target and the verdict.
struct Figure {
  std::string section;  // "occupancy", "ruler", "scoring"
  std::string name;     // what was measured
  std::string value;    // the measured figure, formatted
  std::string target;   // "" for an informational line
  Verdict verdict = Verdict::kInfo;
};

struct BenchOptions {
  std::string evalrun_binary;  // the real program (testing::EvalrunBinary())
  std::string data_dir;        // ../shared/datasets or --data-dir / $EVALRUN_BENCH_DATA
  std::string source_dir;      // the checkout (fixtures)
  std::string work_dir;        // a temp folder for cards and runs (removed at exit unless --keep)
  int requests = 2000;         // occupancy: requests per slot count
  int service_ms = 20;         // occupancy: the fake server's service time per request
  std::vector<int> slot_counts = {1, 4, 16};
  int ruler_samples_per_task = 10;
  // Tasks that run at 128K on the shipped data (cwe needs the optional
  // english_words.json beyond ~75K tokens; qa needs SQuAD / HotpotQA).
  std::vector<std::string> ruler_tasks = {"niah_single_2", "niah_multikey_2", "vt", "fwe"};
  int tokenize_delay_ms = 20;  // the fake server's tokenizer round trip
  int ruler_full_samples = 500;  // ruler-full: samples per task
  // In-process RULER preparation: give its client sockets TCP_NODELAY (as
  // evalrun's own transport does).
  bool client_nodelay = false;
  bool verbose = false;
};

// Adds the section's figures to *out. False when something could not be
// measured at all (a child that failed, data missing); the reason is printed
// to stderr and recorded as a MISS figure.
bool RunOccupancySection(const BenchOptions& o, std::vector<Figure>* out);
bool RunRulerSection(const BenchOptions& o, std::vector<Figure>* out);
bool RunScoringSection(const BenchOptions& o, std::vector<Figure>* out);
bool RunRulerFullSection(const BenchOptions& o, std::vector<Figure>* out);
bool RunProbeSection(const BenchOptions& o, std::vector<Figure>* out);
bool RunLiveCodeBenchSection(const BenchOptions& o, std::vector<Figure>* out);
bool RunStreamSection(const BenchOptions& o, std::vector<Figure>* out);
// evalrun against a real llama-server (EVALRUN_LLAMA_SERVER) beside a plain
// Python client sending the same bodies: CPU per request and wall time
// (bench_client.cc; --only client, --requests N).
bool RunClientSection(const BenchOptions& o, std::vector<Figure>* out);

// ---------------------------------------------------------------------------
// Helpers shared by the sections (bench_util.cc).

// "1.76 1.50 1.20" from /proc/loadavg (the 1, 5 and 15 minute averages).
std::string LoadAverage();
double NowSeconds();          // steady clock, seconds
double ProcessCpuSeconds();   // this process: user + system, all threads
double ThreadCpuSeconds();    // the calling thread

// The CPU time (user + system, all threads) and the peak RSS (VmHWM) of a
// live process, from /proc/<pid>/stat and /proc/<pid>/status. False when the
// process is gone. CPU resolution is one clock tick (10 ms).
bool ReadProcCpuAndHwm(int pid, double* cpu_s, int64_t* hwm_kb);

// The CPU time (user + system) and name of every thread of a live process,
// by thread id, from /proc/<pid>/task/<tid>/{stat,comm} (10 ms ticks).
// Empty when it is gone. evalrun names its threads "evalrun-<role>"
// (evals/base/thread_name.h).
struct ThreadCpu {
  double cpu_s = 0;
  std::string name;
};
std::map<int, ThreadCpu> ReadThreadCpu(int pid);

// A child process run to its end, measured with wait4's rusage.
struct ChildRun {
  int pid = -1;
  int exit_code = -1;      // -1: killed by a signal or timed out
  bool timed_out = false;
  double start_s = 0;      // NowSeconds() just before fork
  double end_s = 0;        // NowSeconds() right after wait4 returned
  double user_s = 0, sys_s = 0;  // ru_utime, ru_stime
  int64_t max_rss_kb = 0;        // VmHWM since exec, last read before it exited (ru_maxrss if never read)
  int64_t minor_faults = 0, major_faults = 0;
  int64_t vol_ctx = 0, invol_ctx = 0;
  std::string out_path, err_path;  // where its stdout and stderr went
  double wall_s() const { return end_s - start_s; }
  double cpu_s() const { return user_s + sys_s; }
};

// Starts argv (argv[0] is the path), stdout/stderr to files under dir.
// `on_started(pid)` (may be empty) runs on the calling thread right after the
// fork, before waiting. Killed with SIGKILL after timeout_s.
class ChildProcess {
 public:
  bool Start(const std::vector<std::string>& argv, const std::string& dir, const std::string& tag);
  int pid() const { return pid_; }
  // Blocks until the child exits (or the timeout kills it).
  ChildRun Wait(double timeout_s);

 private:
  int pid_ = -1;
  ChildRun run_;
};

// The last `max_bytes` of a file (for error messages).
std::string FileTail(const std::string& path, size_t max_bytes = 2000);

// printf into a std::string.
std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Prints figures as a table (section, figure, measured, target, verdict).
void PrintFigures(const std::vector<Figure>& figures, std::FILE* out);

}  // namespace evalrun::bench

#endif  // EVALRUN_BENCH_BENCH_H_
