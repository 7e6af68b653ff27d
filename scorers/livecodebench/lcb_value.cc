#include "scorers/livecodebench/lcb_value.h"

#include <cstdint>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// Parsing.

std::string NormalizedInt(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  size_t first = text.find_first_not_of('0');
  if (first == std::string_view::npos) return "0";
  return (negative ? "-" : "") + std::string(text.substr(first));
}

// json.loads keeps every integer exactly, of any length, where a JSON
// library's parser turns one too long for 64 bits into a double (and fails
// with "number overflow" beyond 1e308). Each integer literal of more than 18
// digits is set aside here, in the order of the document's numbers, and
// parsed as 0; the builder takes its digits back by that order.
// `numbers` gets one entry per number token: the literal, or "" when the
// token is parsed as it is.
std::string SetLongIntegersAside(std::string_view json, std::vector<std::string>* numbers) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (size_t i = 0; i < json.size();) {
    const char c = json[i];
    if (in_string || c == '"') {
      const bool escape = in_string && c == '\\' && i + 1 < json.size();
      if (c == '"') in_string = !in_string;
      out.append(json.substr(i, escape ? 2 : 1));
      i += escape ? 2 : 1;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < json.size() && std::string_view("0123456789.eE+-").find(json[end]) != std::string_view::npos) ++end;
    const std::string_view token = json.substr(i, end - i);
    const std::string_view digits = token.substr(c == '-' ? 1 : 0);
    const bool long_integer = digits.size() > 18 && digits[0] != '0' &&
                              digits.find_first_not_of("0123456789") == std::string_view::npos;
    numbers->push_back(long_integer ? std::string(token) : std::string());
    out.append(long_integer ? std::string_view("0") : token);
    i = end;
  }
  return out;
}

// json.loads into PyValues: integers of any size kept as text.
class ExpectedBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit ExpectedBuilder(std::vector<std::string> numbers) : numbers_(std::move(numbers)) {}

  PyValue root;

  bool null() override { return Put(PyValue{}); }
  bool boolean(bool b) override {
    PyValue v;
    v.kind = PyValue::kBool;
    v.boolean = b;
    return Put(std::move(v));
  }
  bool number_integer(number_integer_t n) override { return Int(SetAside(std::to_string(n))); }
  bool number_unsigned(number_unsigned_t n) override { return Int(SetAside(std::to_string(n))); }
  bool number_float(number_float_t x, const string_t&) override {
    SetAside("");
    PyValue v;
    v.kind = PyValue::kFloat;
    v.number = x;
    return Put(std::move(v));
  }
  bool string(string_t& s) override {
    PyValue v;
    v.kind = PyValue::kStr;
    v.text = s;
    return Put(std::move(v));
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return Open(PyValue::kDict); }
  bool key(string_t& k) override {
    PyValue v;
    v.kind = PyValue::kStr;
    v.text = k;
    stack_.back()->entries.emplace_back(std::move(v), PyValue{});
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(PyValue::kList); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  // The literal set aside for this number token, else `parsed`.
  std::string SetAside(std::string parsed) {
    const size_t k = next_number_++;
    return k < numbers_.size() && !numbers_[k].empty() ? numbers_[k] : parsed;
  }
  bool Int(const std::string& text) {
    PyValue v;
    v.kind = PyValue::kInt;
    v.int_text = NormalizedInt(text);
    return Put(std::move(v));
  }
  PyValue* Slot() {
    if (stack_.empty()) return &root;
    PyValue* top = stack_.back();
    if (top->kind == PyValue::kDict) return &top->entries.back().second;
    top->items.emplace_back();
    return &top->items.back();
  }
  bool Put(PyValue v) {
    *Slot() = std::move(v);
    return true;
  }
  bool Open(PyValue::Kind kind) {
    PyValue* slot = Slot();
    slot->kind = kind;
    stack_.push_back(slot);
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  std::vector<PyValue*> stack_;
  std::string error_;
  std::vector<std::string> numbers_;
  size_t next_number_ = 0;
};

Status DecodeTyped(const nlohmann::json& t, int depth, PyValue* out);

Status DecodeItems(const nlohmann::json& list, int depth, std::vector<PyValue>* out) {
  if (!list.is_array()) return Status::InvalidInput("typed value: items are not a list");
  out->resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) EVALRUN_RETURN_IF_ERROR(DecodeTyped(list[i], depth + 1, &(*out)[i]));
  return Status::Ok();
}

