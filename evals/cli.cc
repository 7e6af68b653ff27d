#include "evals/cli.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "datasets/fetch.h"
#include "evals/run/card_tasks.h"
#include "evals/tasks/file_benchmark.h"
#include "evals/base/build_version.h"
#include "evals/base/cancel.h"
#include "evals/base/comma_list.h"
#include "evals/benchmarks/table_list.h"
#include "evals/publish/compare.h"
#include "evals/publish/merge.h"
#include "evals/publish/report.h"
#include "evals/server/engine.h"
#include "evals/base/exit_codes.h"
#include "evals/base/near_miss.h"
#include "evals/run/part_registry.h"
#include "evals/run/runner.h"
#include "evals/base/thread_name.h"

namespace evalrun {
namespace {

// Ctrl-C / SIGTERM: the first asks the run to stop sending and to keep what
// is answered; a second exits at once (answers already written are safe:
// each line was fsynced before it counted).
class SignalWatcher {
 public:
  explicit SignalWatcher(CancelToken* cancel) : cancel_(cancel) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);  // inherited by every thread started later
    thread_ = std::thread([this] {
      NameThisThread("evalrun-signals");
      int count = 0;
      for (;;) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0) continue;
        if (sig == SIGUSR2) return;  // our own wake-up at exit
        if (++count == 1) {
          const std::string msg = std::string("\nevalrun: stopping: ") + cancel_->stop_note() +
                                  " (Ctrl-C again to quit at once)\n";
          (void)!write(STDERR_FILENO, msg.data(), msg.size());
          cancel_->Cancel();
        } else {
          const char msg[] = "\nevalrun: quit; answers written so far are kept\n";
          (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
          TerminateManagedEngines(SIGKILL);  // never leave an engine behind
          _exit(kExitInterrupted);
        }
      }
    });
  }
  ~SignalWatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }

 private:
  CancelToken* cancel_;
  sigset_t set_;
  std::thread thread_;
};

// Integer flags: "--limit: expected an integer >= 1, got \"abc\"" (CLI11's
// own range check prints the double's full range).
CLI::Validator IntegerAtLeast(long long min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long x = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || x < min || x > INT32_MAX)
          return "expected an integer >= " + std::to_string(min) + ", got \"" + v + "\"";
        return "";
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator NumberIn(double lo, double hi, const std::string& range) {
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || errno != 0 || !(x >= lo && x <= hi))
          return "expected a number in " + range + ", got \"" + v + "\"";
        return "";
      },
      range);
}

// Every long option name of `app` ("--parts"), for near misses.
std::vector<std::string> LongOptions(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

// An argument nobody took: "unknown option --prats (did you mean --parts?)",
// suggested from the options of the command that was being parsed.
int ReportExtras(const CLI::App& app, const std::vector<std::string>& extras) {
  const CLI::App* cmd = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : cmd->get_subcommands())
      if (sub->parsed()) {
        cmd = sub;
        deeper = true;
        break;
      }
  }
  const std::string prefix = cmd == &app ? std::string("evalrun") : "evalrun " + cmd->get_name();
  for (const std::string& a : extras) {
    if (a.rfind("-", 0) != 0) continue;
    const std::string flag = a.substr(0, a.find('='));
    std::string near = NearestName(flag, LongOptions(cmd));
    std::fprintf(stderr, "%s: unknown option %s%s\nRun with --help for more information.\n", prefix.c_str(),
                 flag.c_str(), near.empty() ? "" : (" (did you mean " + near + "?)").c_str());
    return kExitBadInput;
  }
  std::string list;
  for (const std::string& a : extras) list += (list.empty() ? "" : " ") + a;
  std::fprintf(stderr, "%s: unexpected argument%s: %s\nRun with --help for more information.\n", prefix.c_str(),
               extras.size() > 1 ? "s" : "", list.c_str());
  return kExitBadInput;
}

