#!/usr/bin/env bash
# The docs' screenshots, rendered again by the visual gallery (never taken by hand): each
# docs/images/STATE.png is the gallery's STATE in the light theme at 1366x768, offscreen, with
# settings, data and cache in a temporary folder. Commit the PNGs it rewrites.
#   scripts/docs_screenshots.sh [STATE ...]    (default: the states docs/images holds now)
set -euo pipefail
cd "$(dirname "$0")/.."
states=("$@")
if [ ${#states[@]} -eq 0 ]; then
    for f in docs/images/*.png; do states+=("$(basename "$f" .png)"); done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/inspector-shots.XXXXXX")
trap 'rm -rf "$work"' EXIT
export INSPECTOR_DATA_DIR="$work/data" INSPECTOR_CACHE_DIR="$work/cache" \
    XDG_CONFIG_HOME="$work/config" QT_QPA_PLATFORM=offscreen
list=$(IFS=,; echo "${states[*]}")
.venv/bin/python -m inspector.qt.harness.gallery "$work/gallery" --states "$list" \
    --sizes 1366x768 --themes light
mkdir -p docs/images
for s in "${states[@]}"; do
    cp "$work/gallery/$s-light-1366x768.png" "docs/images/$s.png"
    echo "docs/images/$s.png"
done
