#include "evals/base/selection.h"

#include <algorithm>
#include <map>

namespace evalrun {

uint64_t SelectionKey(int64_t seed, std::string_view id) {
  std::string s = std::to_string(seed) + ":" + std::string(id);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h += 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

std::vector<size_t> StratifiedSample(const std::vector<std::string>& ids,
                                     const std::vector<std::string>& categories, int n,
                                     int64_t seed) {
  const size_t total = ids.size();
  std::vector<size_t> out;
  if (n < 0 || static_cast<size_t>(n) >= total) {
    for (size_t i = 0; i < total; ++i) out.push_back(i);
    return out;
  }
  std::map<std::string, std::vector<size_t>> groups;  // ordered by name: portable
  for (size_t i = 0; i < total; ++i) groups[categories[i]].push_back(i);

  struct Quota { std::string name; size_t size; size_t take; uint64_t rem; };
  std::vector<Quota> q;
  size_t given = 0;
  for (auto& [name, idx] : groups) {
    // Integer arithmetic: exact share = n * size / total.
    uint64_t num = static_cast<uint64_t>(n) * idx.size();
    q.push_back({name, idx.size(), static_cast<size_t>(num / total), num % total});
    given += q.back().take;
  }
  std::vector<size_t> order(q.size());
  for (size_t i = 0; i < q.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (q[a].rem != q[b].rem) return q[a].rem > q[b].rem;
    if (q[a].size != q[b].size) return q[a].size > q[b].size;
    return q[a].name < q[b].name;
  });
  for (size_t k = 0; given < static_cast<size_t>(n); k = (k + 1) % order.size()) {
    Quota& g = q[order[k]];
    if (g.take < g.size) ++g.take, ++given;
  }
  for (const auto& g : q) {
    if (g.take == 0) continue;
    // Each key once, not once per comparison.
    std::vector<std::pair<uint64_t, size_t>> keyed;
    keyed.reserve(g.size);
    for (size_t i : groups[g.name]) keyed.emplace_back(SelectionKey(seed, ids[i]), i);
    std::sort(keyed.begin(), keyed.end());  // by key, then index
    for (size_t k = 0; k < g.take; ++k) out.push_back(keyed[k].second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace evalrun