constexpr const char* kRunExamples = R"(
Examples:
  evalrun --card cards/local.json
  evalrun run --card cards/local.json                # the same: "run" names the default command
  evalrun --list                                     # the benchmarks: parts, data, scorers
  evalrun --card cards/clover-q4_0.json --parts <part>
  evalrun --card cards/local.json --parts <part> --limit 20 --job smoke
  evalrun --card cards/local.json --job smoke        # continues job "smoke"
  evalrun --card cards/local.json --shard 2/4 --job big-2   # shard 2 of 4; see evalrun merge --help

Exit codes: 0 ok, 1 bad input (nothing was asked), 2 server unreachable,
3 incomplete (failed requests above the card's max_failed), 5 the run's files
could not be written (disk full; answers on disk kept), 130 interrupted.
)";

constexpr const char* kScoreExamples = R"(
Examples:
  evalrun score --card cards/local.json --part <part> --responses answers.jsonl
  evalrun score --card cards/local.json --part <part> --responses official.jsonl \
                --input input_data.jsonl           # the dataset file they were made from

Responses are JSON lines: {"id": <question id>, "response": "...",
"finish_reason": "stop"|"length" (optional), "reasoning": "..." (optional)}.
)";

constexpr const char* kCompareExamples = R"(
Examples:
  evalrun compare runs/qwen3-b5000 runs/qwen3-b5100
  evalrun compare runs/old runs/new --parts <part>,<part> --min-delta 1
  evalrun compare runs/old runs/new --json > compare.json
  evalrun compare runs/old runs/new --noise runs/old runs/old/repeat-2
  evalrun compare runs/old runs/new --noise runs/old runs/old/repeat-2 --html compare.html

Answers are paired by question id, part by part. For each part and each of
its groups (category; a part's own, e.g. task @ length): the scores of A and B, delta B - A,
the discordant pairs, the exact McNemar p-value, a paired-bootstrap 95 %
interval (2000 resamples, seed 12345) and the questions that flipped. Runs on
different question sets are compared on the ids both answered.

--noise A A2 takes an A/A pair (one build run twice on the same items) and
states per part the smallest difference the comparison can detect:
MDE = (z_{1-alpha/2} + z_{0.8}) * sqrt(d / n), d = the A/A flip rate, n = the
items compared (alpha 0.05: 2.8016 * sqrt(d / n)); a headline difference below
it is labelled "within noise". No flips: the floor is below 1/n.

A part of the logprobs kind is compared position by position: KLD(A||B) over
the union of both top-K sets with each side's remaining mass as one bucket
("rest"), top-1 agreement, |delta logprob| of A's top token, and the worst
positions; a regression when a threshold is exceeded:
  evalrun compare runs/b10470 runs/b10480 --parts <part> --max-kld-p99 0.001 --min-top1 0.99

Exit codes: 0 no significant regression; 4 a significant regression (B below
A in a part's headline score with p < alpha and |delta| >= --min-delta, or a
logprobs threshold exceeded); 1 bad input (missing folder, not a run,
unreadable file, logprobs runs of different texts, positions or tokenizations).
)";

constexpr const char* kReportExamples = R"(
Examples:
  evalrun report runs/qwen3-b5100
  evalrun report runs/qwen3-b5100 --max-text 1000

Writes RUN/report.md (tables ready to publish) and RUN/report.html (one
self-contained page: charts and a sample browser; opens without network).
Exit codes: 0 ok, 1 bad input.
)";

constexpr const char* kMergeExamples = R"(
Examples:
  evalrun --card cards/local.json --shard 1/3 --job big-1   # on server / machine / array task 1
  evalrun --card cards/local.json --shard 2/3 --job big-2   # ... 2
  evalrun --card cards/local.json --shard 3/3 --job big-3   # ... 3
  evalrun merge runs/big runs/big-1 runs/big-2 runs/big-3
  evalrun merge runs/big-partial runs/big-1 runs/big-3 --partial

