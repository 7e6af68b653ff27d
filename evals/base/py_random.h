// A bit-exact port of CPython 3.11's random.Random.
//
// Tools whose answers depend on Python's random draws (langdetect's n-gram
// sampling, a Python haystack generator) need the same numbers in the same
// order. PyRandom(s) draws exactly what random.Random(s) draws, method for
// method, for non-negative int seeds: the Mersenne Twister (MT19937) with
// CPython's init_by_array seeding from the seed's 32-bit words
// (Modules/_randommodule.c) and the methods of Lib/random.py.
//
// Doubles match bit for bit as long as this is built without -ffast-math
// (Gauss, NormalVariate use the C library's log, sqrt, sin, cos, exp, as
// CPython does; Uniform and Gauss are guarded against FMA contraction).
//
// Preconditions are Python's ValueError / IndexError cases; violating one is
// a bug in the caller and aborts with a message (Python would raise).
//
// Thread-compatible: one instance per thread (or external locking). Copying
// copies the whole state, so a seeded generator can be cloned cheaply.
#ifndef EVALRUN_EVALS_BASE_PY_RANDOM_H_
#define EVALRUN_EVALS_BASE_PY_RANDOM_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace evalrun {

// The Mersenne Twister MT19937 (Matsumoto & Nishimura's mt19937ar.c), the
// generator under both CPython's random and numpy's legacy RandomState
// (NpRandom, in the folder of the benchmark that draws from it). Copyable
// value type.
class Mt19937 {
 public:
  // init_genrand(s): the seeding numpy's np.random.seed(int) uses.
  void InitGenrand(uint32_t s);
  // init_by_array(key): the seeding CPython's random.seed(int) uses.
  void InitByArray(const uint32_t* key, size_t key_length);
  // genrand_uint32().
  uint32_t NextUint32();

 private:
  static constexpr int kN = 624;
  uint32_t mt_[kN];
  int index_ = kN + 1;
};

class PyRandom {
 public:
  // == random.Random(seed).
  explicit PyRandom(uint64_t seed) { Seed(seed); }

  // == rng.seed(seed): resets the state and forgets a cached gauss value.
  void Seed(uint64_t seed);

  // == rng.random(): a double in [0, 1) with 53 random bits.
  double Random();

  // == rng.getrandbits(k), 0 <= k <= 64.
  uint64_t GetRandBits(int k);

  // == rng._randbelow(n): uniform in [0, n) by rejection on getrandbits
  // (n.bit_length() bits per try). Requires n > 0.
  uint64_t RandBelow(uint64_t n);

  // == rng.randrange(start, stop). Requires start < stop.
  int64_t RandRange(int64_t start, int64_t stop);

  // == rng.randint(a, b), both ends included. Requires a <= b < INT64_MAX.
  int64_t RandInt(int64_t a, int64_t b);

  // == rng.uniform(a, b): a + (b - a) * random().
  double Uniform(double a, double b);

  // == rng.gauss(mu, sigma): Box-Muller; every second call returns the value
  // cached by the previous one (gauss_next), which Seed() clears.
  double Gauss(double mu, double sigma);

  // == rng.normalvariate(mu, sigma) (Kinderman-Monahan).
  double NormalVariate(double mu, double sigma);

  // == rng.shuffle(v), in place.
  template <class T>
  void Shuffle(std::vector<T>* v) {
    for (size_t i = v->size(); i-- > 1;) {
      size_t j = static_cast<size_t>(RandBelow(i + 1));
      std::swap((*v)[i], (*v)[j]);
    }
  }

  // == rng.sample(range(population), k): k distinct indices in selection
  // order (CPython 3.11's set-based or pool-based branch, as it picks).
  // Requires k <= population.
  std::vector<size_t> Sample(size_t population, size_t k);

  // The index rng.choice(seq) picks when len(seq) == n. Requires n > 0.
  size_t Choice(size_t n) { return static_cast<size_t>(RandBelow(n)); }

 private:
  uint32_t NextUint32() { return mt_.NextUint32(); }

  Mt19937 mt_;
  bool has_gauss_next_ = false;
  double gauss_next_ = 0.0;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_PY_RANDOM_H_
