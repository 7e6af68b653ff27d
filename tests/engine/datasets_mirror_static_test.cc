// the documented offline path. `evalrun datasets fetch
// --mirror URL` against a plain static server of a complete data dir's copy
// (files only, as `python3 -m http.server` in ../shared/datasets) fetches
// every required file at its data-dir path, MMLU-Pro's two included, and
// every one verifies.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "datasets/manifest.h"
#include "tests/engine/datasets_fetch_mirror.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

using fetch_testing::MirrorServer;

TEST(DatasetsMirrorStaticTest, APlainStaticServerOfADataDirIsAWholeMirror) {
  MirrorServer mirror(testing::DatasetsDir(), MirrorServer::Api::kFilesOnly);
  testing::TempDir dir("evalrun_static_mirror");
  testing::BinaryResult r = testing::RunBinary(
      {testing::EvalrunBinary(), "datasets", "fetch", "--mirror", mirror.url(), "--data-dir", dir.path()}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int required = 0;
  for (const auto& m : AllManifests()) {
    for (const auto& f : m.files) {
      if (f.optional) continue;
      ++required;
      std::string abs;
      Status st = VerifyDataFile(dir.path(), f.path, &abs);
      EXPECT_TRUE(st.ok()) << st.ToString();
      int asked = 0;
      for (const auto& q : mirror.requests()) asked += q.path == "/" + f.path;
      EXPECT_EQ(asked, 1) << f.path << " not asked at its data-dir path";
    }
  }
  EXPECT_EQ(required, 68);
  EXPECT_TRUE(mirror.RequestsFor("/rows").empty()) << "asked a rows API a static server does not have";
  EXPECT_NE(r.err.find("68 of 68 files in place (0 already were)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace evalrun