--shard I/N (I from 1 to N) asks the items whose hash of (run key, question
id) falls to shard I, so the N shards are disjoint and together the whole
selection on every machine. merge checks that the shards share the run key,
that none is given twice and no id is answered twice, and that every item
is answered; it then writes OUT as one run's job folder (results.json from
the parts' own aggregates over the merged answers), which report and
compare read as any run. An incomplete set is an error naming the shards,
part and ids missing, unless --partial (results.json then lists them).
--shard auto takes I/N from a Slurm job array task or a Kubernetes Indexed
Job pod (docs/shards.md).

Exit codes: 0 merged, 1 bad input (nothing written).
)";

constexpr const char* kDatasetsExamples = R"(
Examples:
  evalrun datasets fetch                      # every benchmark's required files
  evalrun datasets fetch <benchmark>          # its datasets (evalrun --list), and what they need
  evalrun datasets fetch <dataset> <group>    # a dataset, an optional group (evalrun datasets list)
  evalrun datasets fetch --mirror http://mirror.lan/evalrun-data
  evalrun datasets list --data-dir /data/evalrun

Files are checked against the sha256 in their manifests before they are
installed; a file that fails is kept as <file>.bad. Interrupted downloads
resume (<file>.part). HF_TOKEN, if set, is sent to huggingface.co only.
A mirror serves each file at <mirror>/<path> (the paths `datasets list`
shows): any static HTTP server of a data dir's copy, e.g. python3 -m http.server.

Exit codes: 0 ok, 1 unknown name, local I/O error or a file that failed its
check, 2 a source could not be downloaded (run again to resume).
)";

constexpr const char* kUnsafeExecHelp =
    "where no sandbox level isolates (no bubblewrap, user namespaces or seccomp filter), run model-written code "
    "(a part of the code kind) with resource limits alone, in a process group of its own; recorded in results.json "
    "(sandbox.level \"rlimits\")";
constexpr const char* kSandboxHelp =
    "the weakest sandbox level accepted for model-written code (a part of the code kind): namespaces, unshare, "
    "seccomp or rlimits; below it evalrun refuses before any request (default: the card's parts.<part>.sandbox, "
    "else any level that isolates)";

// The default command's options (`evalrun [run] --card ...`).
void AddRunOptions(CLI::App& app, RunOptions* run, std::string* parts, bool* list) {
  app.add_option("--card", run->card_path, "the card (JSON) describing the setup; see cards/README.md")
      ->check(CLI::ExistingFile);
  std::string known;
  for (const auto& n : KnownPartNames()) known += (known.empty() ? "" : ", ") + n;
  app.add_option("--parts", *parts, "comma-separated parts to run (default: all the card's parts): " + known);
  app.add_option("--job", run->job, "job name (default: <card name>-<UTC time>); an existing job is resumed");
  app.add_option("--out", run->out_dir, "output folder (default: runs)");
  app.add_option("--data-dir", run->data_dir, "dataset folder (default: $EVALRUN_DATA, else ~/.local/share/evalrun)");
  app.add_option("--base-url", run->base_url, "override the card's server.base_url (checked as the card's is)");
  app.add_option("--limit", run->limit, "at most N questions per part (a smoke run)")->check(IntegerAtLeast(1));
  app.add_option("--repeat", run->repeat,
                 "2: run every part twice into the job (the second in <job>/repeat-2) and report the flip rate "
                 "between the repeats (default: the card's repeat, 1)")
      ->check(CLI::Range(1, 2));
  app.add_flag("--unsafe-exec", run->unsafe_exec,
               kUnsafeExecHelp);
  app.add_option("--sandbox", run->sandbox_min, kSandboxHelp)
      ->check(CLI::IsMember({"namespaces", "unshare", "seccomp", "rlimits"}));
  app.add_flag("--force-resume", run->force_resume, "resume a job even though its card, data or server changed");
  app.add_option("--shard", run->shard,
                 "I/N: ask only shard I (1-based) of N of every part's selection, by a hash of the run key and "
                 "the question id; join the N job folders with `evalrun merge`. auto: I/N from a Slurm job "
                 "array's SLURM_ARRAY_TASK_ID (1-N) or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX + 1, N from "
                 "EVALRUN_SHARD_COUNT or the array's bounds (docs/shards.md)");
  // Last: a near miss between two options goes to the one declared first (--limt: --limit).
  app.add_flag("--list", *list, "print the benchmark table: each benchmark's parts, data, scorer and page");
}

