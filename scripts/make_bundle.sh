#!/usr/bin/env bash
# An evalrun bundle for a machine without this one's packages (the GPU lane's device machine):
#
#   scripts/make_bundle.sh BUILD_DIR OUT_DIR
#
# OUT_DIR/evalrun        the binary of BUILD_DIR (stripped copy)
# OUT_DIR/lib/           every shared library ldd names for it except glibc's own (libre2, libtbb, libzip,
#                        libssl/libcrypto, libstdc++, libgcc_s, ... and what they pull in)
# OUT_DIR/glibc/         glibc's libraries and loader, used only where the machine's glibc is too old
# OUT_DIR/run            the wrapper: runs evalrun with LD_LIBRARY_PATH=OUT_DIR/lib; when that does not
#                        start (an older glibc: "GLIBC_2.xx not found"), through the bundled loader
#                        instead (EVALRUN_BUNDLED_GLIBC=1 forces it)
# Copies only files; OUT_DIR is made afresh (an existing one is refused unless it is a bundle).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
BUILD=$1 OUT=$2
BIN="$BUILD/evalrun"
[ -x "$BIN" ] || { echo "$BIN: not found (build evalrun first)" >&2; exit 1; }
if [ -e "$OUT" ]; then
  [ -f "$OUT/run" ] && [ -d "$OUT/lib" ] || { echo "$OUT exists and is not a bundle: refused" >&2; exit 1; }
  rm -rf "$OUT"
fi
mkdir -p "$OUT/lib" "$OUT/glibc"
cp "$BIN" "$OUT/evalrun"
strip "$OUT/evalrun" 2>/dev/null || true
# glibc's own: kept apart, used only when the machine's is too old.
is_glibc() {
  case "$(basename "$1")" in
    ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*|libmvec.so*) return 0 ;;
  esac
  return 1
}
ldd "$BIN" | while read -r line; do
  # "libre2.so.9 => /lib/x86_64-linux-gnu/libre2.so.9 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
  path=$(echo "$line" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; t; s/^\(\/[^ ]*\) .*/\1/p')
  [ -n "$path" ] && [ -f "$path" ] || continue
  if is_glibc "$path"; then cp -L "$path" "$OUT/glibc/"; else cp -L "$path" "$OUT/lib/"; fi
done
cat >"$OUT/run" <<'EOF'
#!/bin/sh
# evalrun from this bundle (scripts/make_bundle.sh): its libraries first; the bundled glibc only when needed.
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$HERE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "${EVALRUN_BUNDLED_GLIBC:-}" ] && "$HERE/evalrun" --help >/dev/null 2>&1; then
  exec "$HERE/evalrun" "$@"
fi
exec "$HERE/glibc/"ld-linux* --library-path "$HERE/glibc:$HERE/lib" "$HERE/evalrun" "$@"
EOF
chmod +x "$OUT/run" "$OUT/evalrun"
echo "bundle: $OUT ($(ls "$OUT/lib" | wc -l) libraries, $(ls "$OUT/glibc" | wc -l) glibc files, $(du -sh "$OUT" | cut -f1))"
ls "$OUT/lib" "$OUT/glibc"
