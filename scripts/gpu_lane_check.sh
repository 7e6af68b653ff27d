#!/usr/bin/env bash
# The GPU lane's check of evalrun against a running llama-server, run ON the device machine
# after ../shared/gpu/lane.sh has started llama-server b10470 (CUDA, --jinja, Qwen3 template, 4 slots) on
# 127.0.0.1:PORT. This script builds nothing and starts no server: it measures the one that runs.
#
#   scripts/gpu_lane_check.sh --bundle DIR --datasets DIR --port PORT --out DIR [options]
#
#   --bundle DIR     evalrun and its shared libraries (scripts/make_bundle.sh): DIR/run, else DIR/evalrun
#                    with LD_LIBRARY_PATH=DIR/lib
#   --datasets DIR   the data dir (mmlu-pro/, ifeval/, punkt-english/, langdetect/)
#   --port PORT      the llama-server on 127.0.0.1
#   --out DIR        everything written here: card.json, runs/lane/ (the job: results.json, samples,
#                    speed/requests.jsonl, report.md, report.html), evalrun.log, bare.jsonl,
#                    ttft_compare.json, summary.json
#   --mmlu N (60) --ifeval N (30) --max-tokens N (1024: MMLU-Pro and IFEval answers)
#   --conc LIST (1,4,8) --prompt-tokens N (512) --speed-tokens N (256) --runs N (3)
#   --prefill DEPTHS (2048,8192) --rounds N (2)
#   --tap-port PORT  the tap's port (PORT+1)
#   --speed-only 1   steps 1-3 only (the TTFT check), no MMLU-Pro or IFEval
#   --restart CMD    a shell command that stops the server and starts it again, fresh, on the same port
#                    (README, "The GPU lane check": kill the pid in /tmp/gpu/server-8080.pid, wait
#                    until it is gone, bash lane.sh 8080 4 131072 again); run
#                    between evalrun's speed part and the bare client's replay. Without it the replay
#                    meets a server whose slots and prompt cache hold evalrun's requests, and its TTFT
#                    is not comparable (the check says so).
#
# Then, in this order, one job (runs/lane):
#   1. evalrun's speed part (decode, prefill, conc at --conc) against the server (external, base_url),
#      first on the server as lane.sh started it, through a tap (bare_stream_client.py tap on --tap-port,
#      PORT+1 by default): a loopback proxy that times each of evalrun's requests as a bare client at its
#      place would see it;
#   2. --restart, so the server is as fresh as it was for step 1;
#   3. the same requests sent again, byte for byte and in evalrun's order (warm-ups, a chat stream the
#      server's parser refused before its /completion), by a bare streaming client
#      (scripts/bare_stream_client.py, standard library only); per request evalrun's TTFT against the bare
#      client's within max(2 %, 20 ms): C = 1 request by request; every request, C > 1 too, against the
#      tap's timing of the very same request (a replayed queue is shown rank by rank, not judged: which
#      request waits for which slot, and where a random model's chat stream is refused, differ between two
#      runs of one round);
#   4. evalrun's MMLU-Pro and IFEval into the same job (evalrun resumes it with those parts);
#   5. `evalrun report` of the job.
# llama-server b10470 saves a slot's prompt to its RAM prompt cache (--cache-ram) before it gives the
# slot a different prompt, and loads a cached one that matches: time outside its prompt_ms that a
# request's TTFT includes and that depends on what the server was asked before. Hence the order: both
# clients meet the same fresh server with the same history.
# Prints a table, a PASS/FAIL line for the TTFT check and a final line; writes summary.json. Exit 0 when
# evalrun exited 0 both times, every sample was scored or counted wrong with a reason, the TTFT check
# passed and the report was written; else 1.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUNDLE="" DATASETS="" PORT="" OUT=""
MMLU=60 IFEVAL=30 MAXTOK=1024 CONC=1,4,8 PTOK=512 STOK=256 RUNS=3 PREFILL=2048,8192 ROUNDS=2 RESTART="" TAP_PORT="" SPEED_ONLY=0
die() { echo "gpu_lane_check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE=$2 ;; --datasets) DATASETS=$2 ;; --port) PORT=$2 ;; --out) OUT=$2 ;;
    --mmlu) MMLU=$2 ;; --ifeval) IFEVAL=$2 ;; --max-tokens) MAXTOK=$2 ;; --conc) CONC=$2 ;;
    --prompt-tokens) PTOK=$2 ;; --speed-tokens) STOK=$2 ;; --runs) RUNS=$2 ;; --prefill) PREFILL=$2 ;;
    --rounds) ROUNDS=$2 ;; --restart) RESTART=$2 ;; --tap-port) TAP_PORT=$2 ;; --speed-only) SPEED_ONLY=$2 ;;
    -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value"
  shift 2
