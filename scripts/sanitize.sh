#!/usr/bin/env bash
# Builds evalrun and its tests with AddressSanitizer + UndefinedBehaviorSanitizer
# in build-asan (Debug) and runs the whole test suite there. The end-to-end
# tests start the sanitized evalrun binary, so its runs are checked too.
#
#   scripts/sanitize.sh                 # configure, build, run every test
#   scripts/sanitize.sh -R E2eFaults    # extra arguments go to ctest
#   JOBS=4 BUILD_DIR=/tmp/asan scripts/sanitize.sh
#   TARGETS=all scripts/sanitize.sh     # build everything, not only what ctest runs
#
# AddressSanitizer and LeakSanitizer reports (from the test binary or from an
# evalrun it started) are also written to $BUILD_DIR/sanitizer-logs/; UBSan
# halts the process with exit 87 (GCC's combined runtime prints its report to
# stderr only). The script fails when ctest fails, when a report was written,
# or when the test log holds one. Not part of CI: a full sanitized build takes
# a while (see docs/reliability.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
jobs="${JOBS:-2}"

cmake -S "$root" -B "$build" -G Ninja \
  -DEVALRUN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug >/dev/null
# What ctest runs: the tests (they bring evalrun and the fake server along).
read -r -a targets <<<"${TARGETS:-evalrun evalrun_tests}"
nice ninja -C "$build" -j "$jobs" "${targets[@]}"

logs="$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
# Distinct exit codes, so that a sanitizer finding in a child evalrun is not
# mistaken for one of evalrun's own exit codes (1 = bad input).
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:exitcode=86:log_path=$logs/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87:log_path=$logs/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@" || status=$?

testlog="$build/Testing/Temporary/LastTest.log"
if [ -f "$testlog" ] && grep -qE "runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)" "$testlog"; then
  echo "sanitize.sh: sanitizer reports in $testlog:" >&2
  grep -nE -A12 "runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)" "$testlog" >&2 || true
  [ "$status" -ne 0 ] || status=1
fi
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize.sh: sanitizer reports in $logs:" >&2
  for f in "$logs"/*; do
    echo "==== $f" >&2
    cat "$f" >&2
  done
  [ "$status" -ne 0 ] || status=1
fi
if [ "$status" -eq 0 ]; then
  echo "sanitize.sh: all tests passed under address,undefined; no sanitizer reports"
fi
exit "$status"
