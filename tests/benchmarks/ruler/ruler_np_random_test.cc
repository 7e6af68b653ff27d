// NpRandom (evals/benchmarks/ruler/np_random.h) against Debian's numpy 1.24.2. Every expected
// value was printed by /usr/bin/python3 with numpy's legacy global RNG, e.g.
//   np.random.seed(42); [int(np.random.randint(10000, 99999)) for _ in range(8)]
#include "evals/benchmarks/ruler/np_random.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "evals/base/sha256.h"

namespace evalrun {
namespace {

std::vector<int64_t> Draws(uint32_t seed, int64_t low, int64_t high, int n) {
  NpRandom r(seed);
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(r.RandInt(low, high));
  return v;
}

TEST(RulerNpRandom, VtValuesAsNumpyDrawsThem) {
  EXPECT_EQ(Draws(42, 10000, 99999, 8),
            (std::vector<int64_t>{25795, 10860, 86820, 64886, 16265, 92386, 47194, 97498}));
  // ','.join(str(np.random.randint(10000, 99999)) for _ in range(100000)) after seed(42).
  NpRandom r(42);
  std::string s;
  for (int i = 0; i < 100000; ++i) s += (i ? "," : "") + std::to_string(r.RandInt(10000, 99999));
  EXPECT_EQ(Sha256Hex(s), "616f35f1c6d70a390cceff441902124a8de61268350e5b3033f256bd5d3e32ea");
}

TEST(RulerNpRandom, OtherSeedsAndRanges) {
  EXPECT_EQ(Draws(0, 0, 7, 8), (std::vector<int64_t>{4, 5, 0, 3, 3, 3, 1, 3}));
  // 64-bit masked path (two words per try, the first the high half).
  EXPECT_EQ(Draws(4294967295u, -5, int64_t{1} << 40, 4),
            (std::vector<int64_t>{53956357186, 922432766453, 547627168374, 1042369230950}));
  EXPECT_EQ(Draws(7, INT64_MIN, INT64_MAX, 3),
            (std::vector<int64_t>{-7815732517915138876, 5163590386780219894, -1136149262272507693}));
  // rng == 2**32 - 1: one unmasked word.
  EXPECT_EQ(Draws(123, 0, int64_t{1} << 32, 3),
            (std::vector<int64_t>{2991312382, 3062119789, 1228959102}));
  // A one-value range draws nothing: the next draw is the first of seed 42.
  NpRandom r(42);
  EXPECT_EQ(r.RandInt(5, 6), 5);
  EXPECT_EQ(r.RandInt(5, 6), 5);
  EXPECT_EQ(r.RandInt(10000, 99999), 25795);
}

}  // namespace
}  // namespace evalrun
