#!/usr/bin/env bash
# Stages what the GPU lane's device call needs into an ignored folder of the repository (default .dev/),
# since ../shared does not travel to the device machine:
#
#   scripts/stage_device.sh SHARED_DIR BUILD_DIR [DEST=.dev]
#
#   DEST/gpu/        SHARED_DIR/gpu: lane.sh, make_qwen3_model.py, gguf-py/, the llama.cpp source archive
#   DEST/models/     tiny-qwen3-vocab.gguf (lane.sh takes the Qwen3 tokenizer and template from ../models)
#   DEST/datasets/   what MMLU-Pro and IFEval read at run time: mmlu-pro/{test,validation}.jsonl,
#                    ifeval/input_data.jsonl, punkt-english/ and langdetect/ without their test references
#   DEST/bundle/     evalrun and its libraries (scripts/make_bundle.sh BUILD_DIR)
#
# Then, on the device, from the repository root:
#   bash .dev/gpu/lane.sh 8080 4 131072 && \
#     bash scripts/gpu_lane_check.sh --bundle .dev/bundle --datasets .dev/datasets --port 8080 --out /tmp/check \
#       --restart '<stop the server, then lane.sh again>'   (README: "The GPU lane check")
# Prints the size of DEST and of the tracked files (the device copy holds 64 MiB in all).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SHARED_DIR BUILD_DIR [DEST=.dev]" >&2; exit 2; }
SHARED=$1 BUILD=$2 DEST=${3:-.dev}
HERE=$(cd "$(dirname "$0")" && pwd)
git -C "$HERE/.." check-ignore -q "$DEST" 2>/dev/null || { echo "$DEST is not ignored by git: refused" >&2; exit 1; }
D="$SHARED/datasets"
rm -rf "$DEST/gpu" "$DEST/models" "$DEST/datasets"
mkdir -p "$DEST/gpu" "$DEST/models" "$DEST/datasets/mmlu-pro" "$DEST/datasets/ifeval" "$DEST/datasets/punkt-english" \
  "$DEST/datasets/langdetect"
cp -r "$SHARED/gpu/lane.sh" "$SHARED/gpu/make_qwen3_model.py" "$SHARED/gpu/gguf-py" \
  "$SHARED/gpu/llama.cpp-b10470-src.tar.xz" "$DEST/gpu/"
cp "$SHARED/models/tiny-qwen3-vocab.gguf" "$DEST/models/"
cp "$D/mmlu-pro/test.jsonl" "$D/mmlu-pro/validation.jsonl" "$DEST/datasets/mmlu-pro/"
cp "$D/ifeval/input_data.jsonl" "$DEST/datasets/ifeval/"
for f in "$D"/punkt-english/*; do
  [ "$(basename "$f")" = reference_splits.jsonl ] || cp -r "$f" "$DEST/datasets/punkt-english/"
done
for f in "$D"/langdetect/*; do
  [ "$(basename "$f")" = reference_detections.jsonl ] || cp -r "$f" "$DEST/datasets/langdetect/"
done
bash "$HERE/make_bundle.sh" "$BUILD" "$DEST/bundle" >/dev/null
tracked=$(git -C "$HERE/.." ls-files -z | (cd "$HERE/.." && xargs -0 du -cb 2>/dev/null) | tail -1 | cut -f1)
staged=$(du -sb "$DEST" | cut -f1)
echo "staged $DEST: $((staged / 1048576)) MiB; tracked files $((tracked / 1048576)) MiB; together $(((staged + tracked) / 1048576)) of 64 MiB"
