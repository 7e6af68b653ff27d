#include "evals/run/sample_record.h"

#include <nlohmann/json.hpp>

namespace evalrun {

std::string FieldText(const FieldValue& v, std::string_view sep) {
  struct Visitor {
    std::string_view sep;
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return nlohmann::json(d).dump(); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<std::string>& l) const {
      std::string out;
      for (const auto& s : l) out += (out.empty() ? "" : std::string(sep)) + s;
      return out;
    }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string out;
      for (int64_t i : l) out += (out.empty() ? "" : std::string(sep)) + std::to_string(i);
      return out;
    }
  };
  return std::visit(Visitor{sep}, v);
}

const FieldValue* SampleRecord::Field(std::string_view name) const {
  for (const ItemField& f : fields)
    if (f.name == name) return &f.value;
  return nullptr;
}

std::string SampleRecord::Text(std::string_view name) const {
  if (name == "category") return category;
  const FieldValue* v = Field(name);
  return v ? FieldText(*v) : "";
}

int64_t SampleRecord::Int(std::string_view name, int64_t fallback) const {
  const FieldValue* v = Field(name);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

}  // namespace evalrun
