#include "scorers/answer_extract.h"

#include <re2/re2.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

#include "scorers/choice_extract.h"

namespace evalrun {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string Strip(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// The length of the UTF-8 sequence starting with byte c (1 for a stray byte).
size_t Utf8Length(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

// re.findall: every non-overlapping match, each as lm-eval's filter reads
// it (no group: the match; one group: it; several: the first non-empty).
std::vector<std::string> FindAll(const RE2& re, std::string_view text) {
  const int groups = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> m(static_cast<size_t>(groups) + 1);
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    if (!re.Match(text, pos, text.size(), RE2::UNANCHORED, m.data(), static_cast<int>(m.size()))) break;
    std::string found;
    if (groups == 0) {
      found = std::string(m[0]);
    } else {
      for (int g = 1; g <= groups; ++g)
        if (!m[g].empty()) {
          found = std::string(m[g]);
          break;
        }
    }
    out.push_back(std::move(found));
    const size_t start = static_cast<size_t>(m[0].data() - text.data());
    pos = start + m[0].size();
    if (m[0].empty()) pos += pos < text.size() ? Utf8Length(static_cast<unsigned char>(text[pos])) : 1;
  }
  return out;
}

std::map<std::string, LetterChain>& Chains() {
  static auto* chains = new std::map<std::string, LetterChain>();
  return *chains;
}

const LetterChainRegistrar kFirstLetter("first-letter", [](std::string_view answer, int num_options) {
  return ExtractFirstLetter(answer, num_options);
});

}  // namespace

bool CompileRegexStep(const std::string& pattern, int group_select, RegexStep* out, std::string* error) {
  RE2::Options o;
  o.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, o);
  if (!re->ok()) {
    *error = re->error();
    return false;
  }
  out->pattern = pattern;
  out->group_select = group_select;
  out->re = std::move(re);
  return true;
}

std::optional<std::string> RunRegexChain(const std::vector<RegexStep>& chain, std::string_view text) {
  for (const RegexStep& step : chain) {
    const std::vector<std::string> all = FindAll(*step.re, text);
    if (all.empty()) continue;
    const long n = static_cast<long>(all.size());
    long i = step.group_select < 0 ? n + step.group_select : step.group_select;
    if (i < 0 || i >= n) continue;  // Python would raise IndexError: no answer
    return Strip(all[static_cast<size_t>(i)]);
  }
  return std::nullopt;
}

std::string RemoveAll(const RegexStep& step, std::string_view text) {
  std::string s(text);
  RE2::GlobalReplace(&s, *step.re, "");
  return s;
}

std::optional<std::string> ExtractNumber(std::string_view text, NumberFrom from, const std::string& marker) {
  static const RE2 kNumber("(-?\\$?[0-9][0-9,]*(?:\\.[0-9]+)?)");
  std::string_view where = text;
  if (from == NumberFrom::kMarker) {
    const size_t at = text.find(marker);
    if (marker.empty() || at == std::string_view::npos) return std::nullopt;
    where = text.substr(at + marker.size());
  } else if (from == NumberFrom::kBoxed) {
    const size_t at = text.rfind("\\boxed{");
    if (at == std::string_view::npos) return std::nullopt;
    size_t i = at + 7, depth = 1;
    for (; i < text.size() && depth > 0; ++i) depth += text[i] == '{' ? 1 : text[i] == '}' ? -1 : 0;
    if (depth != 0) return std::nullopt;
    where = text.substr(at + 7, i - 1 - (at + 7));
  }
  std::vector<std::string> all = FindAll(kNumber, where);
  if (all.empty()) return std::nullopt;
  std::string n = from == NumberFrom::kLast ? all.back() : all.front();
  std::string clean;
  for (char c : n)
    if (c != ',' && c != '$') clean += c;
  return clean;
}

bool NumbersMatch(const std::string& answer, const std::string& gold, double tolerance) {
  auto as_int = [](const std::string& s, long long* v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  long long a = 0, g = 0;
  if (as_int(answer, &a) && as_int(gold, &g)) return a == g;
  char* ea = nullptr;
  char* eg = nullptr;
  const double da = std::strtod(answer.c_str(), &ea), dg = std::strtod(gold.c_str(), &eg);
  if (answer.empty() || gold.empty() || *ea != '\0' || *eg != '\0') return false;
  return std::fabs(da - dg) <= tolerance;
}

std::string Normalise(const Normalisation& n, std::string_view text) {
  std::string s(text);
  for (const RegexStep& r : n.remove) s = RemoveAll(r, s);
  if (n.ignore_case)
    for (char& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (n.ignore_punctuation) {
    static const std::string kPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    std::string kept;
    for (char c : s)
      if (kPunct.find(c) == std::string::npos) kept += c;
    s = std::move(kept);
  }
  if (n.collapse_whitespace) {
    std::string out;
    bool space = false;
    for (char c : s) {
      if (IsSpace(c)) {
        space = !out.empty();
        continue;
      }
      if (space) out += ' ';
      space = false;
      out += c;
    }
    s = std::move(out);
  }
  return s;
}

LetterChainRegistrar::LetterChainRegistrar(std::string name, LetterChain chain) {
  Chains()[std::move(name)] = std::move(chain);
}

const LetterChain* FindLetterChain(const std::string& name) {
  auto it = Chains().find(name);
  return it == Chains().end() ? nullptr : &it->second;
}

std::vector<std::string> LetterChainNames() {
  std::vector<std::string> out;
  for (const auto& [name, chain] : Chains()) out.push_back(name);
  return out;
}

}  // namespace evalrun
