// The keys a part takes in the card (`parts.<name>`), declared by the part
// itself (its PartDefinition, evals/run/part_registry.h), and the settings
// the card parser makes of them. One table per part drives the checks and
// their messages, the defaults, which keys belong to the run key, and the
// documentation (cards/README.md lists the same keys).
//
// Parsing names the file and the JSON path, with "did you mean" among the
// part's keys for an unknown one:
//   cards/x.json: parts.<name>.max_tokens: expected an integer, got "1k"
//   cards/x.json: parts.<name>.lengths[1]: 4096 is given twice
//
// Thread-safety: CardKey and PartSettings are plain values; reading
// settings from several threads is safe.
#ifndef EVALRUN_EVALS_RUN_CARD_KEYS_H_
#define EVALRUN_EVALS_RUN_CARD_KEYS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

enum class KeyType {
  kInt,         // an integer in [min, max] (max kNoMax: any int32 >= min)
  kNumber,      // a number in [min_number, max_number] (above min with min_exclusive)
  kBool,
  kEnum,        // one of `values`
  kText,        // a string of at least one byte (a file path, ...)
  kIntList,     // integers, each in [min, max] and given once, at least one
  kNameList,    // names, each passing `check_name` and given once, at least one
  kNameCounts,  // {name: integer >= min}, the names passing `check_name`
  kCount,       // an integer >= min for every name, or {name: integer >= min}
};

// One name of a kNameList / kNameCounts / kCount key: "" when it is fine,
// else what follows "<path>: " in the error ("unknown task \"vtt\"
// (did you mean \"vt\"?); known tasks: ...").
using NameCheck = std::function<std::string(const std::string& name)>;

using SettingValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>,
                                  std::vector<std::string>, std::map<std::string, int64_t>>;

struct CardKey {
  static constexpr int64_t kNoMax = INT64_MAX;

  std::string name;
  KeyType type = KeyType::kInt;
  std::string doc;                // one line, for people (the README says the same)
  SettingValue default_value;     // std::monostate: no fixed default (`doc` says what the part takes)
  int64_t min = 1, max = kNoMax;  // kInt, the entries of kIntList, the counts
  double min_number = 0, max_number = 0;
  bool min_exclusive = false;     // kNumber
  std::vector<std::string> values;  // kEnum
  std::string entry_word;         // lists and counts, in messages: "length", "task"
  std::string entry_unit;         // kIntList, in messages: " tokens"
  NameCheck check_name;           // names of kNameList / kNameCounts / kCount (may be empty)
  bool in_run_key = true;         // false: a count a resumed job may change (questions asked)

  // Builders for the tables the parts declare.
  static CardKey Int(std::string name, int64_t min, int64_t max, std::string doc);
  static CardKey Number(std::string name, double min, double max, bool min_exclusive, std::string doc);
  static CardKey Bool(std::string name, std::string doc);
  static CardKey Enum(std::string name, std::vector<std::string> values, std::string doc);
  static CardKey Text(std::string name, std::string doc);
  static CardKey IntList(std::string name, int64_t min, int64_t max, std::string entry_word,
                         std::string entry_unit, std::string doc);
  static CardKey NameList(std::string name, std::string entry_word, NameCheck check, std::string doc);
  static CardKey NameCounts(std::string name, std::string entry_word, NameCheck check, std::string doc);
  static CardKey Count(std::string name, std::string entry_word, NameCheck check, std::string doc);
  CardKey Default(SettingValue v) &&;
  CardKey OutOfRunKey() &&;
};

// The settings of one part as the card gives them, read through the part's
// keys: each getter returns the card's value, else the key's default, else
// `fallback`. Asking for a key the part did not declare, or with the getter
// of another type, is a programming error (aborts with the key's name).
class PartSettings {
 public:
  PartSettings() = default;
  // `keys` must outlive the settings (the registry's tables live forever).
  explicit PartSettings(const std::vector<CardKey>* keys) : keys_(keys) {}

  bool Has(const std::string& key) const;  // the card gives it
  int64_t Int(const std::string& key, int64_t fallback = 0) const;  // kInt; kCount given as one number
  double Number(const std::string& key, double fallback = 0) const;
  bool Bool(const std::string& key, bool fallback = false) const;
  std::string String(const std::string& key, const std::string& fallback = "") const;  // kEnum, kText
  std::vector<int64_t> IntList(const std::string& key) const;
  std::vector<std::string> NameList(const std::string& key) const;
  // kNameCounts; kCount given as an object ({} when given as one number).
  std::map<std::string, int64_t> Counts(const std::string& key) const;

  // Replaces a value (the runner leaves out a part's lengths over the server's
  // context before the part is prepared).
  void Set(const std::string& key, SettingValue value);

 private:
  const CardKey& KeyOf(const std::string& key, std::initializer_list<KeyType> types) const;
  const SettingValue* Value(const std::string& key) const;  // the card's, else the default; null if neither

  const std::vector<CardKey>* keys_ = nullptr;
  std::map<std::string, SettingValue> values_;
};

// Reads `obj` (the JSON of parts.<name>) against `keys`: every key checked,
// an unknown one refused with a near miss among `keys`. `path` is
// "parts.<name>"; messages start with "<source>: <path>.<key>: ".
// `also_known`: keys read by someone else (the request settings every part
// takes, evals/run/request_settings.h): not unknown, and near misses too.
Status ParsePartSettings(const std::vector<CardKey>& keys, const nlohmann::json& obj, const std::string& source,
                         const std::string& path, PartSettings* out,
                         const std::vector<std::string>& also_known = {});

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_CARD_KEYS_H_
