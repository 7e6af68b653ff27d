#include "evals/base/json_fields.h"
#include "evals/base/json_bounds.h"

#include <cmath>

#include "evals/base/near_miss.h"

namespace evalrun {

namespace {

// Watches the parser's events for a key given twice in one object and keeps
// the JSON path of the first such key ("server.name", "parts.<name>.tasks").
class DuplicateKeyWatch {
 public:
  bool OnEvent(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        CountArrayElement();
        frames_.push_back({event == E::object_start, {}, {}, -1});
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case E::key:
        if (!frames_.empty() && parsed.is_string()) {
          Frame& f = frames_.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && first_.empty()) first_ = Path();
        }
        break;
      case E::value:
        CountArrayElement();
        break;
    }
    return true;
  }
  // "" when no key was repeated.
  const std::string& first_duplicate() const { return first_; }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;  // objects: the key being read
    int index;        // arrays: the element being read
  };
  void CountArrayElement() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::string Path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.object) p += (p.empty() ? "" : ".") + f.key;
      else p += "[" + std::to_string(f.index) + "]";
    }
    return p;
  }
  std::vector<Frame> frames_;
  std::string first_;
};

}  // namespace

Status ParseJsonText(std::string_view text, const std::string& source, nlohmann::json* out,
                     DuplicateKeys duplicates) {
  EVALRUN_RETURN_IF_ERROR(CheckJsonBounds(text, source));
  try {
    if (duplicates == DuplicateKeys::kError) {
      DuplicateKeyWatch watch;
      *out = nlohmann::json::parse(text.begin(), text.end(),
                                   [&watch](int, nlohmann::json::parse_event_t e, nlohmann::json& parsed) {
                                     return watch.OnEvent(e, parsed);
                                   });
      if (!watch.first_duplicate().empty())
        return Status::InvalidInput(source + ": " + watch.first_duplicate() +
                                    ": duplicate key (given twice in one object; JSON would keep only the last)");
    } else {
      *out = nlohmann::json::parse(text.begin(), text.end());
    }
    return Status::Ok();
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based position of the failing byte.
    size_t pos = e.byte == 0 ? 0 : e.byte - 1;
    if (pos > text.size()) pos = text.size();
    int line = 1, col = 1;
    for (size_t i = 0; i < pos; ++i) {
      if (text[i] == '\n') ++line, col = 1; else ++col;
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ...; <detail>"
    auto colon = what.find("syntax error");
    std::string detail = colon == std::string::npos ? what : what.substr(colon);
    return Status::InvalidInput(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                                ": malformed JSON: " + detail);
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406 for a number such as 1e500.
    std::string what = e.what();
    auto close = what.find("] ");
    return Status::InvalidInput(source + ": invalid JSON: " +
                                (close == std::string::npos ? what : what.substr(close + 2)));
  }
}

std::string DescribeJsonValue(const nlohmann::json& v) {
  std::string s;
  if (v.is_object()) s = "an object";
  else if (v.is_array()) s = "an array";
  else if (v.is_null()) s = "null";
  else s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string DescribeIntRange(int64_t min, int64_t max) {
  if (max == JsonFields::kNoLimit) return "an integer >= " + std::to_string(min);
  return "an integer " + std::to_string(min) + ".." + std::to_string(max);
}

namespace {

std::string NumberText(double v) {
  nlohmann::json j = v;
  if (v == std::floor(v) && std::fabs(v) < 1e15) j = static_cast<int64_t>(v);
  return j.dump();
}

}  // namespace

std::string DescribeNumberRange(double min, double max, bool min_exclusive) {
  std::string s = std::string("a number ") + (min_exclusive ? "> " : ">= ") + NumberText(min);
  if (max < static_cast<double>(JsonFields::kNoLimit)) s += " and <= " + NumberText(max);
  return s;
}

JsonFields::JsonFields(const nlohmann::json& obj, std::string source, std::string path)
    : obj_(obj), source_(std::move(source)), path_(std::move(path)) {}

Status JsonFields::RequireObject(const nlohmann::json& v, const std::string& source,
                                 const std::string& path) {
  if (v.is_object()) return Status::Ok();
  return Status::InvalidInput(source + ": " + (path.empty() ? std::string("top level") : path) +
                              ": expected an object, got " + DescribeJsonValue(v));
}

bool JsonFields::Has(const std::string& key) const { return obj_.contains(key); }

std::string JsonFields::PathOf(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

Status JsonFields::Error(const std::string& key, const std::string& what) const {
  return Status::InvalidInput(source_ + ": " + PathOf(key) + ": " + what);
}

Status JsonFields::Missing(const std::string& key) const {
  return Error(key, "required field is missing");
}

const nlohmann::json* JsonFields::Get(const std::string& key, bool required, Status* st) {
  known_.insert(key);
  auto it = obj_.find(key);
  if (it == obj_.end()) {
    if (required) *st = Missing(key);
    return nullptr;
  }
  return &*it;
}

Status JsonFields::Int(const std::string& key, int64_t* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return Error(key, "expected an integer, got " + DescribeJsonValue(*v) + " (too large)");
  if (v->is_number_integer()) {
    *out = v->get<int64_t>();
    return Status::Ok();
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      *out = static_cast<int64_t>(d);
      return Status::Ok();
    }
  }
  return Error(key, "expected an integer, got " + DescribeJsonValue(*v));
}

Status JsonFields::Int(const std::string& key, int* out, bool required) {
  int64_t v = *out;
  EVALRUN_RETURN_IF_ERROR(Int(key, &v, required));
  if (v < INT32_MIN || v > INT32_MAX) return Error(key, "integer out of range: " + std::to_string(v));
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status JsonFields::IntIn(const std::string& key, int64_t min, int64_t max, int64_t* out, bool required) {
  int64_t v = *out;
  auto raw = obj_.find(key);
  if (raw != obj_.end() && raw->is_number_unsigned() && raw->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    known_.insert(key);
    return Error(key, "expected " + DescribeIntRange(min, max) + ", got " + DescribeJsonValue(*raw));
  }
  EVALRUN_RETURN_IF_ERROR(Int(key, &v, required));
  if (!Has(key)) return Status::Ok();
  if (v < min || v > max) return Error(key, "expected " + DescribeIntRange(min, max) + ", got " + std::to_string(v));
  *out = v;
  return Status::Ok();
}

Status JsonFields::IntIn(const std::string& key, int64_t min, int64_t max, int* out, bool required) {
  int64_t v = *out;
  EVALRUN_RETURN_IF_ERROR(IntIn(key, min, max, &v, required));
  if (v < INT32_MIN || v > INT32_MAX) return Error(key, "integer out of range: " + std::to_string(v));
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status JsonFields::DoubleIn(const std::string& key, double min, double max, double* out, bool min_exclusive) {
  double v = *out;
  EVALRUN_RETURN_IF_ERROR(Double(key, &v));
  if (!Has(key)) return Status::Ok();
  if ((min_exclusive ? v <= min : v < min) || v > max || !std::isfinite(v))
    return Error(key, "expected " + DescribeNumberRange(min, max, min_exclusive) + ", got " +
                          DescribeJsonValue(obj_.at(key)));
  *out = v;
  return Status::Ok();
}

Status JsonFields::Double(const std::string& key, double* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (!v->is_number()) return Error(key, "expected a number, got " + DescribeJsonValue(*v));
  *out = v->get<double>();
  return Status::Ok();
}

Status JsonFields::Bool(const std::string& key, bool* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (!v->is_boolean()) return Error(key, "expected true or false, got " + DescribeJsonValue(*v));
  *out = v->get<bool>();
  return Status::Ok();
}

Status JsonFields::String(const std::string& key, std::string* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (!v->is_string()) return Error(key, "expected a string, got " + DescribeJsonValue(*v));
  *out = v->get<std::string>();
  return Status::Ok();
}

Status JsonFields::StringList(const std::string& key, std::vector<std::string>* out,
                              bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (!v->is_array()) return Error(key, "expected an array of strings, got " + DescribeJsonValue(*v));
  std::vector<std::string> r;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string())
      return Error(key + "[" + std::to_string(i) + "]",
                   "expected a string, got " + DescribeJsonValue((*v)[i]));
    r.push_back((*v)[i].get<std::string>());
  }
  *out = std::move(r);
  return Status::Ok();
}

Status JsonFields::IntList(const std::string& key, std::vector<int64_t>* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  if (!v->is_array()) return Error(key, "expected an array of integers, got " + DescribeJsonValue(*v));
  std::vector<int64_t> r;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      return Error(key + "[" + std::to_string(i) + "]", "expected an integer, got " + DescribeJsonValue(e));
    r.push_back((*v)[i].get<int64_t>());
  }
  *out = std::move(r);
  return Status::Ok();
}

Status JsonFields::Enum(const std::string& key, const std::vector<std::string>& allowed,
                        std::string* out, bool required) {
  std::string s = *out;
  EVALRUN_RETURN_IF_ERROR(String(key, &s, required));
  if (!Has(key)) return Status::Ok();
  for (const auto& a : allowed) {
    if (a == s) {
      *out = s;
      return Status::Ok();
    }
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  return Error(key, "unknown value \"" + s + "\"" + DidYouMean(s, allowed) + "; expected one of " + list);
}

Status JsonFields::Raw(const std::string& key, nlohmann::json* out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  if (!v) return st;
  *out = *v;
  return Status::Ok();
}

Status JsonFields::Object(const std::string& key, const nlohmann::json** out, bool required) {
  Status st;
  const nlohmann::json* v = Get(key, required, &st);
  *out = nullptr;
  if (!v) return st;
  if (!v->is_object()) return Error(key, "expected an object, got " + DescribeJsonValue(*v));
  *out = v;
  return Status::Ok();
}

void JsonFields::Allow(const std::vector<std::string>& keys) {
  known_.insert(keys.begin(), keys.end());
}

Status JsonFields::Finish() const {
  std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (!known_.count(it.key())) {
      return Error(it.key(), "unknown field" + DidYouMean(it.key(), known));
    }
  }
  return Status::Ok();
}

namespace {

template <typename Keys>
const nlohmann::json& JsonAtKeys(const nlohmann::json& j, const Keys& path) {
  static const nlohmann::json kNull;
  const nlohmann::json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

}  // namespace

const nlohmann::json& JsonAt(const nlohmann::json& j, std::initializer_list<const char*> path) {
  return JsonAtKeys(j, path);
}

const nlohmann::json& JsonAt(const nlohmann::json& j, const std::vector<const char*>& path) {
  return JsonAtKeys(j, path);
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

}  // namespace evalrun
