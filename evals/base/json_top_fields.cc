#include "evals/base/json_top_fields.h"

#include <cstring>

namespace evalrun {
namespace {

constexpr size_t kBad = std::string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

// Just past the string that opens at s[i] == '"', or kBad. A quote closes
// it unless an odd run of backslashes precedes it.
size_t SkipString(std::string_view s, size_t i) {
  for (size_t from = i + 1; from < s.size();) {
    const void* hit = std::memchr(s.data() + from, '"', s.size() - from);
    if (hit == nullptr) return kBad;
    const size_t q = static_cast<const char*>(hit) - s.data();
    size_t slashes = 0;
    while (q - slashes > i + 1 && s[q - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return q + 1;
    from = q + 1;
  }
  return kBad;
}

// Just past the object or array that opens at s[i], or kBad when its
// brackets do not match.
size_t SkipNested(std::string_view s, size_t i) {
  std::string closers;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      i = SkipString(s, i);
      if (i == kBad) return kBad;
      --i;
    } else if (c == '{' || c == '[') {
      closers.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (closers.empty() || closers.back() != c) return kBad;
      closers.pop_back();
      if (closers.empty()) return i + 1;
    }
  }
  return kBad;
}

// Just past the value that starts at s[i] (a string, an object or array, or
// a scalar running to the next delimiter), or kBad.
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return kBad;
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') return SkipNested(s, i);
  size_t j = i;
  while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']' && !IsSpace(s[j]) && s[j] != '"') ++j;
  return j == i ? kBad : j;
}

bool Fail(std::string* error, const std::string& what, size_t at) {
  *error = what + " at byte " + std::to_string(at);
  return false;
}

}  // namespace

bool ScanTopLevelFields(std::string_view line, const std::vector<std::string_view>& keys,
                        std::vector<std::string_view>* values, std::string* error) {
  values->assign(keys.size(), std::string_view());
  size_t i = SkipSpace(line, 0);
  if (i >= line.size() || line[i] != '{') {
    *error = "not a JSON object";
    return false;
  }
  i = SkipSpace(line, i + 1);
  if (i < line.size() && line[i] == '}')  // {}
    return SkipSpace(line, i + 1) == line.size() || Fail(error, "text after the object", i + 1);
  for (;;) {
    if (i >= line.size() || line[i] != '"') return Fail(error, "expected a key", i);
    const size_t key_start = i;
    const size_t key_end = SkipString(line, i);
    if (key_end == kBad) return Fail(error, "unterminated string", i);
    const std::string_view key = line.substr(i + 1, key_end - i - 2);
    i = SkipSpace(line, key_end);
    if (i >= line.size() || line[i] != ':') return Fail(error, "expected ':'", i);
    const size_t value_start = SkipSpace(line, i + 1);
    const size_t value_end = SkipValue(line, value_start);
    if (value_end == kBad) return Fail(error, "a value that does not end", value_start);
    for (size_t k = 0; k < keys.size(); ++k) {
      if (keys[k] != key) continue;
      if (!(*values)[k].empty()) return Fail(error, "a second \"" + std::string(key) + "\"", key_start);
      (*values)[k] = line.substr(value_start, value_end - value_start);
    }
    i = SkipSpace(line, value_end);
    if (i < line.size() && line[i] == ',') {
      i = SkipSpace(line, i + 1);
      continue;
    }
    if (i < line.size() && line[i] == '}') break;
    return Fail(error, "expected ',' or '}'", i);
  }
  if (SkipSpace(line, i + 1) != line.size()) return Fail(error, "text after the object", i + 1);
  return true;
}

}  // namespace evalrun
