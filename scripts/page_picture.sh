#!/usr/bin/env bash
# Renders the page of a fixture run (`evalrun report` on a copy of it) to a
# PNG with headless Chromium: the README's picture of the page.
#
#   scripts/page_picture.sh [--run tests/fixtures/runs/h100-speed] [--out docs/page.png]
#                           [--evalrun build/evalrun] [--height 1500] [--scale 0.6]
#
# The window is 1280 CSS px wide, drawn at --scale (0.6: a 768-px-wide PNG),
# so the picture shows the page as a desktop reader sees it, kept small.
# Chromium is $EVALRUN_CHROMIUM, else /usr/bin/chromium, run under
# `timeout 120` with a profile folder of its own that is removed afterwards.
set -euo pipefail

run=tests/fixtures/runs/h100-speed
out=docs/page.png
evalrun=build/evalrun
height=1500
scale=0.6
while [ $# -gt 0 ]; do
  case "$1" in
    --run) run=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --evalrun) evalrun=$2; shift 2 ;;
    --height) height=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "page_picture.sh: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
done
chromium=${EVALRUN_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "page_picture.sh: $chromium not found (apt-get install chromium)" >&2; exit 1; }
[ -x "$evalrun" ] || { echo "page_picture.sh: $evalrun not found: build it (cmake --build build --target evalrun)" >&2; exit 1; }
[ -f "$run/results.json" ] || { echo "page_picture.sh: $run has no results.json" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$run" "$tmp/run"
"$evalrun" report "$tmp/run" >/dev/null
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$tmp/profile" --force-device-scale-factor="$scale" \
  --window-size="1280,$height" --screenshot="$tmp/page.png" "file://$tmp/run/report.html" 2>"$tmp/chromium.stderr" ||
  { cat "$tmp/chromium.stderr" >&2; exit 1; }
cp "$tmp/page.png" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
