#include "evals/base/near_miss.h"

#include <algorithm>

namespace evalrun {
namespace {

// "retries" -> "retry", "slots" -> "slot"; other words as they are.
std::string Singular(std::string_view w) {
  std::string s(w);
  if (s.size() > 4 && s.compare(s.size() - 3, 3, "ies") == 0) return s.substr(0, s.size() - 3) + "y";
  if (s.size() > 3 && s.back() == 's' && s[s.size() - 2] != 's') s.pop_back();
  return s;
}

}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions.
  const size_t n = b.size();
  std::vector<int> prev2(n + 1), prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= n; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[n];
}

std::string NearestName(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  const std::string typed_one = Singular(typed);
  for (const auto& c : candidates) {
    const int d = std::min(EditDistance(typed, c), EditDistance(typed_one, Singular(c)));
    if (d < best_d) best_d = d, best = c;
  }
  int limit = std::max<int>(1, static_cast<int>(typed.size()) / 3);
  return best_d <= limit ? best : "";
}

std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string n = NearestName(typed, candidates);
  return n.empty() ? "" : " (did you mean \"" + n + "\"?)";
}

}  // namespace evalrun
