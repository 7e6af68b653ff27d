// The README's quick start is what a new user types first: its
// install line must work as root on a fresh Debian 12 (no sudo there) and as
// a user with sudo, install what the test command needs (chromium for the
// report test), and .ci/run must run exactly the README's test command.
//
// The install line is run by bash with PATH holding only stand-ins (id,
// sudo, apt-get, cmake, ./build/evalrun) that log their arguments, so the
// test checks the shell logic of the real line without installing anything.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <set>
#include <sstream>

#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

std::string Source(const std::string& rel) { return ReadFile(SourceDir() + "/" + rel); }

// The first indented (code) line of `text` after `marker` that contains `needle`.
std::string CodeLineAfter(const std::string& text, const std::string& marker, const std::string& needle) {
  std::istringstream in(text.substr(text.find(marker) == std::string::npos ? text.size() : text.find(marker)));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("    ", 0) == 0 && line.find(needle) != std::string::npos) return line.substr(4);
  return "";
}

std::set<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::set<std::string> w;
  for (std::string x; in >> x;) w.insert(x);
  return w;
}

// The packages an "apt-get install" command names (options left out).
std::set<std::string> Packages(std::string cmd) {
  cmd = cmd.substr(cmd.find("apt-get install") + 15);
  cmd = cmd.substr(0, std::min(cmd.find("&&"), cmd.find(">/dev/null")));
  std::set<std::string> p;
  for (const auto& w : Words(cmd))
    if (w[0] != '-' && w != "\\") p.insert(w);
  return p;
}

void Script(const std::string& path, const std::string& body) {
  WriteText(path, "#!/bin/sh\n" + body);
  chmod(path.c_str(), 0755);
}

class ReadmeQuickStart : public ::testing::Test {
 protected:
  void SetUp() override {
    readme_ = Source("README.md");
    install_ = CodeLineAfter(readme_, "## Quick start", "apt-get install");
    ASSERT_FALSE(install_.empty()) << "no install line in the README's quick start";
  }

  // Runs the install line in a folder with stand-ins; returns their log.
  std::string RunInstallLine(bool as_root) {
    TempDir t("evalrun-readme");
    const std::string bin = t.path() + "/bin", log = t.path() + "/log";
    Script(bin + "/id", as_root ? "echo 0\n" : "echo 1000\n");
    if (!as_root) Script(bin + "/sudo", "echo \"sudo $*\" >> \"$LOG\"\nexec \"$@\"\n");
    Script(bin + "/apt-get", "echo \"apt-get $*\" >> \"$LOG\"\n");
    Script(bin + "/cmake", "echo \"cmake $*\" >> \"$LOG\"\n");
    Script(t.path() + "/src/build/evalrun", "echo \"evalrun $*\" >> \"$LOG\"\n");
    BinaryResult r = RunBinary({"/bin/bash", "-c", "cd " + t.path() + "/src && " + install_}, 30,
                               {"PATH=" + bin, "LOG=" + log});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ReadFile(log);
  }

  std::string readme_, install_;
};

TEST_F(ReadmeQuickStart, InstallLineWorksAsRootWithoutSudo) {
  EXPECT_NE(install_.rfind("sudo ", 0), 0u) << "a fresh Debian 12 root shell has no sudo (exit 127)";
  const std::string log = RunInstallLine(true);
  EXPECT_EQ(log.find("sudo"), std::string::npos) << log;
  EXPECT_NE(log.find("apt-get update\n"), std::string::npos) << log;
  EXPECT_NE(log.find("apt-get install -y"), std::string::npos) << log;
  EXPECT_NE(log.find("cmake --build build --target evalrun\n"), std::string::npos) << log;
  EXPECT_NE(log.find("evalrun datasets fetch\nevalrun --card cards/local.json\n"), std::string::npos) << log;
}

