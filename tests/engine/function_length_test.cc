// Functions of a screen or less: no function in evals/, scorers/, datasets/,
// bench/ or fuzz/ spans more than 80 lines (generated tables aside), checked with
// the brace matcher of tests/support/function_length.h, which is itself
// tested here on small snippets.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/function_length.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

constexpr int kMaxFunctionLines = 80;

// Generated tables: data, not functions a person reads.
const std::set<std::string> kGeneratedTables = {
    "scorers/py_unicode_tables.inc",
};


ScanResult Scan(const std::string& src) { return ScanFunctions(src); }

// "name:first-last" for each function found, to compare in one line.
std::vector<std::string> Spans(const std::string& src) {
  ScanResult r = Scan(src);
  EXPECT_EQ(r.error, "") << src;
  std::vector<std::string> out;
  for (const FunctionSpan& f : r.functions)
    out.push_back(f.name + ":" + std::to_string(f.first_line) + "-" + std::to_string(f.last_line));
  return out;
}

using Names = std::vector<std::string>;

TEST(FunctionLengthScanTest, FreeFunctionsAndTheirLines) {
  EXPECT_EQ(Spans("void F() {\n  G();\n}\n\nint H(int a,\n      int b) { return a + b; }\n"),
            (Names{"F:1-3", "H:5-6"}));
}

TEST(FunctionLengthScanTest, NamespacesAndClassMembersAreScannedInside) {
  std::string src =
      "namespace a {\nnamespace {\n"
      "class C : public B {\n public:\n  C(int x) : x_(x), y_{x} {\n    Z();\n  }\n"
      "  int X() const override { return x_; }\n"
      "  struct Inner { void F() noexcept {} };\n"
      " private:\n  int x_;\n};\n"
      "}  // namespace\n"
      "auto C::G() -> std::vector<int> {\n  return {};\n}\n"
      "extern \"C\" {\nvoid H() {}\n}\n"
      "}  // namespace a\n";
  EXPECT_EQ(Spans(src), (Names{"C:5-7", "X:8-8", "F:9-9", "C::G:14-16", "H:18-18"}));
}

TEST(FunctionLengthScanTest, LambdasAndLocalClassesCountInTheirFunction) {
  std::string src =
      "void Run() {\n"
      "  auto f = [&](int i) {\n    return i;\n  };\n"
      "  struct Local { int G() { return 1; } };\n"
      "}\n";
  EXPECT_EQ(Spans(src), (Names{"Run:1-6"}));
}

TEST(FunctionLengthScanTest, BracesInLiteralsAndCommentsAreSkipped) {
  std::string src =
      "// void Fake() {\n"
      "/* } { */\n"
      "void F() {\n"
      "  const char* s = \"}\\\"{\";\n"
      "  char c = '}', d = '\\'';\n"
      "  auto r = R\"x(\n  } ) \" {\n)x\";\n"
      "  int n = 1'000'000;\n"
      "}\n"
      "const char* kText = u8R\"(})\";\n"
      "void G() {}\n";
  EXPECT_EQ(Spans(src), (Names{"F:3-10", "G:12-12"}));
}

TEST(FunctionLengthScanTest, InitializersEnumsAndDefaultArgumentsAreNotFunctions) {
  std::string src =
      "#define BODY(x) { x; }\n"
      "enum class E : int { kA, kB };\n"
      "const int kTable[] = {1, 2, 3};\n"
      "std::vector<int> v{1, 2};\n"
      "struct P { int a; } kP = {1};\n"
      "void F(Opts o = {}, std::vector<int> v = {1}) {\n}\n"
      "template <typename T>\nT Max(T a) { return a; }\n";
  EXPECT_EQ(Spans(src), (Names{"F:6-7", "Max:9-9"}));
}

TEST(FunctionLengthScanTest, OperatorsQualifiersAndNamespaceLambdas) {
  std::string src =
      "bool Less::operator()(int a, int b) const { return a < b; }\n"
      "Foo& Foo::operator=(const Foo&) & noexcept(true) { return *this; }\n"
      "decltype(auto) Get() { return 1; }\n"
      "auto kSquare = [](int x) {\n  return x * x;\n};\n"
      "Foo::~Foo() {}\n";
  ScanResult r = Scan(src);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.functions.size(), 5u);
  EXPECT_EQ(r.functions[0].name, "Less::operator()");
  EXPECT_EQ(r.functions[1].name, "Foo::operator=");
  EXPECT_EQ(r.functions[2].name, "Get");
  EXPECT_EQ(r.functions[3].lines(), 3);
  EXPECT_EQ(r.functions[4].name, "Foo::~Foo");
}

TEST(FunctionLengthScanTest, UnbalancedBracesAreReported) {
  EXPECT_NE(Scan("void F() {\n").error.find("unclosed"), std::string::npos);
  EXPECT_NE(Scan("}\n").error.find("line 1"), std::string::npos);
  EXPECT_NE(Scan("const char* s = \"open\n").error.find("unterminated"), std::string::npos);
}

// The tree's source files under evals/, scorers/, datasets/, bench/ and fuzz/, relative to
// the source folder, sorted.
std::vector<std::string> SourceFiles() {
  namespace fs = std::filesystem;
  const fs::path root = SourceDir();
  std::vector<std::string> files;
  for (const char* dir : {"evals", "scorers", "datasets", "bench", "fuzz"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".inc")) continue;
      files.push_back(fs::relative(e.path(), root).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FunctionLengthTest, GeneratedTablesListedStillExist) {
  for (const std::string& path : kGeneratedTables)
    EXPECT_TRUE(std::filesystem::exists(SourceDir() + "/" + path)) << path;
}

TEST(FunctionLengthTest, NoFunctionInTheTreeIsLongerThanAScreen) {
  std::vector<std::string> files = SourceFiles();
  ASSERT_GT(files.size(), 100u) << "source files not found under " << SourceDir();
  size_t functions = 0;
  for (const std::string& path : files) {
    if (kGeneratedTables.count(path)) continue;
    ScanResult r = ScanFunctions(ReadFile(SourceDir() + "/" + path));
    EXPECT_EQ(r.error, "") << path << ": the scanner could not match its braces";
    functions += r.functions.size();
    for (const FunctionSpan& f : r.functions) {
      EXPECT_LE(f.lines(), kMaxFunctionLines)
          << path << ":" << f.first_line << ": " << (f.name.empty() ? "a function" : f.name)
          << " is " << f.lines() << " lines; split it into named steps of at most "
          << kMaxFunctionLines;
    }
  }
  EXPECT_GT(functions, 1000u) << "the scanner found too few functions to be trusted";
}

}  // namespace
}  // namespace evalrun::testing
