// libFuzzer target: what a hostile server controls. The first byte picks
//   0  HttpReplyReader (evals/server/http_reply.h) on the rest as the bytes
//      of a connection: fed whole, in two pieces split where the second
//      byte says, and in pieces of 1..8 bytes, it must end in the same
//      state with the same status, body, extra and error (the split is the
//      network's, never the meaning); a body never exceeds the limit; a
//      reply with bytes after it reports them in extra();
//   1  CheckJsonBounds / ParseJsonOrDiscarded (evals/base/json_bounds.h):
//      no crash at any depth; what the bound lets through and nlohmann
//      parses nests at most kMaxJsonDepth; a refusal names the source;
//   2  Redact (evals/base/redact.h): a registered key never survives.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/json_bounds.h"
#include "evals/base/redact.h"
#include "evals/server/http_reply.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

constexpr size_t kLimit = 4096;

struct Outcome {
  evalrun::HttpReplyReader::State state;
  int status;
  std::string body, error;
  size_t extra;
  bool operator==(const Outcome& o) const {
    return state == o.state && status == o.status && body == o.body && error == o.error && extra == o.extra;
  }
};

Outcome Feed(std::string_view bytes, const std::vector<size_t>& cuts, bool close) {
  evalrun::HttpReplyReader r(kLimit);
  size_t at = 0;
  for (size_t cut : cuts) {
    r.Feed(bytes.substr(at, cut - at));
    at = cut;
  }
  r.Feed(bytes.substr(at));
  if (close) r.End();
  Require(r.body().size() <= kLimit);
  if (r.too_big()) Require(r.state() == evalrun::HttpReplyReader::State::kBad);
  if (r.state() == evalrun::HttpReplyReader::State::kDone) Require(r.status() >= 100 && r.status() <= 999);
  if (r.state() != evalrun::HttpReplyReader::State::kDone) Require(r.extra() == 0);
  return {r.state(), r.status(), r.body(), r.error(), r.extra()};
}

void FuzzReply(std::string_view in) {
  if (in.empty()) return;
  const bool close = in[0] & 1;
  const size_t split = static_cast<uint8_t>(in[0]) % (in.size());
  const std::string_view bytes = in.substr(1);
  const Outcome whole = Feed(bytes, {}, close);
  Require(Feed(bytes, {std::min(split, bytes.size())}, close) == whole);
  std::vector<size_t> small;
  for (size_t at = 0, step = 1; at + step < bytes.size(); step = step % 8 + 1) small.push_back(at += step);
  Require(Feed(bytes, small, close) == whole);
}

int Depth(const nlohmann::json& j) {
  int most = 0;
  if (j.is_structured())
    for (const auto& v : j) most = std::max(most, Depth(v));
  return j.is_structured() ? most + 1 : 0;
}

void FuzzJson(std::string_view text) {
  const evalrun::Status st = evalrun::CheckJsonBounds(text, "fuzz");
  const nlohmann::json j = evalrun::ParseJsonOrDiscarded(text);
  if (!st.ok()) {
    Require(st.message().rfind("fuzz: ", 0) == 0);
    Require(j.is_discarded());
    return;
  }
  if (j.is_discarded()) return;
  Require(Depth(j) <= evalrun::kMaxJsonDepth);
}

void FuzzRedact(std::string_view text) {
  static const bool registered = (evalrun::RegisterSecret("fz-s3cret\"k"), true);
  (void)registered;
  const std::string out = evalrun::Redact(text);
  Require(out.find("fz-s3cret\"k") == std::string::npos);
  Require(out.find("fz-s3cret\\\"k") == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: FuzzReply(rest); break;
    case 1: FuzzJson(rest); break;
    default: FuzzRedact(rest); break;
  }
  return 0;
}
