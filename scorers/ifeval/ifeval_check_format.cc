// The IFEval checkers of detectable_content:number_placeholders, postscript
// and detectable_format:number_bullet_lists, constrained_response,
// number_highlighted_sections, multiple_sections, json_format, title.
// Each class ports one class of google-research
// instruction_following_eval/instructions.py (@ 4c4299485319ed72ef782020c81784be5468924e);
// the comment above it names the class and quotes what must match.
#include "scorers/ifeval/ifeval_check_kit.h"

#include <optional>
#include <string>
#include <vector>

#include "scorers/ifeval/ifeval_py_json.h"
#include "scorers/py_unicode.h"

namespace evalrun::ifeval {
namespace {

using py::PyLower;
using py::PyStrip;

// PlaceholderChecker: len(re.findall(r"\[.*?\]", value)) >= num_placeholders.
class NumberOfPlaceholders : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) { return args.Count("num_placeholders", &num_placeholders_); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    static const auto* re = CompilePyFixed(R"(\[.*?\])", false).release();
    return CountMatches(*re, value) >= num_placeholders_;
  }

 private:
  int64_t num_placeholders_ = 0;
};

// PostscriptChecker: marker.strip(); on value.lower(), re.findall with
// MULTILINE of r"\s*p\.\s?p\.\s?s.*$" (marker "P.P.S"), r"\s*p\.\s?s\..*$"
// ("P.S.") or r"\s*" + marker.lower() + r".*$" (any other marker, pasted in
// unescaped) finds something.
class Postscript : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<std::string> marker;
    EVALRUN_RETURN_IF_ERROR(args.Str("postscript_marker", &marker));
    if (!marker) return args.Missing("postscript_marker");
    const std::string_view m = PyStrip(*marker);
    std::string pattern;
    if (m == "P.P.S") {
      pattern = R"(\s*p\.\s?p\.\s?s.*$)";
    } else if (m == "P.S.") {
      pattern = R"(\s*p\.\s?s\..*$)";
    } else {
      pattern = R"(\s*)" + PyLower(m) + R"(.*$)";
    }
    return CompilePattern(args, "postscript_marker", pattern, false, true, &pattern_);
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    return pattern_->Search(PyLower(value));
  }

 private:
  std::unique_ptr<const PyPattern> pattern_;
};

// BulletListChecker: len(re.findall(r"^\s*\*[^\*].*$", value, MULTILINE)) +
// len(re.findall(r"^\s*-.*$", value, MULTILINE)) == num_bullets.
class NumberOfBullets : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) { return args.Count("num_bullets", &num_bullets_); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    static const auto* star = CompilePyFixed(R"(^\s*\*[^\*].*$)", true).release();
    static const auto* dash = CompilePyFixed(R"(^\s*-.*$)", true).release();
    return CountMatches(*star, value) + CountMatches(*dash, value) ==
           num_bullets_;
  }

 private:
  int64_t num_bullets_ = 0;
};

// ConstrainedResponseChecker: one of _CONSTRAINED_RESPONSE_OPTIONS is a
// substring of value.strip().
class ConstrainedResponse : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    const std::string_view v = PyStrip(value);
    for (std::string_view option : {"My answer is yes.", "My answer is no.", "My answer is maybe."}) {
      if (v.find(option) != std::string_view::npos) return true;
    }
    return false;
  }
};

// HighlightSectionChecker: re.findall(r"\*[^\n\*]*\*") whose
// .strip("*").strip() is non-empty, plus re.findall(r"\*\*[^\n\*]*\*\*")
// whose .removeprefix("**").removesuffix("**").strip() is non-empty, >=
// num_highlights.
class NumberOfHighlights : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) { return args.Count("num_highlights", &num_highlights_); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    static const auto* single = CompilePyFixed(R"(\*[^\n\*]*\*)", false).release();
    static const auto* double_ = CompilePyFixed(R"(\*\*[^\n\*]*\*\*)", false).release();
    int64_t count = 0;
    for (std::string_view h : FindAll(*single, value)) {
      if (!PyStrip(py::PyStripChars(h, "*")).empty()) ++count;
    }
    for (std::string_view h : FindAll(*double_, value)) {
      // Every match is "**" + inner + "**": removeprefix/removesuffix leave inner.
      const std::string_view inner = h.substr(2, h.size() - 4);
      if (!PyStrip(inner).empty()) ++count;
    }
    return count >= num_highlights_;
  }

 private:
  int64_t num_highlights_ = 0;
};

// SectionChecker: section_spliter.strip(), pasted unescaped into
// r"\s?" + spliter + r"\s?\d+\s?"; len(re.split(pattern, value)) - 1 >=
// num_sections.
class MultipleSections : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<std::string> spliter;
    EVALRUN_RETURN_IF_ERROR(args.Str("section_spliter", &spliter));
    if (!spliter) return args.Missing("section_spliter");
    const std::string pattern = R"(\s?)" + std::string(PyStrip(*spliter)) + R"(\s?\d+\s?)";
    EVALRUN_RETURN_IF_ERROR(CompilePattern(args, "section_spliter", pattern, false, false, &pattern_));
    return args.Count("num_sections", &num_sections_);
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    // re.split returns the pieces plus every capture group of every match.
    const int64_t pieces = 1 + static_cast<int64_t>(pattern_->CountAll(value)) *
                                   (1 + pattern_->CaptureGroups());
    return pieces - 1 >= num_sections_;
  }

 private:
  std::unique_ptr<const PyPattern> pattern_;
  int64_t num_sections_ = 0;
};

// JsonFormat: value.strip().removeprefix("```json").removeprefix("```Json")
// .removeprefix("```JSON").removeprefix("```").removesuffix("```").strip()
// must pass json.loads.
class JsonFormat : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    std::string_view v = PyStrip(value);
    for (std::string_view prefix : {"```json", "```Json", "```JSON", "```"}) {
      if (v.starts_with(prefix)) v.remove_prefix(prefix.size());
    }
    if (v.ends_with("```")) v.remove_suffix(3);
    return IsPythonJson(PyStrip(v));
  }
};

// TitleChecker: some re.findall(r"<<[^\n]+>>") match has a non-empty
// .lstrip("<").rstrip(">").strip().
class Title : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    static const auto* re = CompilePyFixed(R"(<<[^\n]+>>)", false).release();
    for (std::string_view t : FindAll(*re, value)) {
      if (!PyStrip(py::PyRStripChars(py::PyLStripChars(t, "<"), ">")).empty()) return true;
    }
    return false;
  }
};

}  // namespace

Status MakeNumberOfPlaceholders(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfPlaceholders>(std::move(id)), args, out);
}
Status MakePostscript(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<Postscript>(std::move(id)), args, out);
}
Status MakeNumberOfBullets(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfBullets>(std::move(id)), args, out);
}
Status MakeConstrainedResponse(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<ConstrainedResponse>(std::move(id)), args, out);
}
Status MakeNumberOfHighlights(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfHighlights>(std::move(id)), args, out);
}
Status MakeMultipleSections(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<MultipleSections>(std::move(id)), args, out);
}
Status MakeJsonFormat(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<JsonFormat>(std::move(id)), args, out);
}
Status MakeTitle(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<Title>(std::move(id)), args, out);
}

}  // namespace evalrun::ifeval
