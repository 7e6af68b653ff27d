#include "scorers/ifeval/ifeval_check_kit.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "evals/base/near_miss.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"

namespace evalrun::ifeval {

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Status Args::Init() const {
  if (kwargs_.is_null() || kwargs_.is_object()) return Status::Ok();
  return Status::InvalidInput("instruction " + Quote(id_) +
                              ": kwargs must be a JSON object, got " + kwargs_.dump());
}

const nlohmann::json* Args::Get(const std::string& name) const {
  if (!kwargs_.is_object()) return nullptr;
  auto it = kwargs_.find(name);
  if (it == kwargs_.end() || it->is_null()) return nullptr;
  return &*it;
}

Status Args::Int(const std::string& name, std::optional<int64_t>* out) {
  const nlohmann::json* v = Get(name);
  if (!v) return Status::Ok();
  if (!v->is_number_integer()) return Error(name, "expected an integer, got " + v->dump());
  *out = v->get<int64_t>();
  return Status::Ok();
}

Status Args::Str(const std::string& name, std::optional<std::string>* out) {
  const nlohmann::json* v = Get(name);
  if (!v) return Status::Ok();
  if (!v->is_string()) return Error(name, "expected a string, got " + v->dump());
  *out = v->get<std::string>();
  return Status::Ok();
}

Status Args::StrList(const std::string& name, std::optional<std::vector<std::string>>* out) {
  const nlohmann::json* v = Get(name);
  if (!v) return Status::Ok();
  if (!v->is_array()) return Error(name, "expected a list of strings, got " + v->dump());
  std::vector<std::string> items;
  for (const auto& item : *v) {
    if (!item.is_string()) return Error(name, "expected a list of strings, got " + v->dump());
    items.push_back(item.get<std::string>());
  }
  *out = std::move(items);
  return Status::Ok();
}

Status Args::Count(const std::string& name, int64_t* out) {
  std::optional<int64_t> v;
  EVALRUN_RETURN_IF_ERROR(Int(name, &v));
  if (!v) return Missing(name);
  if (*v < 0) return Error(name, "must be >= 0 (upstream draws a random value), got " + std::to_string(*v));
  *out = *v;
  return Status::Ok();
}

Status Args::Rel(const std::string& name, Relation* out) {
  std::optional<std::string> v;
  EVALRUN_RETURN_IF_ERROR(Str(name, &v));
  if (!v) return Missing(name);
  if (*v == "less than") {
    *out = Relation::kLessThan;
  } else if (*v == "at least") {
    *out = Relation::kAtLeast;
  } else {
    return Error(name, "expected \"less than\" or \"at least\", got " + Quote(*v));
  }
  return Status::Ok();
}

Status Args::CheckNames() const {
  if (!kwargs_.is_object()) return Status::Ok();
  for (auto it = kwargs_.begin(); it != kwargs_.end(); ++it) {
    if (it->is_null() || std::find(names_.begin(), names_.end(), it.key()) != names_.end()) {
      continue;
    }
    const std::string takes = names_.empty() ? "takes no arguments"
                                             : "does not take it" + DidYouMean(it.key(), names_);
    return Error(it.key(), takes);
  }
  return Status::Ok();
}

Status Args::Error(const std::string& name, const std::string& what) const {
  return Status::InvalidInput("instruction " + Quote(id_) + ": argument " + Quote(name) + ": " +
                              what);
}

Status Args::Missing(const std::string& name) const {
  return Error(name, "missing (upstream would draw a random value; evalrun requires it)");
}

Status CompilePattern(Args& args, const std::string& name, std::string_view pattern, bool ignore_case,
                      bool multiline, std::unique_ptr<const PyPattern>* out) {
  const Status st = PyPattern::Compile(pattern, ignore_case, multiline, out);
  if (!st.ok()) return args.Error(name, st.message());
  return Status::Ok();
}

const PunktModel& NeedPunkt(const IfevalResources& res, std::string_view id) {
  if (!res.punkt) {
    std::fprintf(stderr, "evalrun: internal error: %s needs IfevalResources::punkt\n",
                 std::string(id).c_str());
    std::abort();
  }
  return *res.punkt;
}

bool Detect(const IfevalResources& res, std::string_view id, std::string_view value,
            std::string* lang) {
  if (!res.lang) {
    std::fprintf(stderr, "evalrun: internal error: %s needs IfevalResources::lang\n",
                 std::string(id).c_str());
    std::abort();
  }
  return res.lang->Detect(value, lang);
}

}  // namespace evalrun::ifeval