Status DecodeTaggedNumber(const nlohmann::json& t, PyValue* out) {
  if (t.contains("i")) {
    if (!t["i"].is_string()) return Status::InvalidInput("typed value: \"i\" is not a string");
    const std::string& s = t["i"].get_ref<const std::string&>();
    size_t digits = s.find_first_not_of('-') == 0 ? 0 : 1;
    if (s.size() <= digits || s.find_first_not_of("0123456789", digits) != std::string::npos)
      return Status::InvalidInput("typed value: \"i\" is not an integer");
    out->kind = PyValue::kInt;
    out->int_text = NormalizedInt(s);
    return Status::Ok();
  }
  if (!t["f"].is_string()) return Status::InvalidInput("typed value: \"f\" is not a string");
  const std::string& s = t["f"].get_ref<const std::string&>();
  char* end = nullptr;
  out->kind = PyValue::kFloat;
  out->number = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') return Status::InvalidInput("typed value: \"f\" is not a float");
  return Status::Ok();
}

Status DecodeArray(const nlohmann::json& t, int depth, PyValue* out) {
  out->kind = PyValue::kArray;
  size_t count = 1;
  if (!t["nd"].is_array()) return Status::InvalidInput("typed value: \"nd\" is not a shape");
  for (const auto& d : t["nd"]) {
    if (!d.is_number_unsigned()) return Status::InvalidInput("typed value: a dimension is not a size");
    out->shape.push_back(d.get<size_t>());
    count *= out->shape.back();
  }
  EVALRUN_RETURN_IF_ERROR(DecodeItems(t.value("v", nlohmann::json()), depth, &out->items));
  if (out->items.size() != count) return Status::InvalidInput("typed value: an array's items do not fill its shape");
  return Status::Ok();
}

Status DecodeObject(const nlohmann::json& t, int depth, PyValue* out) {
  out->numpy = t.contains("np");
  if (t.contains("i") || t.contains("f")) return DecodeTaggedNumber(t, out);
  if (t.contains("b") && t["b"].is_boolean()) {
    out->kind = PyValue::kBool;
    out->boolean = t["b"].get<bool>();
    return Status::Ok();
  }
  if (t.contains("t")) {
    out->kind = PyValue::kTuple;
    return DecodeItems(t["t"], depth, &out->items);
  }
  if (t.contains("nd")) return DecodeArray(t, depth, out);
  if (t.contains("d") && t["d"].is_array()) {
    out->kind = PyValue::kDict;
    for (const auto& pair : t["d"]) {
      if (!pair.is_array() || pair.size() != 2) return Status::InvalidInput("typed value: a dict entry is not a pair");
      out->entries.emplace_back();
      EVALRUN_RETURN_IF_ERROR(DecodeTyped(pair[0], depth + 1, &out->entries.back().first));
      EVALRUN_RETURN_IF_ERROR(DecodeTyped(pair[1], depth + 1, &out->entries.back().second));
    }
    return Status::Ok();
  }
  if (t.contains("o") && t["o"].is_string()) {
    out->kind = PyValue::kOther;
    out->text = t["o"].get<std::string>();
    return Status::Ok();
  }
  return Status::InvalidInput("typed value: an object of no known form");
}

Status DecodeTyped(const nlohmann::json& t, int depth, PyValue* out) {
  *out = PyValue();
  if (depth > 256) return Status::InvalidInput("typed value: nested too deep");
  if (t.is_null()) return Status::Ok();
  if (t.is_boolean()) {
    out->kind = PyValue::kBool;
    out->boolean = t.get<bool>();
    return Status::Ok();
  }
  if (t.is_string()) {
    out->kind = PyValue::kStr;
    out->text = t.get<std::string>();
    return Status::Ok();
  }
  if (t.is_array()) {
    out->kind = PyValue::kList;
    return DecodeItems(t, depth, &out->items);
  }
  if (t.is_object()) return DecodeObject(t, depth, out);
  return Status::InvalidInput("typed value: a bare number");
}

}  // namespace

Status ParseExpectedValue(std::string_view json_text, PyValue* out) {
  std::vector<std::string> numbers;
  const std::string text = SetLongIntegersAside(json_text, &numbers);
  ExpectedBuilder builder(std::move(numbers));
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &builder))
    return Status::InvalidInput("not JSON: " + builder.error());
  *out = std::move(builder.root);
  return Status::Ok();
}

Status DecodeTypedValue(const nlohmann::json& typed, PyValue* out) { return DecodeTyped(typed, 0, out); }

PyValue TuplesAsLists(PyValue v, bool deep) {
  if (v.kind == PyValue::kTuple) v.kind = PyValue::kList;
  if (!deep) return v;
  for (PyValue& item : v.items) item = TuplesAsLists(std::move(item), true);
  for (auto& [key, value] : v.entries) value = TuplesAsLists(std::move(value), true);
  return v;
}

}  // namespace evalrun
