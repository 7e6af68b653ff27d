// evalrun-bench: prints the runner's speed figures next to their targets
// (bench/bench.h lists the sections). Usage:
//
//   evalrun-bench [--only occupancy,ruler,scoring,probe] [--data-dir DIR]
//                 [--requests 2000] [--service-ms 20] [--slots 1,4,16]
//                 [--ruler-tasks a,b,c,d] [--ruler-samples 10] [--tokenize-delay-ms 20]
//                 [--quiet-below LOAD] [--json FILE] [--keep] [--verbose]
//                 [--evalrun PATH] [--fake-httplib-defaults] [--client-nodelay]
//
// --evalrun measures another build of the program (an A/B of a patch);
// --fake-httplib-defaults leaves the fake server's sockets as httplib makes
// them (Nagle on, backlog 5; tcp_nodelay_shim.cc says why the bench gives
// them llama-server's settings); --client-nodelay gives
// the in-process RULER preparation's client TCP_NODELAY (the proposed fix).
//
// The data folder is --data-dir, else $EVALRUN_BENCH_DATA, else
// ../shared/datasets beside the checkout ($EVALRUN_TEST_SHARED/datasets).
// Exit 0 when every figure was measured (whatever PASS/MISS says), 1 when
// something could not be measured, 2 on a bad flag.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "bench/tcp_nodelay_shim.h"
#include "evals/base/build_version.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

#ifndef EVALRUN_BENCH_BUILD_TYPE
#define EVALRUN_BENCH_BUILD_TYPE "unknown"
#endif

namespace evalrun::bench {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream in(s);
  std::string x;
  while (std::getline(in, x, ','))
    if (!x.empty()) v.push_back(x);
  return v;
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "evalrun-bench: %s\n"
               "usage: evalrun-bench [--only occupancy,ruler,scoring,probe] [--data-dir DIR] [--requests N]\n"
               "                     [--service-ms MS] [--slots 1,4,16] [--ruler-tasks a,b,...]\n"
               "                     [--ruler-samples N] [--tokenize-delay-ms MS] [--quiet-below LOAD]\n"
               "                     [--only ruler-full [--ruler-full-samples 500]] [--only livecodebench] [--only stream]\n"
               "                     [--json FILE] [--keep] [--verbose] [--evalrun PATH]\n"
               "                     [--fake-httplib-defaults] [--client-nodelay]\n",
               why);
  return 2;
}

// Waits (up to 10 minutes) until the 1-minute load average is below `limit`.
void WaitForQuiet(double limit) {
  for (int i = 0; i < 60; ++i) {
    const double now = std::atof(LoadAverage().c_str());
    if (now < limit) return;
    std::fprintf(stderr, "bench: load average %.2f >= %.2f; waiting for a quieter machine (%d s)\n", now, limit,
                 (60 - i) * 10);
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }
  std::fprintf(stderr, "bench: still busy after 10 minutes; measuring anyway\n");
}

// What the command line asks beside the BenchOptions.
struct Flags {
  std::vector<std::string> only = {"occupancy", "ruler", "scoring", "probe"};
  std::string json_path;
  bool keep = false;
  double quiet_below = 0;
};

// Reads the flags into *o and *f; "" or why they are bad.
std::string ParseFlags(int argc, char** argv, BenchOptions* o, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--keep") f->keep = true;
    else if (a == "--verbose") o->verbose = true;
    else if (a == "--fake-httplib-defaults") SetServerSocketsLikeLlamaServer(false);
    else if (a == "--client-nodelay") o->client_nodelay = true;
    else if (!value(&v)) return "unknown flag or missing value: " + a;
    else if (a == "--only") f->only = SplitCommas(v);
    else if (a == "--data-dir") o->data_dir = v;
    else if (a == "--evalrun") o->evalrun_binary = v;
    else if (a == "--requests") o->requests = std::atoi(v.c_str());
    else if (a == "--service-ms") o->service_ms = std::atoi(v.c_str());
    else if (a == "--tokenize-delay-ms") o->tokenize_delay_ms = std::atoi(v.c_str());
    else if (a == "--ruler-samples") o->ruler_samples_per_task = std::atoi(v.c_str());
    else if (a == "--ruler-tasks") o->ruler_tasks = SplitCommas(v);
    else if (a == "--ruler-full-samples") o->ruler_full_samples = std::atoi(v.c_str());
    else if (a == "--quiet-below") f->quiet_below = std::atof(v.c_str());
    else if (a == "--json") f->json_path = v;
    else if (a == "--slots") {
      o->slot_counts.clear();
      for (const auto& s : SplitCommas(v)) o->slot_counts.push_back(std::atoi(s.c_str()));
    } else {
      return "unknown flag: " + a;
    }
  }
  return "";
}

