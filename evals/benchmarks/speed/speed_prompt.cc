#include "evals/benchmarks/speed/speed_prompt.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace evalrun {
namespace {

constexpr const char* kCodeTask =
    "Task: write a small Python module for a bicycle-sharing service. It needs a function "
    "plan_rebalancing(stations, trucks) that takes a list of stations (id, capacity, bikes now, bikes wanted "
    "by morning) and a list of trucks (id, capacity, start station) and returns a list of moves (truck, from, "
    "to, bikes) that brings every station as close to its wanted count as the trucks allow, never taking a "
    "station below zero or above its capacity. Explain the approach in a short docstring, keep each function "
    "under forty lines, handle the empty cases, and then write at least eight pytest tests, including one "
    "where the trucks cannot carry everything and one with a station that is already full. Give the whole "
    "module, then the tests, then a paragraph on the running time.";

constexpr const char* kProseTask =
    "Task: write a long, careful letter from the keeper of a small harbour lighthouse to the council that "
    "wants to replace her with an automatic lamp. Describe a whole winter night on duty hour by hour: the "
    "weather turning, the fishing boats coming in late, the one that does not answer the radio, what she "
    "does about it and how the night ends. Then answer the council's three arguments (cost, safety, the "
    "new technology) one by one, fairly, granting what is true in each. Keep a calm, exact tone, use plain "
    "words, and end with a proposal both sides could accept.";

constexpr const char* kLead = "The service log below is background only; it is not part of the task.\n";

// splitmix64: the same stream everywhere.
uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// One made-up log line, from its number.
std::string LogLine(size_t n) {
  static const char* const kLevels[] = {"INFO", "INFO", "INFO", "DEBUG", "WARN"};
  static const char* const kUnits[] = {"gateway", "scheduler", "billing", "inventory", "auth", "mailer"};
  static const char* const kPaths[] = {"/api/orders", "/api/stock", "/api/users/me", "/healthz", "/api/invoices",
                                       "/api/routes", "/static/app.js"};
  static const char* const kNotes[] = {"served", "cache miss, fetched", "retried once, served",
                                       "queued behind a slow job, served", "served from replica"};
  const uint64_t r = Mix(n * 2654435761ULL + 17);
  char buf[256];
  std::snprintf(buf, sizeof buf, "2026-03-%02u %02u:%02u:%02u.%03u %-5s %s[%u] %s %s?page=%u in %u.%u ms (status %u)\n",
                static_cast<unsigned>(1 + n / 86400 % 28), static_cast<unsigned>(n / 3600 % 24),
                static_cast<unsigned>(n / 60 % 60), static_cast<unsigned>(n % 60), static_cast<unsigned>(r % 1000),
                kLevels[(r >> 10) % 5], kUnits[(r >> 14) % 6], static_cast<unsigned>(1 + (r >> 18) % 8),
                kNotes[(r >> 22) % 5], kPaths[(r >> 26) % 7], static_cast<unsigned>(1 + (r >> 30) % 40),
                static_cast<unsigned>(1 + (r >> 36) % 250), static_cast<unsigned>((r >> 44) % 10),
                (r >> 48) % 23 == 0 ? 503u : 200u);
  return buf;
}

struct Search {
  Tokenizer* counter;
  std::string_view salt, task;
  int target;
  int* counts;
  size_t first_line = 0;
  std::string filler;
};

Status CountAt(Search* s, size_t chars, int* n, std::string* msg) {
  if (chars > s->filler.size()) s->filler = SpeedFiller(s->first_line, chars * 5 / 4 + 4096);
  *msg = SpeedMessage(s->salt, s->filler, chars, s->task);
  ++*s->counts;
  return s->counter->CountChat(*msg, n);
}

// The next cut to try between lo (under) and hi (over, npos: none yet).
size_t NextCut(size_t lo, int lo_n, size_t hi, int hi_n, int base, int target, int round) {
  if (hi == std::string::npos) {
    const double per_token = lo > 0 && lo_n > base ? static_cast<double>(lo) / (lo_n - base) : 4.0;
    return lo + static_cast<size_t>((target - lo_n) * per_token) + 1;
  }
  if (round % 3 == 2) return lo + (hi - lo) / 2;  // a bisection now and then: no stagnation
  const double f = static_cast<double>(target - lo_n) / std::max(1, hi_n - lo_n);
  const size_t at = lo + static_cast<size_t>(f * static_cast<double>(hi - lo));
  return std::clamp(at, lo + 1, hi - 1);
}

// One search from `first_line`, starting at `start`. *found: an exact cut;
// else *closest is updated and the search ended in a jump or out of counts.
Status SearchCut(Search* s, int base, size_t start, ExactPrompt* out, bool* found, int* closest) {
  size_t lo = 0, hi = std::string::npos;
  int lo_n = base, hi_n = 0;
  size_t chars = std::max<size_t>(start, 1);
  for (int round = 0; *s->counts < kMaxPromptCounts; ++round) {
    int n = 0;
    std::string msg;
    EVALRUN_RETURN_IF_ERROR(CountAt(s, chars, &n, &msg));
    if (std::abs(n - s->target) < std::abs(*closest - s->target)) *closest = n;
    if (n == s->target) {
      *found = true;
      out->message = std::move(msg);
      out->tokens = n;
      out->filler_chars = chars;
      out->first_line = s->first_line;
      return Status::Ok();
    }
    if (n < s->target) lo = chars, lo_n = n;
    else hi = chars, hi_n = n;
    if (hi != std::string::npos && hi - lo <= 1) return Status::Ok();  // a jump over the target
    chars = NextCut(lo, lo_n, hi, hi_n, base, s->target, round);
  }
  return Status::Ok();
}

}  // namespace

