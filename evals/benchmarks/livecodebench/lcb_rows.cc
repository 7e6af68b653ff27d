#include "evals/benchmarks/livecodebench/lcb_rows.h"

#include <cstdio>
#include <fstream>

#include "evals/benchmarks/livecodebench/lcb_pickle.h"

namespace evalrun {

namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* v) {
  if (pos + n > s.size()) return false;
  *v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    *v = *v * 10 + (s[i] - '0');
  }
  return true;
}

bool ValidDay(int y, int m, int d) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

// The time after the date: "HH:MM[:SS[.f{1,6}]]".
bool ParseTime(std::string_view t, LcbDateTime* d) {
  if (!Digits(t, 0, 2, &d->hour) || t.size() < 5 || t[2] != ':' || !Digits(t, 3, 2, &d->minute)) return false;
  size_t pos = 5;
  if (pos < t.size()) {
    if (t[pos] != ':' || !Digits(t, pos + 1, 2, &d->second)) return false;
    pos += 3;
  }
  if (pos < t.size()) {
    if (t[pos] != '.' || t.size() - pos - 1 < 1 || t.size() - pos - 1 > 6) return false;
    int frac = 0;
    if (!Digits(t, pos + 1, t.size() - pos - 1, &frac)) return false;
    for (size_t i = t.size() - pos - 1; i < 6; ++i) frac *= 10;
    d->microsecond = frac;
    pos = t.size();
  }
  return d->hour < 24 && d->minute < 60 && d->second < 60;
}

Status ParseTests(const nlohmann::json& list, const std::string& where, std::vector<LcbTest>* out) {
  if (!list.is_array()) return Status::InvalidInput(where + ": expected a JSON list of test cases");
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& t = list[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!t.is_object() || t.size() != 3 || !t.contains("input") || !t.contains("output") ||
        !t.contains("testtype"))
      return Status::InvalidInput(at + ": expected an object with exactly input, output, testtype");
    if (!t["input"].is_string() || !t["output"].is_string() || !t["testtype"].is_string())
      return Status::InvalidInput(at + ": input, output and testtype must be strings");
    const std::string type = t["testtype"].get<std::string>();
    if (type != "stdin" && type != "functional")
      return Status::InvalidInput(at + ".testtype: \"" + type + "\" (expected \"stdin\" or \"functional\")");
    out->push_back({t["input"].get<std::string>(), t["output"].get<std::string>(), type == "functional"});
  }
  return Status::Ok();
}

Status StringField(const nlohmann::json& row, const char* key, const std::string& where, std::string* out) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_string())
    return Status::InvalidInput(where + ": field \"" + key + "\" missing or not a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

Status OneOf(const std::string& value, std::initializer_list<const char*> allowed, const std::string& where) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return Status::Ok();
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  return Status::InvalidInput(where + ": \"" + value + "\" (expected one of " + list + ")");
}

Status ParsePrivateTests(const std::string& field, const std::string& where, LcbProblem* out) {
  nlohmann::json list = nlohmann::json::parse(field, nullptr, false);
  out->private_tests_compressed = list.is_discarded();
  if (list.is_discarded()) {  // as the official: not JSON, so base64(zlib(pickle(json)))
    std::string text;
    EVALRUN_RETURN_IF_ERROR(DecodeLcbPrivateTests(field, &text).Prefixed(where));
    list = nlohmann::json::parse(text, nullptr, false);
    if (list.is_discarded()) return Status::InvalidInput(where + ": the decoded pickle is not JSON");
  }
  return ParseTests(list, where, &out->private_tests);
}

Status ParseJsonField(const std::string& text, const std::string& where, nlohmann::json* out) {
  *out = nlohmann::json::parse(text, nullptr, false);
  if (out->is_discarded()) return Status::InvalidInput(where + ": not JSON");
  return Status::Ok();
}

bool InWindow(const LcbDateTime& d, const LcbReadOptions& o) {
  return (!o.start || *o.start <= d) && (!o.end || d <= *o.end);
}

}  // namespace

std::string LcbProblem::ContestMonth() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d", date.year, date.month);
  return buf;
}

Status ParseLcbDate(std::string_view text, const std::string& what, LcbDateTime* out) {
  LcbDateTime d;
  bool ok = text.size() >= 10 && Digits(text, 0, 4, &d.year) && text[4] == '-' && Digits(text, 5, 2, &d.month) &&
            text[7] == '-' && Digits(text, 8, 2, &d.day) && ValidDay(d.year, d.month, d.day);
  if (ok && text.size() > 10) ok = (text[10] == 'T' || text[10] == ' ') && ParseTime(text.substr(11), &d);
  if (!ok)
    return Status::InvalidInput(what + ": \"" + std::string(text) +
                                "\" is not a date YYYY-MM-DD[THH:MM[:SS[.ffffff]]] (no time zone)");
  *out = d;
  return Status::Ok();
}