// Checks the options, finds the data folder and makes the temp folder; ""
// or what is wrong.
std::string CheckAndPrepare(const Flags& f, BenchOptions* o) {
  if (o->requests < 1 || o->service_ms < 1 || o->ruler_samples_per_task < 1 || o->slot_counts.empty() ||
      o->ruler_tasks.empty())
    return "--requests, --service-ms, --ruler-samples must be >= 1; --slots and --ruler-tasks non-empty";
  for (const auto& s : f.only)
    if (s != "occupancy" && s != "ruler" && s != "scoring" && s != "ruler-full" && s != "probe" && s != "client" &&
        s != "livecodebench" && s != "stream")
      return "--only: unknown section " + s;
  if (o->data_dir.empty()) o->data_dir = testing::DatasetsDir();
  if (!std::filesystem::is_directory(o->data_dir))
    return "data folder " + o->data_dir + " not found (--data-dir or $EVALRUN_BENCH_DATA)";
  if (access(o->evalrun_binary.c_str(), X_OK) != 0)
    return "evalrun binary " + o->evalrun_binary + " is not there; build the evalrun target";
  o->work_dir = testing::MakeTempDir("evalrun-bench");
  if (o->work_dir.empty()) return "cannot make a temp folder";
  return "";
}

// Runs the sections in `only`'s order into *figures; false when some figure
// could not be measured.
bool RunSections(const BenchOptions& o, const std::vector<std::string>& only, std::vector<Figure>* figures) {
  bool ok = true;
  for (const auto& s : only) {
    std::vector<Figure> f;
    if (s == "occupancy") ok &= RunOccupancySection(o, &f);
    if (s == "ruler") ok &= RunRulerSection(o, &f);
    if (s == "scoring") ok &= RunScoringSection(o, &f);
    if (s == "ruler-full") ok &= RunRulerFullSection(o, &f);
    if (s == "probe") ok &= RunProbeSection(o, &f);
    if (s == "client") ok &= RunClientSection(o, &f);
    if (s == "livecodebench") ok &= RunLiveCodeBenchSection(o, &f);
    if (s == "stream") ok &= RunStreamSection(o, &f);
    if (o.verbose) PrintFigures(f, stderr);
    figures->insert(figures->end(), f.begin(), f.end());
  }
  return ok;
}

// The header, the table and the MISS count on stdout.
void PrintReport(const BenchOptions& o, const std::vector<Figure>& figures, const std::string& started_load,
                 bool ok) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::printf("evalrun-bench: %s build, git %s, host %s, %ld CPUs, load average %s at start\n",
              EVALRUN_BENCH_BUILD_TYPE, EvalrunGitSha(), host, sysconf(_SC_NPROCESSORS_ONLN), started_load.c_str());
  std::printf("evalrun: %s\ndata: %s\n", o.evalrun_binary.c_str(), o.data_dir.c_str());
  std::printf("occupancy: the real evalrun binary, MMLU-Pro, %d requests x %d ms service per slot count\n\n",
              o.requests, o.service_ms);
  PrintFigures(figures, stdout);
  int miss = 0;
  for (const auto& f : figures) miss += f.verdict == Verdict::kMiss;
  std::printf("\n%d MISS%s\n", miss, ok ? "" : " (some figures could not be measured; see stderr)");
}

// The figures as JSON (--json).
void WriteJson(const std::string& path, const std::vector<Figure>& figures) {
  nlohmann::json j;
  j["build_type"] = EVALRUN_BENCH_BUILD_TYPE;
  j["git_sha"] = EvalrunGitSha();
  j["cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
  j["figures"] = nlohmann::json::array();
  for (const auto& f : figures) {
    const char* v = f.verdict == Verdict::kPass ? "PASS" : f.verdict == Verdict::kMiss ? "MISS" : "";
    j["figures"].push_back({{"section", f.section}, {"name", f.name}, {"value", f.value}, {"target", f.target},
                            {"verdict", v}});
  }
  testing::WriteFile(path, j.dump(2) + "\n");
}

int Main(int argc, char** argv) {
  BenchOptions o;
  o.evalrun_binary = testing::EvalrunBinary();
  o.source_dir = testing::SourceDir();
  if (const char* d = std::getenv("EVALRUN_BENCH_DATA"); d && *d) o.data_dir = d;
  Flags flags;
  if (const std::string why = ParseFlags(argc, argv, &o, &flags); !why.empty()) return Usage(why.c_str());
  if (const std::string why = CheckAndPrepare(flags, &o); !why.empty()) return Usage(why.c_str());
  if (flags.quiet_below > 0) WaitForQuiet(flags.quiet_below);

  std::vector<Figure> figures;
  const std::string started_load = LoadAverage();
  const bool ok = RunSections(o, flags.only, &figures);
  PrintReport(o, figures, started_load, ok);
  if (!flags.json_path.empty()) WriteJson(flags.json_path, figures);
  if (flags.keep) std::fprintf(stderr, "bench: kept %s\n", o.work_dir.c_str());
  else testing::RemoveTree(o.work_dir);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace evalrun::bench

int main(int argc, char** argv) { return evalrun::bench::Main(argc, argv); }
