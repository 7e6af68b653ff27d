#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz, then runs each for a bounded time.
#
#   scripts/fuzz.sh                     # every target, 60 s each
#   scripts/fuzz.sh 600                 # every target, 600 s each
#   scripts/fuzz.sh 60 card_fuzzer      # one target
#   KEEP_GOING=1 scripts/fuzz.sh 300    # do not stop at the first crash
#
# Needs clang and the libFuzzer runtime (Debian: apt-get install -y clang
# libclang-rt-14-dev). The IFEval target reads Punkt and langdetect from
# $EVALRUN_FUZZ_DATA (default: ../shared/datasets beside the checkout).
# Corpora grow in build-fuzz/fuzz-work/<target>/corpus and are reused by the
# next run; a crash leaves build-fuzz/fuzz-work/<target>/crash-<sha1> (rerun
# one with: build-fuzz/fuzz/<target> <file>). Exits 1 when any target found a
# crash, a leak, a timeout or an out-of-memory. See docs/reliability.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-60}"
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(card_fuzzer extract_fuzzer ifeval_fuzzer reply_fuzzer)
build="${BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-2}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (Debian: apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 1
fi

# The library is instrumented for coverage (fuzzer-no-link) and sanitized;
# undefined behaviour aborts so that libFuzzer reports it as a crash.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEVALRUN_TESTS=OFF -DEVALRUN_SANITIZE=address,undefined \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined" >/dev/null
nice ninja -C "$build" -j "$jobs" "${targets[@]}"

export EVALRUN_FUZZ_DATA="${EVALRUN_FUZZ_DATA:-$(cd "$root/.." && pwd)/shared/datasets}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
work="$build/fuzz-work"