TEST_F(ReadmeQuickStart, InstallLineUsesSudoForAUser) {
  const std::string log = RunInstallLine(false);
  EXPECT_NE(log.find("sudo apt-get update\napt-get update\n"), std::string::npos) << log;
  EXPECT_NE(log.find("sudo apt-get install -y"), std::string::npos) << log;
  EXPECT_EQ(log.find("sudo cmake"), std::string::npos) << "only apt-get needs root: " << log;
}

TEST_F(ReadmeQuickStart, InstallLineHasWhatTheTestsNeedAndCiRunsTheReadmeTestCommand) {
  EXPECT_TRUE(Packages(install_).count("chromium")) << "the report test needs chromium: " << install_;
  const std::string ci = Source(".ci/run");
  const std::string ci_install = ci.substr(ci.find("apt-get install"));
  EXPECT_EQ(Packages(install_), Packages(ci_install.substr(0, ci_install.find(">/dev/null"))))
      << "README and .ci/run install different packages";
  const std::string test_cmd = CodeLineAfter(readme_, "Run the whole test suite", "ctest");
  ASSERT_FALSE(test_cmd.empty());
  const std::string marker = "# The README's test command:\n";
  ASSERT_NE(ci.find(marker), std::string::npos);
  std::string ci_cmd = ci.substr(ci.find(marker) + marker.size());
  ci_cmd = ci_cmd.substr(0, ci_cmd.find('\n'));
  EXPECT_EQ(ci_cmd, test_cmd);
}

TEST_F(ReadmeQuickStart, SaysHowToBuildOnlyEvalrunAndWhatToDoOffline) {
  for (const char* s : {"cmake --build build --target evalrun", "-DEVALRUN_TESTS=OFF", "--mirror", "--data-dir",
                        "EVALRUN_DATA", "../shared/datasets"})
    EXPECT_NE(readme_.find(s), std::string::npos) << s;
}

// The README is the front door, read in minutes: at most 250 lines, and
// every longer text it sends the reader to is there.
TEST(Readme, IsShortAndEveryDocItNamesIsThere) {
  const std::string readme = Source("README.md");
  size_t lines = 0;
  for (char c : readme) lines += c == '\n';
  EXPECT_LE(lines, 250u);
  for (const char* doc : {"docs/cards.md", "docs/commands.md", "docs/parts.md", "docs/livecodebench.md", "docs/speed.md",
                          "docs/servers.md", "docs/shards.md", "docs/reliability.md", "docs/results-schema.md", "docs/architecture.md",
                          "docs/measurements.md", "cards/README.md"}) {
    EXPECT_NE(readme.find(std::string("(") + doc + ")"), std::string::npos) << "the README does not link " << doc;
    EXPECT_GT(Source(doc).size(), 200u) << doc << " is missing or empty";
  }
  const std::string png = Source("docs/page.png");
  EXPECT_NE(readme.find("(docs/page.png)"), std::string::npos);
  EXPECT_EQ(png.compare(0, 4, "\x89PNG"), 0) << "docs/page.png is not a PNG";
  EXPECT_LT(png.size(), 200u * 1024) << "keep the README's picture small";
}

// Text moved out of the README is where the documents that cite it say.
TEST(Readme, TheMovedSectionsAreInTheirDocs) {
  const std::pair<const char*, const char*> kSections[] = {
      {"docs/speed.md", "## The real-server lane"},    {"docs/speed.md", "## The GPU lane check"},
      {"docs/livecodebench.md", "**Trust boundary.**"}, {"docs/livecodebench.md", "**Sandbox.**"},
      {"docs/parts.md", "### Parity (tested on real data)"}, {"docs/parts.md", "## The thinking test"},
      {"docs/servers.md", "## One card, several servers"}, {"docs/shards.md", "## Slurm"},
      {"docs/shards.md", "## Kubernetes"},
      {"docs/commands.md", "## Exit codes"},            {"docs/measurements.md", "## The GPU lane check on an H200"}};
  for (const auto& [doc, heading] : kSections)
    EXPECT_NE(Source(doc).find(heading), std::string::npos) << doc << " has no " << heading;
}

}  // namespace
}  // namespace evalrun::testing