Status ParseLcbRow(std::string_view line, const std::string& where, const LcbReadOptions& options,
                   LcbProblem* out) {
  *out = LcbProblem();
  out->source = where;
  nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
  if (row.is_discarded() || !row.is_object()) return Status::InvalidInput(where + ": not a JSON object");
  std::string public_text, private_text, metadata_text;
  const std::pair<const char*, std::string*> fields[] = {
      {"question_title", &out->question_title}, {"question_content", &out->question_content},
      {"platform", &out->platform},             {"question_id", &out->question_id},
      {"contest_id", &out->contest_id},         {"contest_date", &out->contest_date},
      {"starter_code", &out->starter_code},     {"difficulty", &out->difficulty},
      {"public_test_cases", &public_text},      {"private_test_cases", &private_text},
      {"metadata", &metadata_text}};
  for (const auto& [key, dst] : fields) EVALRUN_RETURN_IF_ERROR(StringField(row, key, where, dst));
  EVALRUN_RETURN_IF_ERROR(OneOf(out->platform, {"leetcode", "codeforces", "atcoder"}, where + ": platform"));
  EVALRUN_RETURN_IF_ERROR(OneOf(out->difficulty, {"easy", "medium", "hard"}, where + ": difficulty"));
  EVALRUN_RETURN_IF_ERROR(ParseLcbDate(out->contest_date, where + ": contest_date", &out->date));
  if (!InWindow(out->date, options)) return Status::Ok();
  nlohmann::json tests;
  EVALRUN_RETURN_IF_ERROR(ParseJsonField(public_text, where + ": public_test_cases", &tests));
  EVALRUN_RETURN_IF_ERROR(ParseTests(tests, where + ": public_test_cases", &out->public_tests));
  EVALRUN_RETURN_IF_ERROR(ParseJsonField(metadata_text, where + ": metadata", &out->metadata));
  if (!out->metadata.is_object()) return Status::InvalidInput(where + ": metadata: expected a JSON object");
  if (auto it = out->metadata.find("func_name"); it != out->metadata.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidInput(where + ": metadata.func_name: expected a string");
    out->func_name = it->get<std::string>();
  }
  if (options.decode_private_tests && (!options.decode_only || options.decode_only(*out)))
    EVALRUN_RETURN_IF_ERROR(ParsePrivateTests(private_text, where + ": private_test_cases", out));
  return Status::Ok();
}

Status ReadLcbFile(const std::string& path, const std::string& name, const LcbReadOptions& options,
                   const std::function<Status(LcbProblem&&)>& row, long long* rows_read) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::string line;
  long long number = 0, rows = 0;
  for (;;) {
    const std::streamoff at = in.tellg();
    if (!std::getline(in, line)) break;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++rows;
    LcbProblem p;
    EVALRUN_RETURN_IF_ERROR(ParseLcbRow(line, name + ":" + std::to_string(number), options, &p));
    p.offset = static_cast<long long>(at);
    if (InWindow(p.date, options)) EVALRUN_RETURN_IF_ERROR(row(std::move(p)));
  }
  if (in.bad()) return Status::IoError(path + ": read error after line " + std::to_string(number));
  if (rows_read) *rows_read = rows;
  return Status::Ok();
}

Status LcbReleaseFiles(const std::string& release, std::vector<std::string>* files) {
  files->clear();
  auto file = [](int n) { return n == 1 ? std::string("test.jsonl") : "test" + std::to_string(n) + ".jsonl"; };
  auto range = [&](int a, int b) {
    for (int n = a; n <= b; ++n) files->push_back(file(n));
    return Status::Ok();
  };
  if (release == "release_latest") return range(1, 6);
  for (int n = 1; n <= 6; ++n) {
    if (release == "release_v" + std::to_string(n)) return range(1, n);
    if (release == "v" + std::to_string(n) || release == file(n)) return range(n, n);
    for (int m = n + 1; m <= 6; ++m)
      if (release == "v" + std::to_string(n) + "_v" + std::to_string(m)) return range(n, m);
  }
  return Status::InvalidInput("livecodebench release \"" + release +
                              "\": expected release_v1 .. release_v6, release_latest, v1 .. v6, vN_vM "
                              "(N < M) or a file test.jsonl, test2.jsonl .. test6.jsonl");
}

std::string LcbWindowText(const std::string& release, const std::vector<std::string>& files,
                          const std::string& start_date, const std::string& end_date) {
  std::string text = release + " (";
  if (files.size() == 1) text += files[0];
  else if (!files.empty()) text += files.front() + ".." + files.back();
  text += "), contest_date ";
  if (start_date.empty() && end_date.empty()) return text + "any";
  return text + (start_date.empty() ? "any" : start_date) + " .. " + (end_date.empty() ? "any" : end_date);
}

}  // namespace evalrun
