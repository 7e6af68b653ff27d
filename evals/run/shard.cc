#include "evals/run/shard.h"

#include <cerrno>
#include <cstdlib>

#include "evals/base/sha256.h"

namespace evalrun {
namespace {

constexpr long kMaxShards = 100000;

bool ParsePositive(const std::string& s, long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

Status ParseShard(const std::string& text, const std::string& flag, ShardSpec* out) {
  const std::string expected = flag + ": expected I/N with 1 <= I <= N (e.g. 2/8), got \"" + text + "\"";
  const size_t slash = text.find('/');
  long i = 0, n = 0;
  if (slash == std::string::npos || !ParsePositive(text.substr(0, slash), &i) ||
      !ParsePositive(text.substr(slash + 1), &n))
    return Status::InvalidInput(expected);
  if (n < 1 || n > kMaxShards) return Status::InvalidInput(expected + ": N must be 1 to " + std::to_string(kMaxShards));
  if (i == 0)
    return Status::InvalidInput(expected + ": I counts from 1 (a 0-based index, such as Kubernetes' "
                                "JOB_COMPLETION_INDEX, is I - 1: use --shard auto, or $((JOB_COMPLETION_INDEX + 1))/N)");
  if (i > n) return Status::InvalidInput(expected + ": I is larger than N");
  out->index = static_cast<int>(i);
  out->count = static_cast<int>(n);
  return Status::Ok();
}

std::string RunKeyDigest(const nlohmann::json& run_key) { return Sha256Hex(run_key.dump()); }

int ShardOfItem(const std::string& key_digest, const std::string& id, int count) {
  const std::string hex = Sha256Hex(key_digest + "\n" + id);
  const uint64_t h = std::strtoull(hex.substr(0, 16).c_str(), nullptr, 16);
  return static_cast<int>(h % static_cast<uint64_t>(count)) + 1;
}

}  // namespace evalrun
