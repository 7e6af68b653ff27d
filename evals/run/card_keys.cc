#include "evals/run/card_keys.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "evals/base/json_fields.h"

namespace evalrun {
namespace {

[[noreturn]] void Misuse(const std::string& key, const char* what) {
  std::fprintf(stderr, "evalrun: internal error: card key \"%s\": %s\n", key.c_str(), what);
  std::abort();
}

// An integer list: at least one, each in [min, max], each once.
Status ParseIntList(JsonFields& f, const CardKey& k, std::vector<int64_t>* out) {
  EVALRUN_RETURN_IF_ERROR(f.IntList(k.name, out));
  if (out->empty()) return f.Error(k.name, "expected at least one " + k.entry_word + " (leave the field out for the default)");
  std::set<int64_t> seen;
  for (size_t i = 0; i < out->size(); ++i) {
    const int64_t v = (*out)[i];
    const std::string at = k.name + "[" + std::to_string(i) + "]";
    if (v < k.min || v > k.max)
      return f.Error(at, "each " + k.entry_word + " must be " + std::to_string(k.min) + ".." + std::to_string(k.max) +
                             k.entry_unit + ", got " + std::to_string(v));
    if (!seen.insert(v).second) return f.Error(at, std::to_string(v) + " is given twice");
  }
  return Status::Ok();
}

Status CheckName(const JsonFields& f, const CardKey& k, const std::string& at, const std::string& name) {
  if (!k.check_name) return Status::Ok();
  const std::string why = k.check_name(name);
  return why.empty() ? Status::Ok() : f.Error(at, why);
}

Status ParseNameList(JsonFields& f, const CardKey& k, std::vector<std::string>* out) {
  EVALRUN_RETURN_IF_ERROR(f.StringList(k.name, out));
  if (out->empty()) return f.Error(k.name, "expected at least one " + k.entry_word + " (leave the field out for the default)");
  std::set<std::string> seen;
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string at = k.name + "[" + std::to_string(i) + "]";
    EVALRUN_RETURN_IF_ERROR(CheckName(f, k, at, (*out)[i]));
    if (!seen.insert((*out)[i]).second) return f.Error(at, "\"" + (*out)[i] + "\" is given twice");
  }
  return Status::Ok();
}

// {name: integer >= min}; the names are checked at the key's own path.
Status ParseCounts(JsonFields& f, const CardKey& k, const nlohmann::json& m, std::map<std::string, int64_t>* out) {
  for (auto it = m.begin(); it != m.end(); ++it) {
    EVALRUN_RETURN_IF_ERROR(CheckName(f, k, k.name, it.key()));
    if (!it->is_number_integer() || it->get<int64_t>() < k.min || it->get<int64_t>() > INT32_MAX)
      return f.Error(k.name + "." + it.key(),
                     "expected " + DescribeIntRange(k.min, JsonFields::kNoLimit) + ", got " + DescribeJsonValue(*it));
    (*out)[it.key()] = it->get<int64_t>();
  }
  return Status::Ok();
}

Status ParseKey(JsonFields& f, const nlohmann::json& obj, const CardKey& k, SettingValue* out) {
  switch (k.type) {
    case KeyType::kInt: {
      int64_t v = 0;
      if (k.max == CardKey::kNoMax) {
        int narrow = 0;
        EVALRUN_RETURN_IF_ERROR(f.IntIn(k.name, k.min, JsonFields::kNoLimit, &narrow));
        v = narrow;
      } else {
        EVALRUN_RETURN_IF_ERROR(f.IntIn(k.name, k.min, k.max, &v));
      }
      *out = v;
      return Status::Ok();
    }
    case KeyType::kNumber: {
      double v = 0;
      EVALRUN_RETURN_IF_ERROR(f.DoubleIn(k.name, k.min_number, k.max_number, &v, k.min_exclusive));
      *out = v;
      return Status::Ok();
    }
    case KeyType::kBool: {
      bool v = false;
      EVALRUN_RETURN_IF_ERROR(f.Bool(k.name, &v));
      *out = v;
      return Status::Ok();
    }
    case KeyType::kEnum: {
      std::string v;
      EVALRUN_RETURN_IF_ERROR(f.Enum(k.name, k.values, &v));
      *out = v;
      return Status::Ok();
    }
    case KeyType::kText: {
      std::string v;
      EVALRUN_RETURN_IF_ERROR(f.String(k.name, &v));
      if (v.empty()) return f.Error(k.name, "expected a non-empty string");
      *out = v;
      return Status::Ok();
    }
    case KeyType::kIntList: {
      std::vector<int64_t> v;
      EVALRUN_RETURN_IF_ERROR(ParseIntList(f, k, &v));
      *out = std::move(v);
      return Status::Ok();
    }
    case KeyType::kNameList: {
      std::vector<std::string> v;
      EVALRUN_RETURN_IF_ERROR(ParseNameList(f, k, &v));
      *out = std::move(v);
      return Status::Ok();
    }
    case KeyType::kNameCounts: {
      const nlohmann::json* m = nullptr;
      EVALRUN_RETURN_IF_ERROR(f.Object(k.name, &m));
      std::map<std::string, int64_t> v;
      EVALRUN_RETURN_IF_ERROR(ParseCounts(f, k, *m, &v));
      *out = std::move(v);
      return Status::Ok();
    }
    case KeyType::kCount: {
      if (obj[k.name].is_object()) {
        std::map<std::string, int64_t> v;
        EVALRUN_RETURN_IF_ERROR(ParseCounts(f, k, obj[k.name], &v));
        *out = std::move(v);
        return Status::Ok();
      }
      int v = 0;
      EVALRUN_RETURN_IF_ERROR(f.Int(k.name, &v));
      if (v < k.min)
        return f.Error(k.name, "expected " + DescribeIntRange(k.min, JsonFields::kNoLimit) + " or an object {" +
                                   k.entry_word + ": count}");
      *out = static_cast<int64_t>(v);
      return Status::Ok();
    }
  }
  return Status::Internal("card key " + k.name + ": unknown type");
}

}  // namespace