bool IsSpeedPromptId(std::string_view id) { return id == "code" || id == "prose"; }

std::string SpeedTaskText(std::string_view id) {
  if (id == "code") return kCodeTask;
  if (id == "prose") return kProseTask;
  return "";
}

std::string SpeedFiller(size_t first_line, size_t chars) {
  std::string out = kLead;
  out.reserve(chars + 256);
  for (size_t n = first_line; out.size() < chars; ++n) out += LogLine(n);
  return out;
}

std::string SpeedSalt(uint64_t nonce, uint64_t n) {
  const uint64_t v = Mix(nonce ^ Mix(n)) % 1000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "Session %012llu.", static_cast<unsigned long long>(v));
  return buf;
}

std::string SpeedMessage(std::string_view salt, std::string_view filler, size_t filler_chars, std::string_view task) {
  std::string m;
  filler_chars = std::min(filler_chars, filler.size());
  m.reserve(salt.size() + filler_chars + task.size() + 128);
  m.append(salt).append("\n");
  if (filler_chars > 0) m.append(filler.substr(0, filler_chars)).append("\n\n");
  m.append(task);
  return m;
}

Status FitExactPrompt(Tokenizer* counter, std::string_view salt, std::string_view task, int target,
                      const ExactPrompt* hint, ExactPrompt* out) {
  int counts = 0;
  Search s{counter, salt, task, target, &counts, 0, std::string()};
  int base = 0;
  std::string msg;
  EVALRUN_RETURN_IF_ERROR(CountAt(&s, 0, &base, &msg));
  if (base > target)
    return Status::InvalidInput("the salt and the task alone take " + std::to_string(base) + " prompt tokens, more " +
                                "than the " + std::to_string(target) + " asked");
  bool found = base == target;
  int closest = base;
  if (found) *out = ExactPrompt{std::move(msg), base, 0, 0, 0};
  for (size_t line = hint ? hint->first_line : 0, tries = 0; !found && tries < 8 && counts < kMaxPromptCounts;
       ++line, ++tries) {
    s.first_line = line;
    s.filler.clear();
    const bool use_hint = hint && tries == 0 && hint->filler_chars > 0;
    const size_t start = use_hint ? hint->filler_chars : static_cast<size_t>(target - base) * 4;
    EVALRUN_RETURN_IF_ERROR(SearchCut(&s, base, start, out, &found, &closest));
  }
  out->counts = counts;
  if (!found)
    return Status::InvalidInput("no prompt of exactly " + std::to_string(target) + " tokens found in " +
                                std::to_string(counts) + " counts (closest: " + std::to_string(closest) + ")");
  return Status::Ok();
}

}  // namespace evalrun
