// PyRandom against CPython 3.11.2's random.Random. Every expected value below
// was printed by python3 (doubles with '%.17g'), e.g.
//   r = random.Random(42); [r._randbelow(n) for n in (1, 2, 3, ...)]
#include "evals/base/py_random.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace evalrun {
namespace {

TEST(PyRandomTest, RandomMatchesCPythonForSeveralSeeds) {
  struct Case {
    uint64_t seed;
    double want[6];
  };
  const Case cases[] = {
      {0,
       {0.84442185152504812, 0.75795440294030247, 0.420571580830845, 0.25891675029296335,
        0.51127472136860852, 0.40493413745041429}},
      {1,
       {0.13436424411240122, 0.84743373693723267, 0.76377461897661403, 0.2550690257394217,
        0.49543508709194095, 0.44949106478873813}},
      {42,
       {0.63942679845788375, 0.025010755222666936, 0.27502931836911926, 0.22321073814882275,
        0.7364712141640124, 0.67669948742291131}},
      // 2**32: the key has two words, [0, 1].
      {4294967296ULL,
       {0.11299430095636409, 0.41782886486292836, 0.016676366499229101, 0.6117214625782752,
        0.80564702125141852, 0.33151119826617415}},
      {123456789012345ULL,
       {0.67447500840193564, 0.2923275784421222, 0.22484093741322975, 0.5248293643952946,
        0.11515319064359752, 0.67915190152929716}},
      {18446744073709551615ULL,
       {0.021825695401270107, 0.33809532686137578, 0.21196748656082065, 0.61512599956257275,
        0.91957098171719831, 0.37104421681160282}},
  };
  for (const Case& c : cases) {
    PyRandom rng(c.seed);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(rng.Random(), c.want[i]) << "seed " << c.seed << " draw " << i;
    }
  }
}

TEST(PyRandomTest, GetRandBitsMatchesCPython) {
  PyRandom rng(0);
  const int ks[] = {1, 5, 31, 32, 33, 48, 63, 64, 0, 17};
  const uint64_t want[] = {1ULL,
                           12ULL,
                           1627694678ULL,
                           3823568514ULL,
                           1806341205ULL,
                           271752282791482ULL,
                           4481891911369680482ULL,
                           16938433693753131896ULL,
                           0ULL,
                           102734ULL};
  for (size_t i = 0; i < std::size(ks); ++i) {
    EXPECT_EQ(rng.GetRandBits(ks[i]), want[i]) << "k=" << ks[i];
  }
}

TEST(PyRandomTest, RandBelowRandRangeRandIntMatchCPython) {
  PyRandom rng(42);
  const uint64_t ns[] = {1, 2, 3, 10, 1000, 1ULL << 32, (1ULL << 32) + 1, (1ULL << 53) + 7,
                         18446744073709551615ULL};
  const uint64_t want_below[] = {0ULL,         0ULL,          2ULL,
                                 4ULL,         250ULL,        958682846ULL,
                                 3163119785ULL, 572546722501017ULL, 1728372192399379054ULL};
  for (size_t i = 0; i < std::size(ns); ++i) {
    EXPECT_EQ(rng.RandBelow(ns[i]), want_below[i]) << "n=" << ns[i];
  }
  const int64_t want_range[] = {1, 2, 11, 14, -5, 12};
  for (int64_t w : want_range) EXPECT_EQ(rng.RandRange(-5, 17), w);
  const int64_t want_int[] = {2, 6, 6, 6, 5, 4, 2, 4, 5, 3};
  for (int64_t w : want_int) EXPECT_EQ(rng.RandInt(1, 6), w);
  // randrange(-2**63, 2**63 - 1): a 64-bit width.
  const int64_t want_big[] = {6812388553834026379LL, 4774153202355005215LL,
                              -6278177563977569347LL};
  for (int64_t w : want_big) EXPECT_EQ(rng.RandRange(INT64_MIN, INT64_MAX), w);
}

TEST(PyRandomTest, UniformGaussNormalVariateMatchCPython) {
  PyRandom rng(7);
  EXPECT_EQ(rng.Uniform(-2.5, 7.25), 0.65736945712333306);
  EXPECT_EQ(rng.Uniform(-2.5, 7.25), -1.0292205542361064);
  EXPECT_EQ(rng.Uniform(-2.5, 7.25), 3.8466111121385742);
  // Five calls: pairs, then one left in gauss_next.
  const double want_gauss[] = {3.72582970509107, 2.5893180380899672, 1.0405490353159492,
                               2.0166195068687429, 0.94767151331880983};
  for (double w : want_gauss) EXPECT_EQ(rng.Gauss(1.5, 2.0), w);
  // normalvariate does not use gauss_next; it draws from random().
  EXPECT_EQ(rng.NormalVariate(0.0, 1.0), -0.12238169765908341);
  EXPECT_EQ(rng.NormalVariate(0.0, 1.0), -1.2200983564158068);
  EXPECT_EQ(rng.NormalVariate(0.0, 1.0), 0.63995109743502077);
  // seed() forgets the cached gauss value.
  rng.Seed(7);
  EXPECT_EQ(rng.Gauss(0.0, 1.0), -0.25588028844760041);
  EXPECT_EQ(rng.Random(), 0.65093447303985374);
}