CLI::App* AddScoreCommand(CLI::App& app, ScoreOptions* score) {
  CLI::App* sc = app.add_subcommand("score", "re-score recorded answers without a server");
  sc->footer(kScoreExamples);
  sc->add_option("--card", score->card_path, "the card (part settings: prompt, extract, seed)")->required()
      ->check(CLI::ExistingFile);
  sc->add_option("--part", score->part, "the part the answers belong to")->required();
  sc->add_option("--responses", score->responses_path, "JSONL of recorded answers")->required()
      ->check(CLI::ExistingFile);
  sc->add_option("--input", score->input_path, "the dataset file the answers were made from (default: the data dir's)")
      ->check(CLI::ExistingFile);
  sc->add_option("--job", score->job, "job name (default: <card name>-score-<UTC time>)");
  sc->add_option("--out", score->out_dir, "output folder (default: runs)");
  sc->add_option("--data-dir", score->data_dir, "dataset folder");
  sc->add_flag("--unsafe-exec", score->unsafe_exec,
               kUnsafeExecHelp);
  sc->add_option("--sandbox", score->sandbox_min, kSandboxHelp)
      ->check(CLI::IsMember({"namespaces", "unshare", "seccomp", "rlimits"}));
  return sc;
}

// compare's flags as given; Options() makes them CompareOptions.
struct CompareFlags {
  CompareOptions cmp;
  std::string parts;
  std::vector<std::string> noise;
  double max_kld_mean = -1, max_kld_p99 = -1, min_top1 = -1;  // < 0: not given

  CompareOptions Options() const {
    CompareOptions out = cmp;
    out.parts = SplitCommaList(parts);
    if (noise.size() == 2) {
      out.noise_a = noise[0];
      out.noise_a2 = noise[1];
    }
    if (max_kld_mean >= 0) out.max_kld_mean = max_kld_mean;
    if (max_kld_p99 >= 0) out.max_kld_p99 = max_kld_p99;
    if (min_top1 >= 0) out.min_top1 = min_top1;
    return out;
  }
};

CLI::App* AddCompareCommand(CLI::App& app, CompareFlags* f) {
  CLI::App* cm = app.add_subcommand("compare", "did quality move? paired statistics between two run folders");
  cm->footer(kCompareExamples);
  cm->add_option("run_a", f->cmp.run_a, "the baseline run folder (runs/<job>)")->required();
  cm->add_option("run_b", f->cmp.run_b, "the run checked against it")->required();
  cm->add_option("--parts", f->parts, "comma-separated parts to compare (default: every part both runs have)");
  cm->add_option("--alpha", f->cmp.alpha, "significance level of McNemar's test (default 0.05)")
      ->check(NumberIn(0.0, 1.0, "[0, 1]"));
  cm->add_option("--min-delta", f->cmp.min_delta,
                 "smallest drop, in percentage points, that counts as a regression (default 0)")
      ->check(NumberIn(0.0, 100.0, "[0, 100]"));
  cm->add_option("--noise", f->noise,
                 "an A/A pair (the same build run twice: A A2, e.g. runs/<job> runs/<job>/repeat-2) that measures "
                 "each part's noise floor")
      ->expected(2);
  cm->add_flag("--json", f->cmp.json, "print JSON (schema evalrun.compare/1, docs/results-schema.md) instead of Markdown");
  cm->add_option("--html", f->cmp.html_path,
                 "also write the comparison as one self-contained HTML page (charts of the deltas and of a logprobs "
                 "part's per-position KLD, the flipped items, the noise floor) to this file");
  cm->add_option("--max-kld-mean", f->max_kld_mean, "logprobs parts: a regression when the mean KLD(A||B) is above "
                                                    "this (default: the card's parts.<part>.max_kld_mean)")
      ->check(NumberIn(0.0, 1e9, "[0, 1e9]"));
  cm->add_option("--max-kld-p99", f->max_kld_p99, "logprobs parts: a regression when the 99th percentile of KLD(A||B) "
                                                  "is above this (default: the card's parts.<part>.max_kld_p99)")
      ->check(NumberIn(0.0, 1e9, "[0, 1e9]"));
  cm->add_option("--min-top1", f->min_top1, "logprobs parts: a regression when the share of positions with the "
                                            "same top token is below this, 0..1 (default: the card's parts.<part>.min_top1)")
      ->check(NumberIn(0.0, 1.0, "[0, 1]"));
  return cm;
}

