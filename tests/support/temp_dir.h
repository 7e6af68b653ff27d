// A temp folder that lives as long as a test's object, and writing files
// into it (the fake run folders of the compare and report tests, the data
// folders of the datasets tests). Tests only.
//
//   TempDir t("evalrun_compare");
//   WriteText(t.path() + "/a/mmlupro/samples.jsonl", "...");  // makes a/mmlupro
//
// (testing::ReadFile in run_binary.h reads them back.)
#ifndef EVALRUN_TESTS_SUPPORT_TEMP_DIR_H_
#define EVALRUN_TESTS_SUPPORT_TEMP_DIR_H_

#include <cstddef>
#include <string>

namespace evalrun::testing {

// A fresh folder (mode 0700) under `parent`, or the system temp folder when
// `parent` is "", named <prefix>-XXXXXX; removed with everything in it when
// the object goes. path() is "" when it could not be made.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "evalrun-test", const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `text` to `path` (replacing it), making the parent folders first
// (unlike WriteFile in run_binary.h).
void WriteText(const std::string& path, const std::string& text);

// How many times `needle` occurs in `text`, not overlapping (what the page
// and report tests count: rows, charts, sections).
size_t CountOf(const std::string& text, const std::string& needle);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_TEMP_DIR_H_