TEST(PyRandomTest, ShuffleAndChoiceMatchCPython) {
  PyRandom rng(0);
  std::vector<int> v(20);
  std::iota(v.begin(), v.end(), 0);
  rng.Shuffle(&v);
  EXPECT_EQ(v, (std::vector<int>{10, 18, 16, 14, 0, 17, 11, 2, 3, 9, 5, 7, 4, 19, 6, 15, 8,
                                 1, 13, 12}));
  // random.choice(range(7)) eight times.
  const size_t want[] = {2, 0, 5, 0, 6, 5, 2, 3};
  for (size_t w : want) EXPECT_EQ(rng.Choice(7), w);
}

TEST(PyRandomTest, SampleMatchesCPythonInBothBranches) {
  PyRandom rng(42);
  using V = std::vector<size_t>;
  EXPECT_EQ(rng.Sample(10, 4), (V{1, 0, 4, 9}));                          // pool
  EXPECT_EQ(rng.Sample(1000, 7), (V{228, 142, 754, 104, 692, 758, 913}));  // set
  EXPECT_EQ(rng.Sample(50, 20), (V{34, 5, 37, 27, 2, 1, 48, 13, 14, 32, 38, 44, 35, 12, 49,
                                   26, 41, 28, 17, 25}));  // pool: setsize 85
  EXPECT_EQ(rng.Sample(100000, 30),
            (V{851,   99458, 20926, 91506, 55392, 44597, 36421, 20379, 28221, 44118,
               13396, 12156, 49797, 12676, 47052, 45082, 79131, 34671, 5695,  95647,
               60217, 70284, 16361, 49615, 10328, 72357, 38427, 82397, 81070, 47400}));
  EXPECT_EQ(rng.Sample(5, 5), (V{4, 1, 2, 0, 3}));
  EXPECT_EQ(rng.Sample(5, 0), V{});
  // k = 6: setsize = 21 + 4**3 = 85. 86 takes the set branch (one redraw
  // here), 85 the pool branch.
  EXPECT_EQ(rng.Sample(86, 6), (V{84, 29, 37, 10, 12, 48}));
  EXPECT_EQ(rng.Sample(85, 6), (V{35, 58, 81, 46, 20, 47}));
  EXPECT_EQ(rng.Sample(22, 5), (V{11, 6, 21, 8, 20}));  // set branch, one redraw
  EXPECT_EQ(rng.Sample(22, 5), (V{2, 19, 20, 5, 17}));
  EXPECT_EQ(rng.Sample(22, 5), (V{7, 5, 14, 12, 8}));
  EXPECT_EQ(rng.Sample(22, 5), (V{20, 17, 7, 21, 10}));
  // The redraws consumed exactly what CPython's did.
  EXPECT_EQ(rng.Random(), 0.84285192018980959);
}

TEST(PyRandomTest, LongInterleavedSequenceMatchesCPython) {
  // 3000 mixed calls (several state regenerations), folded as in Python:
  //   m = i % 5: getrandbits(1 + i % 64) | random() | _randbelow(1 + i * 7919)
  //              | gauss(0.0, 1.0) | randrange(-1000, 1000)
  PyRandom rng(18446744073709551615ULL);
  uint64_t acc = 0;
  double facc = 0.0;
  for (int i = 0; i < 3000; ++i) {
    switch (i % 5) {
      case 0: acc = acc * 31 + rng.GetRandBits(1 + i % 64); break;
      case 1: facc += rng.Random(); break;
      case 2: acc = acc * 31 + rng.RandBelow(1 + static_cast<uint64_t>(i) * 7919); break;
      case 3: facc += rng.Gauss(0.0, 1.0); break;
      default: acc = acc * 31 + static_cast<uint64_t>(rng.RandRange(-1000, 1000)); break;
    }
  }
  EXPECT_EQ(acc, 6722235058885642119ULL);
  EXPECT_EQ(facc, 311.66017425696168);
  EXPECT_EQ(rng.Random(), 0.27461463576850953);
  EXPECT_EQ(rng.GetRandBits(64), 17598841861951857138ULL);
}

TEST(PyRandomTest, CopyClonesTheState) {
  PyRandom a(0);
  a.Gauss(0.0, 1.0);  // leaves gauss_next cached
  PyRandom b = a;
  EXPECT_EQ(a.Gauss(0.0, 1.0), b.Gauss(0.0, 1.0));
  EXPECT_EQ(a.Random(), b.Random());
}

}  // namespace
}  // namespace evalrun
