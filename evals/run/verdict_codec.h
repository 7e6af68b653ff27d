// The pieces of evals/run/sample_codec.h: a reader of one sample line with
// messages that name the line and the field, and the codec every verdict
// kind brings (its registration, evals/run/verdict_kind.h) that writes its
// fields into a line and reads them back.
//
// Thread-safety: a codec is stateless once registered; a reader reads one
// line on one thread.
#ifndef EVALRUN_EVALS_RUN_VERDICT_CODEC_H_
#define EVALRUN_EVALS_RUN_VERDICT_CODEC_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/verdict.h"

namespace evalrun::codec_internal {

// Typed reads of a line's fields. An absent (or, where allowed, null) field
// leaves *out as it is unless `required`; a wrong type is InvalidInput
// "<where>: <field>: expected ...".
class LineReader {
 public:
  LineReader(const nlohmann::json& line, std::string where) : line_(line), where_(std::move(where)) {}

  const nlohmann::json* Find(const std::string& key) const;
  Status String(const std::string& key, std::string* out, bool required = false) const;
  Status Bool(const std::string& key, bool* out, bool required = false) const;
  Status IntOrNull(const std::string& key, int* out) const;  // null: -1
  Status Strings(const std::string& key, std::vector<std::string>* out, bool required = false) const;
  Status Error(const std::string& field, const std::string& what) const;
  // " expected <what>" and, for a value present, ", got <value>".
  Status Expected(const std::string& field, const std::string& what, const nlohmann::json* got) const;

 private:
  const nlohmann::json& line_;
  std::string where_;
};

class VerdictCodec {
 public:
  virtual ~VerdictCodec() = default;
  // The keys this codec writes (none of them is an item field).
  virtual const std::vector<std::string>& Keys() const = 0;
  virtual void Encode(const Verdict& v, nlohmann::json* line) const = 0;
  virtual Status Decode(const LineReader& in, Verdict* out) const = 0;
};

// The codec of `kind` (its registration; aborts for a kind not registered).
const VerdictCodec& CodecFor(VerdictKind kind);

}  // namespace evalrun::codec_internal

#endif  // EVALRUN_EVALS_RUN_VERDICT_CODEC_H_
