// Reading a JSON object field by field with errors that name the file and
// the JSON path: "cards/x.json: parts.<name>.max_tokens: expected an
// integer, got \"1k\"". Parse at the edge: the card, manifests and recorded
// responses go through this once and become C++ structs.
//
// For documents only shown, not parsed (`compare`, `report` reading a run
// folder), JsonAt and JsonText read a value wherever it is, or nothing.
//
// Thread-safety: a JsonFields reads one document and belongs to one thread;
// the free functions are pure.
#ifndef EVALRUN_EVALS_BASE_JSON_FIELDS_H_
#define EVALRUN_EVALS_BASE_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/files.h"  // ReadFileToString, for the callers that read a file and parse it
#include "evals/base/status.h"

namespace evalrun {

// What ParseJsonText does with a key given twice in one object.
enum class DuplicateKeys {
  kLastWins,  // JSON's usual reading (run folders, manifests)
  kError,     // a person's input (cards): InvalidInput naming the key's path
};

// Parses `text` as JSON; on a syntax error the Status gives `source`, the
// line and the column. With DuplicateKeys::kError a repeated key is
// "source: server.name: duplicate key ...".
Status ParseJsonText(std::string_view text, const std::string& source, nlohmann::json* out,
                     DuplicateKeys duplicates = DuplicateKeys::kLastWins);

// "1k" -> "\"1k\"", 12 -> "12", objects abbreviated; for messages.
std::string DescribeJsonValue(const nlohmann::json& v);

// "an integer >= 1", "an integer 0..20", "a number > 0 and <= 600": the
// words after "expected" in a range error.
std::string DescribeIntRange(int64_t min, int64_t max);
std::string DescribeNumberRange(double min, double max, bool min_exclusive);

// Walks one JSON object. Each getter records the key as known; Finish()
// reports the first unknown key, with "did you mean" for near misses.
// Getters return InvalidInput naming `source: path.key`.
class JsonFields {
 public:
  // `obj` must outlive this. `path` is "" for the root, else "parts.<name>".
  JsonFields(const nlohmann::json& obj, std::string source, std::string path);

  // Fails unless the value is a JSON object.
  static Status RequireObject(const nlohmann::json& v, const std::string& source,
                              const std::string& path);

  bool Has(const std::string& key) const;
  std::string PathOf(const std::string& key) const;

  // Absent keys leave *out unchanged unless `required`.
  Status Int(const std::string& key, int64_t* out, bool required = false);
  Status Int(const std::string& key, int* out, bool required = false);
  Status Double(const std::string& key, double* out, bool required = false);
  Status Bool(const std::string& key, bool* out, bool required = false);
  Status String(const std::string& key, std::string* out, bool required = false);
  Status StringList(const std::string& key, std::vector<std::string>* out, bool required = false);
  Status IntList(const std::string& key, std::vector<int64_t>* out, bool required = false);
  // As Int / Double, and the value must lie within [min, max] (with
  // `min_exclusive`, above min): "expected an integer >= 1, got 0",
  // "expected a number > 0 and <= 604800, got -5". kNoLimit: no upper bound
  // in the message.
  static constexpr int64_t kNoLimit = INT64_MAX;
  Status IntIn(const std::string& key, int64_t min, int64_t max, int64_t* out, bool required = false);
  Status IntIn(const std::string& key, int64_t min, int64_t max, int* out, bool required = false);
  Status DoubleIn(const std::string& key, double min, double max, double* out, bool min_exclusive = false);
  // One of `allowed` (a string enum), with a near-miss hint.
  Status Enum(const std::string& key, const std::vector<std::string>& allowed, std::string* out,
              bool required = false);
  // Any JSON value, copied as is (descriptive objects such as `model`).
  Status Raw(const std::string& key, nlohmann::json* out, bool required = false);
  // A nested object: *out points into the document; `*present` false when absent.
  Status Object(const std::string& key, const nlohmann::json** out, bool required = false);
  // Marks keys as known without reading them (read by someone else, or
  // read only when present): they are then also the near misses Finish()
  // suggests.
  void Allow(const std::vector<std::string>& keys);

  Status Finish() const;

  Status Error(const std::string& key, const std::string& what) const;

 private:
  Status Missing(const std::string& key) const;
  const nlohmann::json* Get(const std::string& key, bool required, Status* st);

  const nlohmann::json& obj_;
  std::string source_;
  std::string path_;
  std::set<std::string> known_;
};

// ---- Lenient reading: documents shown as they are (compare, report) ----

// The value at `path` (object keys, outermost first); a null value when a
// step is missing or not an object. The reference lives as long as `j` (or
// forever, for the null).
const nlohmann::json& JsonAt(const nlohmann::json& j, std::initializer_list<const char*> path);
const nlohmann::json& JsonAt(const nlohmann::json& j, const std::vector<const char*>& path);

// A scalar as text: a string as it is, null as "", anything else as JSON.
std::string JsonText(const nlohmann::json& v);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_JSON_FIELDS_H_