# Seed corpora and dictionaries, written when missing.
seed() {
  local t="$1" dir="$work/$1/corpus"
  mkdir -p "$dir"
  [ -z "$(ls -A "$dir")" ] || return 0
  case "$t" in
    card_fuzzer)
      for f in "$root"/cards/*.json; do cp "$f" "$dir/"; done
      printf '%s' '{"name": "x", "server": {"base_url": "http://127.0.0.1:8080/v1", "slots": "auto"}, "parts": {"mmlupro": {"questions": 5}}}' >"$dir/min.json"
      printf '%s' '{"name": "r", "server": {"base_url": "https://h/v1", "slots": 2, "retries": 0}, "max_failed": 1, "parts": {"ruler": {"lengths": [4096], "samples_per_task": {"niah_single_1": 2}, "task_max_tokens": {"vt": 30}}, "ifeval": {"prompts": 3}, "gpqa": {"extract": "simple-evals"}}}' >"$dir/parts.json"
      ;;
    extract_fuzzer)
      printf '\x04The answer is (B).' >"$dir/answer_is"
      printf '\x0aLet me think.\nAnswer: C' >"$dir/answer_colon"
      printf '\x03**B**' >"$dir/bold"
      printf '\x04I think A is right, but B.' >"$dir/pronoun"
      printf '\x04Answer: $D$' >"$dir/simple_evals"
      printf '\x0a\xc3\xa9 A\xc3\xa9 (J) \xe2\x80\x94 J' >"$dir/unicode"
      ;;
    reply_fuzzer)
      # Byte 0 picks the check (0 reply reader, 1 JSON bounds, 2 redaction);
      # for the reader byte 1 says where to split. The hostile server's cases
      # of tests/engine/http_reply_test.cc and tests/engine/e2e_hostile_server_test.cc.
      local ok='HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
      printf '\x00\x10'"$ok" >"$dir/one"
      printf '\x00\x21'"$ok$ok" >"$dir/twice"
      printf '\x00\x05HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{"a":1}' >"$dir/short_length"
      printf '\x00\x07HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x\r\n{}\r\n0\r\nT: 1\r\n\r\n' >"$dir/chunked"
      printf '\x00\x03HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 4\r\n\r\nbusy' >"$dir/continue_503"
      printf '\x00\x01HTTP/1.0 200 OK\r\n\r\n<html>nginx</html>' >"$dir/until_close"
      printf '\x00\x00SMTP ready\r\n\r\n' >"$dir/garbage"
      printf '\x01%s' "$(printf '%0.s[' $(seq 300))" >"$dir/deep"
      printf '\x01{"data":[{"id":"m","x":"[[[[\\"]]"}],"object":"list"}' >"$dir/models"
      printf '\x02{"cmd":"llama-server --api-key fz-s3cret\\"k --port 1","e":"Authorization: Bearer fz-s3cret\"k"}' >"$dir/redact"
      ;;
    ifeval_fuzzer)
      # The first byte picks the instruction: each response once per instruction.
      local i
      for i in $(seq 0 24); do
        local b
        b=$(printf '\\x%02x' "$i")
        printf "$b"'Hello world. This is a test. Is it? Yes!' >"$dir/plain-$i"
        printf "$b"'<<Title>>\n\n*highlighted section*\n\n***\n\nSECTION 1\nText.\n\nP.S. bye' >"$dir/format-$i"
        printf "$b"'```json\n{"a": [1, 2]}\n```' >"$dir/json-$i"
        printf "$b"'THIS IS ALL CAPITAL LETTERS, IN ENGLISH.' >"$dir/caps-$i"
        printf "$b"'* one\n* two\n* three\n\n[address] [name]' >"$dir/bullets-$i"
        printf "$b"'Ceci est une phrase en fran\xc3\xa7ais. Dr. Smith arrived at 5 p.m. on Jan. 3.' >"$dir/lang-$i"
      done
      ;;
  esac
}

dict_args() {
  local t="$1" d="$work/$1/dict"
  [ "$t" = card_fuzzer ] || return 0
  if [ ! -f "$d" ]; then
    for k in name model engine hardware gpu_index gpu_uuid server base_url slots auto api_key_env \
             ready_timeout_s retries connect_timeout_s request_timeout_base_s min_decode_tps command \
             stop_grace_s sampling temperature top_k top_p seed thinking max_failed load_sampling \
             interval_s threshold_pct top ignore guard guard_max_wait_s parts mmlupro gpqa ifeval ruler fit \
             questions prompts max_tokens prompt extract split test validation lengths tasks \
             samples_per_task task_max_tokens allow_estimated_tokens contexts fill letter cot-5shot \
             first-letter official simple-evals http:// https:// niah_single_1 vt; do
      printf '"\\"%s\\""\n' "$k"
    done >"$d"
    printf '%s\n' '"{"' '"}"' '"["' '"]"' '":"' '","' '"true"' '"false"' '"null"' '"1e500"' \
      '"-1"' '"0"' '"4294967296"' '"9223372036854775808"' '"0.5"' >>"$d"
  fi
  echo "-dict=$d"
}

artifacts() { find "$work/$1" -maxdepth 1 -regextype egrep -regex '.*/(crash|leak|timeout|oom)-[0-9a-f]+' | wc -l; }

failed=()
for t in "${targets[@]}"; do
  seed "$t"
  echo "== $t: ${secs} s" >&2
  before=$(artifacts "$t")
  rc=0
  extra=()
  [ -n "${KEEP_GOING:-}" ] && extra=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  # shellcheck disable=SC2046
  nice "$build/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$work/$t/" $(dict_args "$t") "${extra[@]}" \
    "$work/$t/corpus" 2>"$work/$t/log.txt" || rc=$?
  tail -n 20 "$work/$t/log.txt" >&2
  if [ "$rc" -ne 0 ] || [ "$(artifacts "$t")" -gt "$before" ]; then
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]} (artifacts and log.txt under $work/<target>/)" >&2
  exit 1
fi
echo "fuzz.sh: ${targets[*]}: no crash in ${secs} s each"