CLI::App* AddReportCommand(CLI::App& app, ReportOptions* rep) {
  CLI::App* rp = app.add_subcommand("report", "write report.md and a self-contained report.html into a run folder");
  rp->footer(kReportExamples);
  rp->add_option("run", rep->run_dir, "the run folder (runs/<job>)")->required();
  rp->add_option("--max-text", rep->max_text_chars,
                 "bytes of each response kept in the page's sample browser (default 4000)")
      ->check(IntegerAtLeast(0));
  return rp;
}

CLI::App* AddMergeCommand(CLI::App& app, MergeOptions* merge) {
  CLI::App* mg = app.add_subcommand("merge", "join the job folders of a run's shards (--shard I/N) into one");
  mg->footer(kMergeExamples);
  mg->add_option("out", merge->out_dir, "the merged job folder to write (new, or an empty folder)")->required();
  mg->add_option("shards", merge->shard_dirs, "the shards' job folders (runs/<job>)")->required()->expected(1, -1);
  mg->add_flag("--partial", merge->partial, "merge an incomplete set; results.json names the absent items");
  return mg;
}

// `datasets fetch` and `datasets list`.
std::pair<CLI::App*, CLI::App*> AddDatasetsCommands(CLI::App& app, FetchOptions* fetch, ListOptions* list) {
  CLI::App* ds = app.add_subcommand("datasets", "get the benchmark data (fetch) and check it (list)");
  ds->footer(kDatasetsExamples);
  ds->require_subcommand(1);
  CLI::App* dfetch = ds->add_subcommand("fetch", "download datasets from their public sources, checked by sha256");
  dfetch->footer(kDatasetsExamples);
  // The manifests are read only when the help is printed, not at every start.
  dfetch->footer([] {
    std::string datasets;
    for (const Manifest& m : AllManifests()) datasets += (datasets.empty() ? "" : ", ") + m.name;
    return "\nDatasets: " + datasets;
  });
  dfetch->add_option("names", fetch->names,
                     "what to fetch (default: every required file): a benchmark (its datasets, evalrun --list); a "
                     "dataset (below); an optional group (evalrun datasets list); a file path; all");
  dfetch->add_option("--data-dir", fetch->data_dir,
                     "dataset folder (default: $EVALRUN_DATA, else $XDG_DATA_HOME/evalrun, else ~/.local/share/evalrun)");
  dfetch->add_option("--mirror", fetch->mirror,
                     "take every file from this mirror (http or https URL) instead of the sources "
                     "(default: $EVALRUN_DATASETS_MIRROR)");
  CLI::App* dlist = ds->add_subcommand("list", "show every dataset file: ok, missing, corrupt or partial, and its size");
  dlist->add_option("--data-dir", list->data_dir, "dataset folder (default: as for fetch)");
  return {dfetch, dlist};
}

// `datasets fetch` with each benchmark named replaced by its datasets.
int FetchNamed(FetchOptions fetch) {
  const std::vector<std::string> asked = fetch.names;
  fetch.names = BenchmarkDatasets(asked);
  if (!asked.empty() && fetch.names.empty()) {
    std::string names;
    for (const std::string& n : asked) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stdout, "nothing to fetch: %s reads no dataset (evalrun --list)\n", names.c_str());
    return kExitOk;
  }
  return DatasetsFetch(fetch, stdout, stderr);
}

