// Port of CPython 3.11: Modules/_randommodule.c (the generator, seeding,
// random(), getrandbits()) and Lib/random.py (everything above them).
#include "evals/base/py_random.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace evalrun {
namespace {

constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;

// random.py: TWOPI = 2.0 * _pi; NV_MAGICCONST = 4 * _exp(-0.5) / _sqrt(2.0).
constexpr double kTwoPi = 2.0 * 3.141592653589793;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "evalrun::PyRandom: %s\n", what);
  std::abort();
}

// Returns x rounded to double and opaque to the optimizer, so that
// `a + Opaque(b * c)` cannot become a fused multiply-add (Python rounds the
// product before adding).
inline double Opaque(double x) {
  volatile double v = x;
  return v;
}

int BitLength(uint64_t n) {
  int k = 0;
  while (n != 0) {
    ++k;
    n >>= 1;
  }
  return k;
}

}  // namespace

void Mt19937::InitGenrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < kN; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kN;
}

void Mt19937::InitByArray(const uint32_t* key, size_t key_length) {
  InitGenrand(19650218U);
  size_t i = 1;
  size_t j = 0;
  for (size_t k = (static_cast<size_t>(kN) > key_length ? kN : key_length); k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= static_cast<size_t>(kN)) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (size_t k = kN - 1; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) -
             static_cast<uint32_t>(i);
    ++i;
    if (i >= static_cast<size_t>(kN)) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;
}

void PyRandom::Seed(uint64_t seed) {
  // random_seed(): the key is |seed|'s 32-bit words, least significant
  // first, with no zero high word; seed 0 is the key [0].
  uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  mt_.InitByArray(key, key[1] != 0 ? 2 : 1);
  has_gauss_next_ = false;
  gauss_next_ = 0.0;
}

uint32_t Mt19937::NextUint32() {
  static constexpr uint32_t kMag01[2] = {0x0U, kMatrixA};
  uint32_t y;
  if (index_ >= kN) {
    int kk;
    for (kk = 0; kk < kN - kM; ++kk) {
      y = (mt_[kk] & kUpperMask) | (mt_[kk + 1] & kLowerMask);
      mt_[kk] = mt_[kk + kM] ^ (y >> 1) ^ kMag01[y & 0x1U];
    }
    for (; kk < kN - 1; ++kk) {
      y = (mt_[kk] & kUpperMask) | (mt_[kk + 1] & kLowerMask);
      mt_[kk] = mt_[kk + (kM - kN)] ^ (y >> 1) ^ kMag01[y & 0x1U];
    }
    y = (mt_[kN - 1] & kUpperMask) | (mt_[0] & kLowerMask);
    mt_[kN - 1] = mt_[kM - 1] ^ (y >> 1) ^ kMag01[y & 0x1U];
    index_ = 0;
  }
  y = mt_[index_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double PyRandom::Random() {
  // random_random(): 27 + 26 bits.
  uint32_t a = NextUint32() >> 5;
  uint32_t b = NextUint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t PyRandom::GetRandBits(int k) {
  if (k < 0 || k > 64) Fail("GetRandBits: k must be in [0, 64]");
  if (k == 0) return 0;
  if (k <= 32) return NextUint32() >> (32 - k);
  // Words from least to most significant; the last one keeps its top bits.
  uint64_t low = NextUint32();
  uint64_t high = NextUint32() >> (64 - k);
  return low | (high << 32);
}

uint64_t PyRandom::RandBelow(uint64_t n) {
  if (n == 0) Fail("RandBelow: n must be > 0");
  int k = BitLength(n);
  uint64_t r = GetRandBits(k);
  while (r >= n) r = GetRandBits(k);
  return r;
}

int64_t PyRandom::RandRange(int64_t start, int64_t stop) {
  if (start >= stop) Fail("RandRange: empty range (start >= stop)");
  uint64_t width = static_cast<uint64_t>(stop) - static_cast<uint64_t>(start);
  return static_cast<int64_t>(static_cast<uint64_t>(start) + RandBelow(width));
}

int64_t PyRandom::RandInt(int64_t a, int64_t b) {
  if (b == INT64_MAX) Fail("RandInt: b must be < INT64_MAX");
  return RandRange(a, b + 1);
}

double PyRandom::Uniform(double a, double b) { return a + Opaque((b - a) * Random()); }

double PyRandom::Gauss(double mu, double sigma) {
  double z;
  if (has_gauss_next_) {
    z = gauss_next_;
    has_gauss_next_ = false;
  } else {
    double x2pi = Random() * kTwoPi;
    double g2rad = std::sqrt(-2.0 * std::log(1.0 - Random()));
    z = std::cos(x2pi) * g2rad;
    gauss_next_ = std::sin(x2pi) * g2rad;
    has_gauss_next_ = true;
  }
  return mu + Opaque(z * sigma);
}

double PyRandom::NormalVariate(double mu, double sigma) {
  static const double kNvMagicConst = 4 * std::exp(-0.5) / std::sqrt(2.0);
  double z;
  while (true) {
    double u1 = Random();
    double u2 = 1.0 - Random();
    z = kNvMagicConst * (u1 - 0.5) / u2;
    double zz = z * z / 4.0;
    if (zz <= -std::log(u2)) break;
  }
  return mu + Opaque(z * sigma);
}

std::vector<size_t> PyRandom::Sample(size_t population, size_t k) {
  if (k > population) Fail("Sample: sample larger than population");
  const size_t n = population;
  std::vector<size_t> result(k);
  // setsize = 21; if k > 5: setsize += 4 ** _ceil(_log(k * 3, 4))
  uint64_t setsize = 21;
  if (k > 5) {
    double e = std::ceil(std::log(static_cast<double>(k) * 3.0) / std::log(4.0));
    setsize += (e >= 32) ? UINT64_MAX / 2 : (uint64_t{1} << (2 * static_cast<int>(e)));
  }
  if (n <= setsize) {
    std::vector<size_t> pool(n);
    for (size_t i = 0; i < n; ++i) pool[i] = i;
    for (size_t i = 0; i < k; ++i) {
      size_t j = static_cast<size_t>(RandBelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    std::unordered_set<size_t> selected;
    selected.reserve(k);
    for (size_t i = 0; i < k; ++i) {
      size_t j = static_cast<size_t>(RandBelow(n));
      while (selected.count(j)) j = static_cast<size_t>(RandBelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

}  // namespace evalrun