CardKey CardKey::Int(std::string name, int64_t min, int64_t max, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kInt;
  k.min = min;
  k.max = max;
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::Number(std::string name, double min, double max, bool min_exclusive, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kNumber;
  k.min_number = min;
  k.max_number = max;
  k.min_exclusive = min_exclusive;
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::Bool(std::string name, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kBool;
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::Enum(std::string name, std::vector<std::string> values, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kEnum;
  k.values = std::move(values);
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::Text(std::string name, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kText;
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::IntList(std::string name, int64_t min, int64_t max, std::string entry_word, std::string entry_unit,
                         std::string doc) {
  CardKey k = Int(std::move(name), min, max, std::move(doc));
  k.type = KeyType::kIntList;
  k.entry_word = std::move(entry_word);
  k.entry_unit = std::move(entry_unit);
  return k;
}

CardKey CardKey::NameList(std::string name, std::string entry_word, NameCheck check, std::string doc) {
  CardKey k;
  k.name = std::move(name);
  k.type = KeyType::kNameList;
  k.entry_word = std::move(entry_word);
  k.check_name = std::move(check);
  k.doc = std::move(doc);
  return k;
}

CardKey CardKey::NameCounts(std::string name, std::string entry_word, NameCheck check, std::string doc) {
  CardKey k = NameList(std::move(name), std::move(entry_word), std::move(check), std::move(doc));
  k.type = KeyType::kNameCounts;
  return k;
}

CardKey CardKey::Count(std::string name, std::string entry_word, NameCheck check, std::string doc) {
  CardKey k = NameList(std::move(name), std::move(entry_word), std::move(check), std::move(doc));
  k.type = KeyType::kCount;
  return k;
}

CardKey CardKey::Default(SettingValue v) && {
  default_value = std::move(v);
  return std::move(*this);
}

CardKey CardKey::OutOfRunKey() && {
  in_run_key = false;
  return std::move(*this);
}

const CardKey& PartSettings::KeyOf(const std::string& key, std::initializer_list<KeyType> types) const {
  if (keys_) {
    for (const CardKey& k : *keys_) {
      if (k.name != key) continue;
      for (KeyType t : types)
        if (k.type == t) return k;
      Misuse(key, "read with the getter of another type");
    }
  }
  Misuse(key, "not declared by the part");
}

const SettingValue* PartSettings::Value(const std::string& key) const {
  auto it = values_.find(key);
  if (it != values_.end()) return &it->second;
  for (const CardKey& k : *keys_)
    if (k.name == key && !std::holds_alternative<std::monostate>(k.default_value)) return &k.default_value;
  return nullptr;
}

bool PartSettings::Has(const std::string& key) const {
  KeyOf(key, {KeyType::kInt, KeyType::kNumber, KeyType::kBool, KeyType::kEnum, KeyType::kText, KeyType::kIntList,
              KeyType::kNameList, KeyType::kNameCounts, KeyType::kCount});
  return values_.count(key) > 0;
}

int64_t PartSettings::Int(const std::string& key, int64_t fallback) const {
  KeyOf(key, {KeyType::kInt, KeyType::kCount});
  const SettingValue* v = Value(key);
  const int64_t* i = v ? std::get_if<int64_t>(v) : nullptr;
  return i ? *i : fallback;
}

double PartSettings::Number(const std::string& key, double fallback) const {
  KeyOf(key, {KeyType::kNumber});
  const SettingValue* v = Value(key);
  return v ? std::get<double>(*v) : fallback;
}

bool PartSettings::Bool(const std::string& key, bool fallback) const {
  KeyOf(key, {KeyType::kBool});
  const SettingValue* v = Value(key);
  return v ? std::get<bool>(*v) : fallback;
}

std::string PartSettings::String(const std::string& key, const std::string& fallback) const {
  KeyOf(key, {KeyType::kEnum, KeyType::kText});
  const SettingValue* v = Value(key);
  return v ? std::get<std::string>(*v) : fallback;
}

std::vector<int64_t> PartSettings::IntList(const std::string& key) const {
  KeyOf(key, {KeyType::kIntList});
  const SettingValue* v = Value(key);
  return v ? std::get<std::vector<int64_t>>(*v) : std::vector<int64_t>();
}

std::vector<std::string> PartSettings::NameList(const std::string& key) const {
  KeyOf(key, {KeyType::kNameList});
  const SettingValue* v = Value(key);
  return v ? std::get<std::vector<std::string>>(*v) : std::vector<std::string>();
}

std::map<std::string, int64_t> PartSettings::Counts(const std::string& key) const {
  KeyOf(key, {KeyType::kNameCounts, KeyType::kCount});
  const SettingValue* v = Value(key);
  const auto* m = v ? std::get_if<std::map<std::string, int64_t>>(v) : nullptr;
  return m ? *m : std::map<std::string, int64_t>();
}

void PartSettings::Set(const std::string& key, SettingValue value) {
  KeyOf(key, {KeyType::kInt, KeyType::kNumber, KeyType::kBool, KeyType::kEnum, KeyType::kText, KeyType::kIntList,
              KeyType::kNameList, KeyType::kNameCounts, KeyType::kCount});
  values_[key] = std::move(value);
}

Status ParsePartSettings(const std::vector<CardKey>& keys, const nlohmann::json& obj, const std::string& source,
                         const std::string& path, PartSettings* out, const std::vector<std::string>& also_known) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, source, path));
  *out = PartSettings(&keys);
  JsonFields f(obj, source, path);
  // Every key is a near miss for an unknown one, also those read only when present.
  std::vector<std::string> names;
  for (const CardKey& k : keys) names.push_back(k.name);
  names.insert(names.end(), also_known.begin(), also_known.end());
  f.Allow(names);
  for (const CardKey& k : keys) {
    if (!f.Has(k.name)) continue;
    SettingValue v;
    EVALRUN_RETURN_IF_ERROR(ParseKey(f, obj, k, &v));
    out->Set(k.name, std::move(v));
  }
  return f.Finish();
}

}  // namespace evalrun