done
[ -n "$BUNDLE" ] && [ -n "$DATASETS" ] && [ -n "$PORT" ] && [ -n "$OUT" ] || die "--bundle, --datasets, --port and --out are required"
[ -d "$DATASETS/mmlu-pro" ] || die "$DATASETS/mmlu-pro: not found"
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  [ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python  # as lane.sh, on the device machine
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "$PY: Python 3.10 or newer needed (PYTHON=...)"
fi
if [ -x "$BUNDLE/run" ]; then EVALRUN=("$BUNDLE/run")
elif [ -x "$BUNDLE/evalrun" ]; then EVALRUN=(env "LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$BUNDLE/evalrun")
else die "$BUNDLE: neither run nor evalrun there (scripts/make_bundle.sh makes the bundle)"; fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
JOB="$OUT/runs/lane"
[ ! -e "$JOB" ] || die "$JOB exists: give a fresh --out"
now() { date +%s.%N; }
T0=$(now)

# The server: up, and what it is.
wait_server() {
"$PY" - "$PORT" <<'EOF'

import json, sys, time, urllib.request
port = sys.argv[1]
for _ in range(120):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            if r.status == 200:
                break
    except OSError:
        pass
    time.sleep(0.5)
else:
    sys.exit(1)
with urllib.request.urlopen(f"http://127.0.0.1:{port}/props", timeout=10) as r:
    p = json.load(r)
print(f"server: {p.get('build_info')}, {p.get('total_slots')} slots, n_ctx "
      f"{p.get('default_generation_settings', {}).get('n_ctx')}, model {p.get('model_path')}")
EOF
}
wait_server || die "no llama-server answers on 127.0.0.1:$PORT"

# The tap: evalrun's requests pass through it (stopped by its PID at exit).
TAP_PORT=${TAP_PORT:-$((PORT + 1))}
"$PY" "$HERE/bare_stream_client.py" tap --listen "$TAP_PORT" --port "$PORT" --out "$OUT/tap.jsonl" \
  >"$OUT/tap.log" 2>&1 &
TAP_PID=$!
trap 'kill "$TAP_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "^tap:" "$OUT/tap.log" 2>/dev/null && break; sleep 0.1; done
kill -0 "$TAP_PID" 2>/dev/null || { cat "$OUT/tap.log"; die "the tap did not start on $TAP_PORT"; }

# The card: the running server, external (base_url), through the tap.
"$PY" - "$OUT/card.json" "$TAP_PORT" "$PORT" "$MMLU" "$IFEVAL" "$MAXTOK" "$CONC" "$PTOK" "$STOK" "$RUNS" "$PREFILL" "$ROUNDS" <<'EOF'
import json, sys
out, port, server_port, mmlu, ifeval, maxtok, conc, ptok, stok, runs, prefill, rounds = sys.argv[1:]
ints = lambda s: [int(x) for x in s.split(",") if x]
card = {
    "name": "gpu-lane",
    "model": {"name": "random-weight Qwen3-1.7B shape, real Qwen3 tokenizer and template (shared/gpu/lane.sh)"},
    "engine": {"name": "llama.cpp llama-server b10470 (CUDA, --jinja)"},
    "hardware": {"gpu_index": 0},
    "server": {"base_url": f"http://127.0.0.1:{port}/v1", "slots": "auto", "ready_timeout_s": 120},
    "sampling": {"temperature": 0, "top_k": 1, "top_p": 1, "seed": 42},
    # The engine is what listens on the server's port, not the tap in front of it.
    "load_sampling": {"engine_port": int(server_port)},
    "thinking": False,
    "parts": {
        "mmlupro": {"questions": int(mmlu), "max_tokens": int(maxtok), "prompt": "letter", "extract": "first-letter"},
        "ifeval": {"prompts": int(ifeval), "max_tokens": int(maxtok)},
        "speed": {"steps": ["decode", "prefill", "conc"], "prompt_ids": ["code", "prose"],
                  "decode_prompt_tokens": int(ptok), "max_tokens": int(stok), "runs": int(runs), "warmups": 1,
                  "prefill_depths": ints(prefill), "prefill_runs": int(runs), "conc_levels": ints(conc),
                  "conc_rounds": int(rounds)},
    },
}
with open(out, "w") as f:
    json.dump(card, f, indent=2)
    f.write("\n")
EOF

evalrun_parts() {  # PARTS LOG: one evalrun run of the job (resumed after the first), its exit status
  set +e
  "${EVALRUN[@]}" --card "$OUT/card.json" --job lane --out "$OUT/runs" --data-dir "$DATASETS" --parts "$1" 2>&1 \
    | tee "$2"
  local rc=${PIPESTATUS[0]}
  set -e
  echo "== evalrun ($1) exited $rc"
  return "$rc"
}
echo "== evalrun: speed (C = $CONC), first on the fresh server"
SPEED_EXIT=0
evalrun_parts speed "$OUT/evalrun-speed.log" || SPEED_EXIT=$?
T1=$(now)

TTFT="FAIL"
if [ -f "$JOB/speed/requests.jsonl" ]; then
  FRESH=1
  if [ -n "$RESTART" ]; then
    echo "== the server again, fresh: $RESTART"
    if ! bash -c "$RESTART" >"$OUT/restart.log" 2>&1 || ! wait_server; then
      cat "$OUT/restart.log"; die "--restart: the server did not come back"
    fi
  else
    FRESH=0
    echo "no --restart: the replay meets the server as evalrun's run left it (its slots and prompt cache hold"
    echo "the same requests), so the TTFT pairs are not comparable; the check cannot pass"
  fi
  echo "== bare streaming client: the speed part's requests again, in evalrun's order"
  set +e
  if "$PY" "$HERE/bare_stream_client.py" replay --requests "$JOB/speed/requests.jsonl" --port "$PORT" \
      --out "$OUT/bare.jsonl"; then
    "$PY" "$HERE/bare_stream_client.py" compare --samples "$JOB/speed/samples.jsonl" --bare "$OUT/bare.jsonl" \
      --tap "$OUT/tap.jsonl" --requests "$JOB/speed/requests.jsonl" --out "$OUT/ttft_compare.json" \
      && [ "$FRESH" = 1 ] && TTFT="PASS"
  else
    echo "the replay failed: TTFT not compared"
  fi
  set -e
else
  echo "no $JOB/speed/requests.jsonl: the speed part did not run; TTFT not compared"
fi
T2=$(now)

QUALITY_EXIT=0
if [ "$SPEED_ONLY" != 1 ]; then
  echo "== evalrun: mmlupro ($MMLU), ifeval ($IFEVAL) into the same job"
  evalrun_parts mmlupro,ifeval "$OUT/evalrun-quality.log" || QUALITY_EXIT=$?
fi
RUN_EXIT=$(( SPEED_EXIT > QUALITY_EXIT ? SPEED_EXIT : QUALITY_EXIT ))
T2b=$(now)

echo "== evalrun report"
REPORT=0
"${EVALRUN[@]}" report "$JOB" || REPORT=$?
T3=$(now)

"$PY" - "$OUT" "$JOB" "$RUN_EXIT" "$TTFT" "$REPORT" "$T0" "$T1" "$T2" "$T2b" "$T3" "$SPEED_EXIT" "$QUALITY_EXIT" <<'EOF'
import json, os, sys
out, job, run_exit, ttft, report, t0, t1, t2, t2b, t3, speed_exit, quality_exit = sys.argv[1:]
run_exit, report = int(run_exit), int(report)
t0, t1, t2, t2b, t3 = map(float, (t0, t1, t2, t2b, t3))
parts, lost = {}, 0
try:
    with open(os.path.join(job, "results.json")) as f:
        res = json.load(f)
except (OSError, ValueError):
    res = {"parts": {}}
for name, p in res.get("parts", {}).items():
    if name == "speed":
        steps = p.get("steps", [])
        parts[name] = {"complete": p.get("complete"), "error": p.get("error"),
                       "steps": {s["name"]: {"requests": (s.get("result") or {}).get("requests"),
                                             "requests_ok": (s.get("result") or {}).get("requests_ok"),
                                             "ttft_s": ((s.get("result") or {}).get("ttft_s") or {}).get("median"),
                                             "queue_s": ((s.get("result") or {}).get("queue_s") or {}).get("median"),
                                             "note": s.get("note"), "refused": s.get("refused")}
                                 for s in steps}}
        continue
    n, planned = p.get("n", 0), p.get("planned", 0)
    lost += max(0, (planned or 0) - (n or 0))
    parts[name] = {k: p.get(k) for k in ("score", "n", "planned", "failed", "complete")}
    parts[name]["raw_fallback"] = p.get("raw_fallback", 0)
    parts[name]["server_parse_error"] = p.get("server_parse_error", 0)
ok = run_exit == 0 and ttft == "PASS" and report == 0 and lost == 0
summary = {"verdict": "PASS" if ok else "FAIL", "evalrun_exit": run_exit,
           "evalrun_exit_speed": int(speed_exit), "evalrun_exit_quality": int(quality_exit),
           "samples_not_scored": lost,
           "ttft_check": ttft, "report_exit": report, "job": job,
           "report": [os.path.join(job, f) for f in ("report.md", "report.html") if os.path.exists(os.path.join(job, f))],
           "seconds": {"evalrun_speed": round(t1 - t0, 1), "restart_and_bare_client": round(t2 - t1, 1),
                       "evalrun_quality": round(t2b - t2, 1), "report": round(t3 - t2b, 1),
                       "total": round(t3 - t0, 1)},
           "parts": parts}
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)
    f.write("\n")
for name, p in parts.items():
    if name != "speed":
        print(f"{name}: n {p['n']} of {p['planned']}, failed {p['failed']}, raw_fallback {p['raw_fallback']}, "
              f"server_parse_error {p['server_parse_error']}, score {p['score']}")
print(f"lane check: {summary['verdict']} (evalrun exit {run_exit}, {lost} samples not scored, TTFT {ttft}, "
      f"report exit {report}; {summary['seconds']['total']} s); {out}/summary.json")
sys.exit(0 if ok else 1)
EOF
