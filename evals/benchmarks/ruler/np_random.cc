// Port of numpy 1.24: numpy/random/src/distributions/distributions.c
// (random_bounded_uint64_fill, buffered_bounded_masked_uint32,
// bounded_masked_uint64, gen_mask) and numpy/random/src/mt19937/mt19937.h
// (mt19937_next64).
#include "evals/benchmarks/ruler/np_random.h"

#include <cstdio>
#include <cstdlib>

namespace evalrun {
namespace {

// The smallest 2**k - 1 >= max.
uint64_t GenMask(uint64_t max) {
  uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

}  // namespace

int64_t NpRandom::RandInt(int64_t low, int64_t high) {
  if (low >= high) {
    std::fprintf(stderr, "evalrun::NpRandom: RandInt: low >= high\n");
    std::abort();
  }
  const uint64_t rng = static_cast<uint64_t>(high) - 1 - static_cast<uint64_t>(low);
  const uint64_t off = static_cast<uint64_t>(low);
  if (rng == 0) return low;
  uint64_t val = 0;
  if (rng <= 0xFFFFFFFFULL) {
    if (rng == 0xFFFFFFFFULL) {
      val = NextUint32();
    } else {
      const uint32_t mask = static_cast<uint32_t>(GenMask(rng));
      do {
        val = NextUint32() & mask;
      } while (val > rng);
    }
  } else {
    const uint64_t mask = GenMask(rng);
    do {
      const uint64_t hi = NextUint32();
      const uint64_t lo = NextUint32();
      val = (hi << 32 | lo);
      if (rng == ~0ULL) break;
      val &= mask;
    } while (val > rng);
  }
  return static_cast<int64_t>(off + val);
}

}  // namespace evalrun
