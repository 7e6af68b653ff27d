// `evalrun datasets fetch` without a network: a host that cannot be
// resolved (a name under the reserved .invalid TLD) or reached (a closed
// port on 127.0.0.1) stops the fetch after the first file, with one message
// naming the ways round it, and exit 2 within seconds (trying every file 5
// times would take ~17 minutes for the 68 files). What is worth retrying (a
// transfer broken midway, a 5xx) still is: datasets_fetch_test.cc,
// ABrokenTransferIsRetriedWithinOneRunFromWhereItStopped, and
// datasets_fetch_sources_test.cc, RowsPagesAreRetriedAndTheirTotalChecked.

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datasets/fetch.h"
#include "datasets/manifest.h"
#include "evals/base/exit_codes.h"
#include "tests/support/capture_output.h"
#include "tests/support/loopback_port.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

using testing::BinaryResult;
using testing::EvalrunBinary;
using testing::RunBinary;
using testing::TempDir;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The real binary with the real manifests (68 files) and a mirror that
// cannot be reached: one file tried once, one message, exit 2.
void ExpectStopsAtOnce(const std::string& mirror, const std::string& why) {
  TempDir data("evalrun_offline");
  const auto start = std::chrono::steady_clock::now();
  BinaryResult r = RunBinary({EvalrunBinary(), "datasets", "fetch", "--mirror", mirror, "--data-dir", data.path()}, 60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(seconds, 10.0) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("trying again"), std::string::npos) << "retried: " << r.err;
  EXPECT_EQ(Count(r.out, "FAILED"), 1u) << r.out;
  EXPECT_EQ(Count(r.err, "stopped:"), 1u) << r.err;
  for (const char* way : {"the mirror could not be reached", "were not tried", "--mirror URL",
                          "$EVALRUN_DATASETS_MIRROR", "--data-dir (or $EVALRUN_DATA)", "evalrun datasets list"})
    EXPECT_NE(r.err.find(way), std::string::npos) << way << "\n" << r.err;
  EXPECT_NE(r.err.find("0 of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" not tried\n"), std::string::npos) << r.err;
}

TEST(DatasetsFetchOfflineTest, AnUnresolvableHostStopsAtTheFirstFile) {
  ExpectStopsAtOnce("http://evalrun-mirror.invalid", "cannot resolve host name evalrun-mirror.invalid");
}

TEST(DatasetsFetchOfflineTest, AnUnreachableHostStopsAtTheFirstFile) {
  const int port = testing::FreeLoopbackPort();  // nothing listens there
  ASSERT_GT(port, 0);
  ExpectStopsAtOnce("http://127.0.0.1:" + std::to_string(port),
                    "cannot connect to 127.0.0.1:" + std::to_string(port) + " (connection refused");
}

// The sources themselves (no mirror), for a paged source too: the same stop.
TEST(DatasetsFetchOfflineTest, UnreachableSourcesStopTooWithoutAMirror) {
  const ManifestFile* real = FindManifestFile("mmlu-pro/validation.jsonl");
  ASSERT_NE(real, nullptr);
  nlohmann::json paged = real->raw;
  paged["source"]["url"] = "https://datasets-server.invalid/rows";
  nlohmann::json plain = {{"path", "toy/a.txt"}, {"sha256", std::string(64, '0')},
                          {"source", {{"url", "https://files.invalid/a.txt"}}}};
  std::vector<Manifest> ms(1);
  ms[0].name = "toy";
  ms[0].raw = {{"name", "toy"}, {"files", {paged, plain}}};
  for (const auto& f : {paged, plain}) {
    ManifestFile mf;
    mf.path = f["path"];
    mf.rows = f.value("rows", int64_t{-1});
    mf.sha256 = f["sha256"];
    mf.raw = f;
    ms[0].files.push_back(mf);
  }
  TempDir data("evalrun_offline");
  FetchOptions o;
  o.data_dir = data.path();
  o.manifests = &ms;
  o.mirror = "";
  setenv("EVALRUN_DATASETS_MIRROR", "", 1);
  testing::Captured c = testing::Capture([&](FILE* out, FILE* err) { return DatasetsFetch(o, out, err); });
  EXPECT_EQ(c.code, kExitUnreachable) << c.err;
  EXPECT_NE(c.err.find("cannot resolve host name datasets-server.invalid"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("stopped: the source could not be reached (above), so the other 1 file(s) were not tried"),
            std::string::npos)
      << c.err;
  EXPECT_EQ(c.err.find("files.invalid"), std::string::npos) << "the second file was tried: " << c.err;
  EXPECT_FALSE(std::filesystem::exists(data.path() + "/toy/a.txt"));
}

}  // namespace
}  // namespace evalrun
