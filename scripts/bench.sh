#!/bin/sh
# Builds evalrun and evalrun-bench in Release (build-bench/ beside the
# sources) and prints the runner's speed figures next to their targets.
# Arguments go to evalrun-bench, e.g.
#
#   scripts/bench.sh                              # everything (about 5 minutes)
#   scripts/bench.sh --only occupancy --slots 16  # one section, one slot count
#   scripts/bench.sh --quiet-below 1.5 --json bench.json
#   EVALRUN_BENCH_DATA=/path/to/datasets scripts/bench.sh --only scoring
#   scripts/bench.sh --only probe --requests 2000      # the logprob probe: CPU per position
#
# The build is niced and runs 2 jobs (EVALRUN_BENCH_JOBS): machines are shared.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DEVALRUN_TESTS=ON -DEVALRUN_BENCH=ON > /dev/null
else
  generator=""
  command -v ninja > /dev/null 2>&1 && generator="-G Ninja"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" $generator -DCMAKE_BUILD_TYPE=Release -DEVALRUN_TESTS=ON -DEVALRUN_BENCH=ON > /dev/null
fi
nice -n 10 cmake --build "$build" --parallel "${EVALRUN_BENCH_JOBS:-2}" --target evalrun evalrun-bench
exec "$build/bench/evalrun-bench" "$@"
