// glibc malloc's thresholds for how evalrun allocates: large buffers made
// and freed again and again (request bodies up to megabytes at 128K,
// dataset rows, langdetect's tables), on a few threads.
//
// With glibc's defaults a buffer over the mmap threshold is mmapped and
// unmapped each time, and the heap is trimmed whenever 128 KB at its top
// are free, so the same pages are faulted in again and again (measured on
// a virtual machine: `evalrun score --part <name>` of 541 answers, 207 ms
// of CPU with the defaults, 187 ms with these). Memory freed stays with the
// process until the writer's periodic malloc_trim (request_pool.cc) hands
// it back when over 64 MB are free.
//
// Thread-safety: call once, at the start of main, before any thread.
#ifndef EVALRUN_EVALS_BASE_MALLOC_TUNING_H_
#define EVALRUN_EVALS_BASE_MALLOC_TUNING_H_

namespace evalrun {

// Sets M_MMAP_THRESHOLD (32 MB), M_TRIM_THRESHOLD (256 MB) and M_TOP_PAD
// (16 MB), unless the environment sets any MALLOC_*_ tunable itself (a
// user's choice wins).
void TuneMalloc();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_MALLOC_TUNING_H_
