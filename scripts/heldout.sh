#!/usr/bin/env bash
# The real packages against the presets, installed from the registries at the versions the
# presets name (crewai and cognee each in a virtualenv of its own: crewai pins pydantic below
# the others, cognee lancedb 0.39):
#   1. the recorders re-record the fixtures' stores into a temporary folder: every preset
#      equals what the packages answered there, and they answered as recorded;
#   2. a held-out store and queries the tests never saw (seed SEED, else a random one, printed
#      so a failure can be rerun): every preset agrees with every call, and every case a
#      package answered short because of a filter after its cut gets a fix that returns
#      more rows, a sample of them applied through `inspector query` (--fixes).
# Everything it writes (virtualenvs, pip's cache, the packages' own caches, the stores) goes
# to one temporary folder it removes; the checkout is left as it was. Run by .ci/run through
# `scripts/dev heldout [SEED]`; `KEEP=1` keeps the folder and says where. The Node
# (OpenClaw) and checkout (Generative Agents) recorders are not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
seed="${1:-$(( RANDOM % 9000 + 1 ))}"
case "$seed" in ''|*[!0-9]*|0) echo "heldout: SEED is a whole number above 0 (0 is the fixtures' store)" >&2; exit 2 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/inspector-heldout.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "heldout: keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
step() { printf "heldout: [%(%H:%M:%S)T] %s\n" -1 "$*" >&2; }

export HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" XDG_CONFIG_HOME="$work/home/.config" \
    XDG_DATA_HOME="$work/home/.local/share" PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONPATH= \
    QT_QPA_PLATFORM=offscreen
mkdir -p "$HOME"
FRAMEWORKS="lancedb==0.40.0 crewai==1.15.30 langchain-community==0.4.2
    llama-index-vector-stores-lancedb==0.6.0 pandas"
ROUND2="lancedb==0.40.0 agno==3.1.10 langchain-community==0.4.2 langchain-core==1.8.3
    mem0ai==2.2.1 llama-index-vector-stores-lancedb==0.6.0 llama-index-core==0.14.25 pandas"
COGNEE="cognee==1.6.5"
for venv in fw r2 cg; do
    case "$venv" in fw) pkgs=$FRAMEWORKS ;; r2) pkgs=$ROUND2 ;; cg) pkgs=$COGNEE ;; esac
    step "installing into $venv:" $pkgs
    "$PY" -m venv "$work/$venv"
    # shellcheck disable=SC2086  # one word a package
    "$work/$venv/bin/python" -m pip install -q $pkgs
done

step "re-recording the fixtures' stores with the packages"
INSPECTOR_FRAMEWORKS_PYTHON="$work/fw/bin/python" INSPECTOR_ROUND2_PYTHON="$work/r2/bin/python" \
    INSPECTOR_COGNEE_PYTHON="$work/cg/bin/python" .venv/bin/python -m pytest -q \
    -p no:cacheprovider -n 0 tests/frameworks -k "live_packages or cognees_adapter"

step "held-out store and queries, seed $seed (rerun: scripts/dev heldout $seed)"
"$work/r2/bin/python" tests/frameworks/record_round2.py --out "$work/held" --seed "$seed" \
    --only agno,langchain2,mem0,llamaindex2,llamaindex_ivf >"$work/record.log" 2>&1 \
    || { cat "$work/record.log" >&2; exit 1; }
"$work/fw/bin/python" tests/frameworks/record_round2.py --out "$work/held" --seed "$seed" \
    --only crewai2 >>"$work/record.log" 2>&1 || { cat "$work/record.log" >&2; exit 1; }
"$work/cg/bin/python" tests/frameworks/record_cognee.py --out "$work/held" --seed "$seed" \
    >>"$work/record.log" 2>&1 || { cat "$work/record.log" >&2; exit 1; }
.venv/bin/python tests/frameworks/check_recorded.py "$work/held" --fixes
