// A person's dataset manifest (datasets/manifest_file.h): read with the keys
// of the built-in ones, each refusal naming the file and the key; and its
// registration beside the built-in manifests (datasets/manifest.h), refused
// where a name or a path is already another manifest's.
#include "datasets/manifest_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/manifest.h"
#include "tests/support/run_binary.h"

namespace evalrun::testing {
namespace {

const std::string kSha(64, 'a');

nlohmann::json Good() {
  return {{"name", "mine"},
          {"title", "My rows"},
          {"homepage", "https://example.org/mine"},
          {"files", {{{"path", "mine/test.jsonl"},
                      {"source", {{"url", "https://example.org/mine/v1/test.jsonl"}}},
                      {"rows", 3},
                      {"sha256", kSha}}}}};
}

class ManifestFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override { RemoveTree(dir_); }
  Status Load(const std::string& text, Manifest* m) {
    WriteFile(path(), text);
    return LoadManifestFile(path(), dir_, m);
  }
  std::string path() const { return dir_ + "/mine.manifest.json"; }
  std::string dir_;
};

TEST_F(ManifestFileTest, AGoodManifestIsReadWithItsFolder) {
  Manifest m;
  ASSERT_TRUE(Load(Good().dump(2), &m).ok());
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.title, "My rows");
  EXPECT_EQ(m.source_file, path());
  EXPECT_EQ(m.tasks_dir, dir_);
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0].path, "mine/test.jsonl");
  EXPECT_EQ(m.files[0].sha256, kSha);
  EXPECT_EQ(m.files[0].rows, 3);
  EXPECT_FALSE(m.files[0].optional);
  EXPECT_EQ(ManifestWhere(m), path());
}

TEST_F(ManifestFileTest, EveryMistakeIsNamedWithItsKey) {
  struct Case {
    const char* what;
    nlohmann::json doc;
    std::string said;
  };
  auto with = [](const char* key, nlohmann::json v) {
    nlohmann::json d = Good();
    d["files"][0][key] = std::move(v);
    return d;
  };
  nlohmann::json typo = Good(), bad_name = Good(), no_files = Good(), no_source = Good(), no_sha = Good();
  typo["titel"] = "x";
  bad_name["name"] = "My Rows";
  no_files["files"] = nlohmann::json::array();
  no_source["files"][0].erase("source");
  no_sha["files"][0].erase("sha256");
  const std::vector<Case> cases = {
      {"unknown key", typo, "titel: unknown field (did you mean \"title\"?)"},
      {"unknown file key", with("sha265", kSha), "files[0].sha265: unknown field (did you mean \"sha256\"?)"},
      {"bad name", bad_name, "name: expected a name of a-z"},
      {"no files", no_files, "files: expected a non-empty list of files"},
      {"no source", no_source, "files[0].source: required field is missing"},
      {"no sha256", no_sha, "files[0].sha256: required field is missing"},
      {"short sha256", with("sha256", "ABC"), "files[0].sha256: expected 64 lowercase hex digits"},
      {"upper-case sha256", with("sha256", std::string(64, 'A')), "files[0].sha256: expected 64 lowercase hex"},
      {"path up and out", with("path", "mine/../../etc/passwd"), "files[0].path: expected a file under \"mine/\""},
      {"absolute path", with("path", "/etc/passwd"), "files[0].path: expected a file under \"mine/\""},
      {"another dataset's folder", with("path", "gsm8k/test.jsonl"), "files[0].path: expected a file under"},
      {"empty part", with("path", "mine//test.jsonl"), "files[0].path: expected a file under"},
      {"not http", with("source", {{"url", "file:///etc/passwd"}}), "expected an http(s) URL"},
      {"negative rows", with("rows", -1), "files[0].rows: expected an integer >= 0"},
  };
  for (const Case& c : cases) {
    Manifest m;
    Status st = Load(c.doc.dump(2), &m);
    EXPECT_FALSE(st.ok()) << c.what;
    EXPECT_NE(st.message().find(path() + ": "), std::string::npos) << c.what << ": " << st.message();
    EXPECT_NE(st.message().find(c.said), std::string::npos) << c.what << ": " << st.message();
  }
  Manifest m;
  Status st = Load("{\"name\": \"mine\",", &m);
  EXPECT_NE(st.message().find(path()), std::string::npos) << st.message();
  st = Load(R"({"name": "mine", "name": "yours", "files": []})", &m);
  EXPECT_NE(st.message().find("duplicate key"), std::string::npos) << st.message();
}

TEST_F(ManifestFileTest, RegisteredBesideTheBuiltInOnesUnlessANameOrPathIsTaken) {
  Manifest m;
  nlohmann::json doc = Good();
  doc["name"] = "mine-registered";
  doc["files"][0]["path"] = "mine-registered/test.jsonl";
  ASSERT_TRUE(Load(doc.dump(), &m).ok());
  ASSERT_TRUE(RegisterManifest(m).ok());
  ASSERT_NE(FindManifest("mine-registered"), nullptr);
  EXPECT_EQ(FindManifest("mine-registered")->tasks_dir, dir_);
  EXPECT_NE(FindManifestFile("mine-registered/test.jsonl"), nullptr);
  ASSERT_NE(FindManifest("gsm8k"), nullptr);  // the built-in ones stay
  EXPECT_EQ(FetchCommand("mine-registered", "/d"),
            "evalrun datasets fetch mine-registered --data-dir /d --tasks " + dir_);
  EXPECT_EQ(FetchCommand("gsm8k", "/d"), "evalrun datasets fetch gsm8k --data-dir /d");

  Status again = RegisterManifest(m);
  EXPECT_NE(again.message().find("name \"mine-registered\" is taken by " + path()), std::string::npos)
      << again.message();
  Manifest builtin_name = m;
  builtin_name.name = "gsm8k";
  builtin_name.files[0].path = "gsm8k/other.jsonl";
  Status taken = RegisterManifest(builtin_name);
  EXPECT_NE(taken.message().find("name \"gsm8k\" is taken by tasks/gsm8k.manifest.json"), std::string::npos)
      << taken.message();
  Manifest same_path = m;
  same_path.name = "mine-again";
  Status path_taken = RegisterManifest(same_path);
  EXPECT_NE(path_taken.message().find("mine-registered/test.jsonl is listed by " + path() + " too"),
            std::string::npos) << path_taken.message();
}

}  // namespace
}  // namespace evalrun::testing
