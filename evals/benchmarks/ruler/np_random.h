// A bit-exact port of numpy's legacy global RNG, as far as RULER uses it.
//
// RULER's variable_tracking.py seeds numpy with np.random.seed(42) and draws
// each chain's value with np.random.randint(10000, 99999). NpRandom(s) draws
// what numpy 1.24's legacy RandomState (the np.random.* functions) draws for
// a non-negative int seed below 2**32:
//  * seeding: numpy/random/_mt19937.pyx _legacy_seeding -> mt19937_seed, i.e.
//    MT19937's init_genrand(seed) (not CPython's init_by_array);
//  * randint(low, high) with the default int64 dtype:
//    numpy/random/_bounded_integers.pyx _rand_int64 ->
//    random_bounded_uint64_fill (numpy/random/src/distributions/
//    distributions.c) with use_masked = true, as RandomState always asks:
//    rng = high - 1 - low; no draw when rng == 0; a range that fits 32 bits
//    draws 32-bit words and keeps the first (word & mask) <= rng, mask the
//    smallest 2**k - 1 >= rng; a wider range does the same on 64-bit words,
//    each made of two 32-bit draws, the first one the high half.
// Checked against Debian's numpy 1.24.2 (tests/benchmarks/ruler/ruler_np_random_test.cc).
//
// Preconditions (low < high) are numpy's ValueError; violating one is a bug
// in the caller and aborts with a message. Thread-compatible value type:
// copying copies the whole state.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_NP_RANDOM_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_NP_RANDOM_H_

#include <cstdint>

#include "evals/base/py_random.h"

namespace evalrun {

class NpRandom {
 public:
  // == np.random.seed(seed).
  explicit NpRandom(uint32_t seed) { Seed(seed); }
  void Seed(uint32_t seed) { mt_.InitGenrand(seed); }

  // == np.random.randint(low, high): uniform in [low, high), high excluded.
  // Requires low < high.
  int64_t RandInt(int64_t low, int64_t high);

  // One 32-bit word of the generator (what the bounded draws consume).
  uint32_t NextUint32() { return mt_.NextUint32(); }

 private:
  Mt19937 mt_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_NP_RANDOM_H_
