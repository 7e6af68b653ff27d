#include "evals/near_miss.h"

#include <algorithm>

namespace evalrun {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string NearestName(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    int d = EditDistance(typed, c);
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
