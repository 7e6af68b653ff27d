// The IFEval checkers of combination:two_responses, repeat_prompt,
// startend:end_checker, quotation and punctuation:no_comma: what the whole
// answer starts, ends or is made of.
// Each class ports one class of google-research
// instruction_following_eval/instructions.py (@ 4c4299485319ed72ef782020c81784be5468924e);
// the comment above it names the class and quotes what must match.
#include "scorers/ifeval/ifeval_check_kit.h"

#include <optional>
#include <string>
#include <vector>

#include "scorers/py_unicode.h"

namespace evalrun::ifeval {
namespace {

using py::PyLower;
using py::PyStrip;

// TwoResponsesChecker: value.split("******"); blank pieces fail the check
// unless first or last; exactly two non-blank pieces, different once stripped.
class TwoResponses : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    std::vector<std::string_view> pieces;
    size_t start = 0;
    while (true) {
      const size_t at = value.find("******", start);
      if (at == std::string_view::npos) break;
      pieces.push_back(value.substr(start, at - start));
      start = at + 6;
    }
    pieces.push_back(value.substr(start));
    std::vector<std::string_view> valid;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (PyStrip(pieces[i]).empty()) {
        if (i != 0 && i != pieces.size() - 1) return false;
      } else {
        valid.push_back(pieces[i]);
      }
    }
    return valid.size() == 2 && PyStrip(valid[0]) != PyStrip(valid[1]);
  }
};

// RepeatPromptThenAnswer: prompt_to_repeat is required (ValueError when
// falsy); value.strip().lower().startswith(prompt_to_repeat.strip().lower()).
// The prompt comes from kwargs, not from the prompt text.
class RepeatPrompt : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<std::string> prompt;
    EVALRUN_RETURN_IF_ERROR(args.Str("prompt_to_repeat", &prompt));
    if (!prompt || prompt->empty()) {
      return args.Error("prompt_to_repeat", "missing or empty (upstream: ValueError)");
    }
    prefix_ = PyLower(PyStrip(*prompt));
    return Status::Ok();
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    return PyLower(PyStrip(value)).starts_with(prefix_);
  }

 private:
  std::string prefix_;
};

// EndChecker: end_phrase.strip(); value.strip().strip('"').lower()
// .endswith(end_phrase.strip().lower()).
class EndPhrase : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<std::string> phrase;
    EVALRUN_RETURN_IF_ERROR(args.Str("end_phrase", &phrase));
    if (!phrase) return args.Missing("end_phrase");
    suffix_ = PyLower(PyStrip(*phrase));  // strip() in build_description and again in check
    return Status::Ok();
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    return PyLower(py::PyStripChars(PyStrip(value), "\"")).ends_with(suffix_);
  }

 private:
  std::string suffix_;
};

// QuotationChecker: value.strip(); len > 1 and it starts and ends with '"'.
class Quotation : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    const std::string_view v = PyStrip(value);
    return v.size() > 1 && v.front() == '"' && v.back() == '"';
  }
};

// CommaChecker: not re.search(r"\,", value).
class NoComma : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    return value.find(',') == std::string_view::npos;
  }
};

}  // namespace

Status MakeTwoResponses(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<TwoResponses>(std::move(id)), args, out);
}
Status MakeRepeatPrompt(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<RepeatPrompt>(std::move(id)), args, out);
}
Status MakeEndPhrase(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<EndPhrase>(std::move(id)), args, out);
}
Status MakeQuotation(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<Quotation>(std::move(id)), args, out);
}
Status MakeNoComma(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NoComma>(std::move(id)), args, out);
}

}  // namespace evalrun::ifeval