// Parses the command line into the options `app` was given; an exit code
// when that ends the program (help, version, bad input), else nullopt.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  // "evalrun run ..." names the default command explicitly.
  std::vector<const char*> args(argv, argv + argc);
  if (args.size() > 1 && std::string(args[1]) == "run") args.erase(args.begin() + 1);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      // An unknown option first: a typo often also leaves a required one
      // missing ("--prat <name>" for "--part <name>").
      const std::vector<std::string> extras = app.remaining(true);
      bool unknown_option = false;
      for (const std::string& a : extras) unknown_option |= a.rfind("-", 0) == 0;
      if (unknown_option || (!extras.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr))
        return ReportExtras(app, extras);
    }
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace

int RunCli(int argc, char** argv) {
  // The built-in task files are rows of the table like the C++ ones; the
  // user's folders (--tasks, $EVALRUN_TASKS, the card's `tasks`) join them
  // once the command line is read.
  if (Status st = LoadBuiltinTasks(); !st.ok()) {
    std::fprintf(stderr, "evalrun: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  SetTaskFolderLoader(LoadTaskFolder);
  CLI::App app{"evalrun: quality evaluation of an LLM inference server, as one card describes it", "evalrun"};
  app.footer(kRunExamples);
  std::vector<std::string> task_dirs;
  app.set_version_flag("--version", std::string(EvalrunVersion()) + " (" + EvalrunGitSha() + ")");
  RunOptions run;
  std::string parts;
  bool list_benchmarks = false;
  AddRunOptions(app, &run, &parts, &list_benchmarks);
  ScoreOptions score;
  CLI::App* sc = AddScoreCommand(app, &score);
  CompareFlags cmp;
  CLI::App* cm = AddCompareCommand(app, &cmp);
  ReportOptions rep;
  CLI::App* rp = AddReportCommand(app, &rep);
  MergeOptions merge;
  CLI::App* mg = AddMergeCommand(app, &merge);
  FetchOptions fetch;
  ListOptions list;
  const auto [dfetch, dlist] = AddDatasetsCommands(app, &fetch, &list);
  for (CLI::App* a : {&app, sc, cm, rp, mg, dfetch, dlist})
    a->add_option("--tasks", task_dirs, "a folder of task files (docs/tasks.md), each a benchmark; repeatable; "
                                        "also $EVALRUN_TASKS (':'-separated) and the card's `tasks`")
        ->type_name("DIR")
        ->allow_extra_args(false);
  if (std::optional<int> code = ParseCommandLine(app, argc, argv)) return *code;
  if (Status st = LoadTasks(task_dirs); !st.ok()) {
    std::fprintf(stderr, "evalrun: %s\n", st.message().c_str());
    return kExitBadInput;
  }

  if (sc->parsed()) return ScoreJob(score, stdout, stderr);
  if (cm->parsed()) return CompareRuns(cmp.Options(), stdout, stderr);
  if (rp->parsed()) return ReportRun(rep, stdout, stderr);
  if (mg->parsed()) return MergeShards(merge, stdout, stderr);
  // No signal watcher: .part files make an interrupted fetch safe to resume.
  if (dfetch->parsed()) return FetchNamed(fetch);
  if (dlist->parsed()) return DatasetsList(list, stdout, stderr);
  if (list_benchmarks) {
    PrintBenchmarkTable(stdout);
    return kExitOk;
  }
  if (run.card_path.empty()) {
    std::fprintf(stderr, "evalrun: --card is required\n\n%s", app.help().c_str());
    return kExitBadInput;
  }
  run.parts = SplitCommaList(parts);
  CancelToken cancel;
  SignalWatcher watcher(&cancel);
  return RunJob(run, &cancel, stdout, stderr);
}

}  // namespace evalrun
