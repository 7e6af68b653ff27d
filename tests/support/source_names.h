// Where C++ source text names a word, for the test that keeps each
// benchmark's name inside its own folders (tests/engine/
// benchmark_names_test.cc). Tests only.
//
// Code is read as string literals (raw strings too, and #include paths)
// and identifiers, comments as text. A name is found
//   - in a literal: as a word, case-insensitively, between characters that
//     are not letters or digits ("parts.ruler", "ruler_qa", "RULER"); with
//     `whole_literal` (a name that is also an English word, which prose in
//     messages uses) only as the whole literal ("fit");
//   - in an identifier, with `in_identifiers`: within it,
//     case-insensitively, underscores dropped (RulerTasks, kMmluProRows,
//     ifeval_checks). An English word is not sought there: shrink_to_fit,
//     SandboxProbe and enable_thinking name other things;
//   - in a comment, with `in_comments`: as a word, case-insensitively (an
//     English word is not sought there either: "fits in the context").
//
//   FindNames("x.cc", "auto t = RulerTasks();  // ruler\n", {{"ruler"}})
//   // == {{"x.cc", 1, "ruler", "identifier RulerTasks"}}
//
// Pure functions of their input; safe from any thread.
#ifndef EVALRUN_TESTS_SUPPORT_SOURCE_NAMES_H_
#define EVALRUN_TESTS_SUPPORT_SOURCE_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun::testing {

struct SoughtName {
  std::string name;            // lower case: "ruler", "mmlupro"
  bool whole_literal = false;  // in a literal only as all of it
  bool in_identifiers = true;
  bool in_comments = true;
};

struct NameHit {
  std::string file;
  int line = 0;
  std::string name;  // the sought name found
  std::string where;  // "literal \"parts.ruler\"", "identifier RulerTasks", "comment ..."
};

std::vector<NameHit> FindNames(const std::string& file, std::string_view source,
                               const std::vector<SoughtName>& names);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_SOURCE_NAMES_H_
