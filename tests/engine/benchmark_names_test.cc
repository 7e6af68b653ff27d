// Outside its own folders and the table, no source
// file of the product names a single benchmark. For every row of the
// benchmark table (evals/benchmarks/table.h) its name, its parts' names and
// its title are sought in the code and comments (tests/support/
// source_names.h: names that are English words only as whole literals) of
// evals/, scorers/ and datasets/; a hit is allowed only
// in the benchmark's own folders (evals/benchmarks/<name>/, scorers/<name>/)
// or in the folder of a benchmark whose row declares it (`uses`,
// `datasets`). The example benchmark of the tests (tests/benchmarks/<name>/
// with a row of its own) is sought in the whole tree, tests included.
//
// tests/, bench/ and fuzz/ drive or measure named benchmarks on purpose;
// they are not the product and are not scanned for the product's rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "evals/benchmarks/table.h"
#include "tests/support/run_binary.h"
#include "tests/support/source_names.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

// Words that are names of rows and also English: sought only as a whole
// literal ("fit"), never in prose or identifiers (shrink_to_fit).
const std::set<std::string> kEnglish = {"fit", "probe", "speed", "thinking"};

// A word a file may use for something else than the benchmark, and why.
struct Homonym {
  const char* file;
  const char* name;
  const char* why;
};
const Homonym kHomonyms[] = {
    {"evals/run/request_settings.h", "thinking",
     "kThinkingKey: the card's request setting (chat_template_kwargs.enable_thinking), not the thinking test"},
    {"evals/benchmarks/ruler/ruler_tasks.h", "fit",
     "kRulerFitProfile: parts.ruler.profile \"fit\" (how RULER sizes prompts), not the fit part"},
    {"evals/benchmarks/livecodebench/livecodebench.cc", "probe",
     "results.json parts.livecodebench.info.sandbox.probe: the sandbox levels tried, not the logprob probe"},
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsSource(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cc" || ext == ".h" || ext == ".inc";
}

// Every source file under `dirs`, relative to the project.
std::vector<std::string> SourceFiles(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  const fs::path root(SourceDir());
  for (const std::string& d : dirs)
    for (const auto& e : fs::recursive_directory_iterator(root / d))
      if (e.is_regular_file() && IsSource(e.path())) out.push_back(fs::relative(e.path(), root).string());
  return out;
}

// "evals/benchmarks/ruler/x.cc" and "scorers/ruler/y.h": "ruler"; else "".
std::string OwnerFolder(const std::string& rel) {
  for (const std::string prefix : {"evals/benchmarks/", "scorers/", "tests/benchmarks/"}) {
    if (rel.rfind(prefix, 0) != 0) continue;
    const size_t slash = rel.find('/', prefix.size());
    if (slash != std::string::npos) return rel.substr(prefix.size(), slash - prefix.size());
  }
  return "";
}

// What each row's folder may name: itself, its parts, what it uses and reads.
std::map<std::string, std::set<std::string>> MayName() {
  std::map<std::string, std::set<std::string>> out;
  for (const Benchmark* b : Benchmarks()) {
    std::set<std::string>& s = out[b->name];
    s.insert(b->name);
    for (const PartDefinition& d : b->parts) s.insert(d.name);
    for (const std::string& u : b->uses) {
      s.insert(u);
      if (const Benchmark* used = FindBenchmark(u))
        for (const PartDefinition& d : used->parts) s.insert(d.name);
    }
    for (const std::string& d : b->datasets) s.insert(d);
  }
  return out;
}

// The names sought for the table's rows, each with the benchmark it names.
std::vector<SoughtName> Sought(std::map<std::string, std::string>* owner) {
  std::vector<SoughtName> out;
  auto add = [&](const std::string& word, const std::string& bench) {
    if (owner->count(word)) return;
    (*owner)[word] = bench;
    const bool english = kEnglish.count(word) > 0;
    out.push_back({word, english, !english, !english});
  };
  for (const Benchmark* b : Benchmarks()) {
    add(b->name, b->name);
    for (const PartDefinition& d : b->parts) add(d.name, b->name);
    const std::string title = Lower(b->title);
    if (title.find(' ') == std::string::npos && !kEnglish.count(title)) add(title, b->name);
  }
  return out;
}

bool Allowed(const NameHit& h, const std::string& bench, const std::map<std::string, std::set<std::string>>& may) {
  if (h.file.rfind("evals/benchmarks/table", 0) == 0) return true;  // the table itself (its examples)
  for (const Homonym& x : kHomonyms)
    if (h.file == x.file && h.name == x.name) return true;
  const std::string folder = OwnerFolder(h.file);
  if (folder.empty()) return false;
  auto it = may.find(folder);
  return it != may.end() && (it->second.count(h.name) || it->second.count(bench));
}

std::string Describe(const NameHit& h, const std::string& bench) {
  return h.file + ":" + std::to_string(h.line) + ": " + h.where + " names benchmark " + bench;
}

TEST(BenchmarkNames, NoProductFileNamesABenchmarkOutsideItsFolders) {
  std::map<std::string, std::string> bench_of;
  const std::vector<SoughtName> sought = Sought(&bench_of);
  ASSERT_GE(sought.size(), 9u) << "the table should hold the product's benchmarks";
  const auto may = MayName();
  std::vector<std::string> bad;
  int files = 0;
  for (const std::string& rel : SourceFiles({"evals", "scorers", "datasets"})) {
    ++files;
    for (const NameHit& h : FindNames(rel, ReadFile(SourceDir() + "/" + rel), sought))
      if (!Allowed(h, bench_of.at(h.name), may)) bad.push_back(Describe(h, bench_of.at(h.name)));
  }
  EXPECT_GT(files, 200);
  std::string all;
  for (const auto& b : bad) all += "\n  " + b;
  EXPECT_TRUE(bad.empty()) << bad.size() << " names outside their folders (move the code into the "
                           << "benchmark's folder, or reach it through the table):" << all;
}

// The tests' example benchmarks: a folder tests/benchmarks/<name>/ with a
// row (EVALRUN_BENCHMARK(Benchmark{.name = "<name>", ...})).
std::vector<std::string> ExampleBenchmarks() {
  std::vector<std::string> out;
  const std::regex row(R"re(EVALRUN_BENCHMARK\(Benchmark\{\s*\.name\s*=\s*"([a-z0-9_]+)")re");
  for (const std::string& rel : SourceFiles({"tests/benchmarks"})) {
    const std::string text = ReadFile(SourceDir() + "/" + rel);
    for (std::sregex_iterator m(text.begin(), text.end(), row), end; m != end; ++m) out.push_back((*m)[1]);
  }
  return out;
}

TEST(BenchmarkNames, TheExampleBenchmarkIsNamedOnlyInItsFolder) {
  const std::vector<std::string> examples = ExampleBenchmarks();
  ASSERT_FALSE(examples.empty()) << "no example benchmark under tests/benchmarks/";
  for (const std::string& name : examples) {
    // Its name may be an English word in prose (shouted in upper case): as
    // a whole literal and within identifiers.
    const std::vector<SoughtName> sought = {{name, true, true, true}};
    std::vector<std::string> bad;
    for (const std::string& rel : SourceFiles({"evals", "scorers", "datasets", "tests", "bench", "fuzz"})) {
      if (rel.rfind("tests/benchmarks/" + name + "/", 0) == 0) continue;
      for (const NameHit& h : FindNames(rel, ReadFile(SourceDir() + "/" + rel), sought))
        bad.push_back(Describe(h, name));
    }
    std::string all;
    for (const auto& b : bad) all += "\n  " + b;
    EXPECT_TRUE(bad.empty()) << name << " is named outside tests/benchmarks/" << name << "/:" << all;
  }
}

// ---- The scanner itself ----

TEST(SourceNames, FindsLiteralsIdentifiersAndComments) {
  const std::string src =
      "// ruler in a comment\n"
      "/* a block\n with RULER */ auto t = RulerTasks();\n"
      "const char* k = \"parts.ruler\";\n"
      "#include \"evals/benchmarks/ruler/ruler.h\"\n"
      "const char* fine = \"controller\"; int rulers_x = 0;  // rulers\n";
  const std::vector<NameHit> hits = FindNames("x.cc", src, {{"ruler"}});
  ASSERT_EQ(hits.size(), 6u);
  EXPECT_EQ(hits[0].line, 1);
  EXPECT_EQ(hits[0].where, "comment \"// ruler in a comment\"");
  EXPECT_EQ(hits[1].line, 3);
  EXPECT_EQ(hits[1].where, "comment \" with RULER */\"");
  EXPECT_EQ(hits[2].line, 3);
  EXPECT_EQ(hits[2].where, "identifier RulerTasks");
  EXPECT_EQ(hits[3].line, 4);
  EXPECT_EQ(hits[3].where, "literal \"parts.ruler\"");
  EXPECT_EQ(hits[4].line, 5);
  // Within an identifier, as RulerTasks; "rulers" in prose is another word.
  EXPECT_EQ(hits[5].where, "identifier rulers_x");
}

TEST(SourceNames, AnEnglishNameIsSoughtOnlyAsAWholeLiteral) {
  const std::string src =
      "v.shrink_to_fit(); Status st = Err(\"the prompt does not fit\");  // fit it\n"
      "const char* part = \"fit\";\n";
  const std::vector<NameHit> hits = FindNames("x.cc", src, {{"fit", true, false, false}});
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].line, 2);
}

TEST(SourceNames, RawStringsCharactersAndDigitSeparators) {
  const std::string src =
      "auto r = R\"x(a \"quoted\" gpqa)x\"; char q = '\"'; long n = 1'000'000;\n"
      "auto s = \"gpqa\\\" still\"; // gpqa\n"
      "int gpqa_rows = 0;\n";
  const std::vector<NameHit> hits = FindNames("x.cc", src, {{"gpqa", false, true, false}});
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].where, "literal \"a \"quoted\" gpqa\"");
  EXPECT_EQ(hits[1].line, 2);
  EXPECT_EQ(hits[2].line, 3);
}

}  // namespace
}  // namespace evalrun::testing
