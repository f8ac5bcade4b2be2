#!/usr/bin/env bash
# The wheel is the product: build it from the checkout, install it into a fresh virtualenv
# outside the repository, and run what the README tells a new user to run, from a folder where
# no source tree can be imported. Settings, data and cache go to a temporary folder; nothing is
# written into the checkout (the build runs on a copy of its files). Run by .ci/run through
# `scripts/dev wheel`; `KEEP=1` keeps the folder and says where.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
work=$(mktemp -d "${TMPDIR:-/tmp}/inspector-wheel.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "wheel: keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
step() { printf "wheel: [%(%H:%M:%S)T] %s\n" -1 "$*" >&2; }

step "copying the checkout's files and building the wheel"
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf - | tar -xf - -C "$work/src"
"$PY" -m pip wheel -q --no-deps -w "$work/dist" "$work/src" 2>"$work/build.log" \
    || { cat "$work/build.log" >&2; exit 1; }
wheel=$(ls "$work"/dist/*.whl)

step "installing $(basename "$wheel") into a fresh virtualenv"
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-compile "$wheel"

cd "$work"  # outside the checkout: only the installed package can be imported
unset PYTHONPATH
export INSPECTOR_DATA_DIR="$work/data" INSPECTOR_CACHE_DIR="$work/cache" \
    XDG_CONFIG_HOME="$work/config" QT_QPA_PLATFORM=offscreen
bin="$work/venv/bin"

"$bin/python" - "$work/venv" <<'EOF'
import importlib.util, sys
import inspector
assert inspector.__file__.startswith(sys.argv[1]), f"imported from {inspector.__file__}"
test_only = [m for m in ("pytest", "pytestqt", "hypothesis", "moto", "mkdocs")
             if importlib.util.find_spec(m)]
assert not test_only, f"the wheel pulled in test or docs packages: {test_only}"
EOF

step "inspector demo"
"$bin/inspector" demo | tee "$work/demo.txt"
store="$work/data/demo-store-v2"
grep -qF "demo store written to $store" "$work/demo.txt"

step "inspector pipeline list / show (the shipped pipeline files)"
"$bin/inspector" pipeline list | grep -q "^memory-lancedb-pro "
"$bin/inspector" pipeline show memory-lancedb-pro >/dev/null

step "inspector query on the demo store (the scoped miss)"
"$bin/inspector" query "$store" --preset docs-before-fix --scope vault-agent \
    --text "how do I rotate the signing keys for service tokens" --json >"$work/query.json"
"$bin/python" -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["diagnosis"]["code"] == "filter_after_cut", d["diagnosis"]
assert any(f["argv"] == ["--set", "scope_rule.pushdown=true"] for f in d["diagnosis"]["fixes"])' "$work/query.json"
"$bin/inspector" query "$store" --preset docs-pushdown --scope vault-agent \
    --text "how do I rotate the signing keys for service tokens" | grep -q "diagnosis: ok: 10 results"

step "inspector query --export, sweep, report, check, audit, run-trec (the README's stories)"
text="how do I rotate the signing keys for service tokens"
"$bin/inspector" query "$store" --preset docs-before-fix --scope vault-agent --text "$text" \
    --export "$work/tables" --format parquet >/dev/null 2>"$work/export.txt"
test -s "$work/tables/results.parquet"
"$bin/inspector" sweep "$store" --preset docs-before-fix --scope vault-agent --text "$text" \
    --grid-overfetch 1,3,6 --grid-blend 0,0.5 | grep -q "^best cell  fetch.overfetch 6"
"$bin/inspector" report "$store" --preset docs-before-fix --scope vault-agent --text "$text" \
    --against filter=pushdown --out "$work/receipt" >/dev/null
test -s "$work/receipt.html" && test -s "$work/receipt.json"
cat >"$work/checks.json" <<JSON
{"format": "inspector-checks", "version": 1, "store": "$store",
 "checks": [{"name": "pushdown fills the page", "text": "$text", "scope": "vault-agent",
             "preset": "docs-pushdown", "assert": ["returned == 10"]}]}
JSON
"$bin/inspector" check "$work/checks.json" >/dev/null
"$bin/inspector" audit scopes "$store" --preset docs-before-fix --per-scope 1 --json \
    >"$work/audit.json"
cat >"$work/queries.json" <<JSON
{"format": "inspector-judgments", "version": 1,
 "queries": [{"query": "$text", "scope": "vault-agent"}]}
JSON
"$bin/inspector" run-trec "$store" --preset docs-pushdown --queries "$work/queries.json" \
    --out "$work/run.trec" 2>/dev/null
test "$(wc -l <"$work/run.trec")" -eq 10
step "inspector mcp without its extra: one line saying how to install it, exit 2"
set +e
"$bin/inspector" mcp </dev/null >/dev/null 2>"$work/mcp.txt"
code=$?
set -e
test "$code" -eq 2 && grep -q "pip install" "$work/mcp.txt"
step "the Python API"
"$bin/python" - "$store" <<'EOF'
import sys
import inspector
r = inspector.query(sys.argv[1], text="how do I rotate the signing keys for service tokens",
                    preset="docs-pushdown", scope="vault-agent")
assert len(r.final_ids) == 10, r.final_ids
EOF

step "inspector shot (the window offscreen, the demo store and its first story)"
"$bin/inspector" shot --out "$work/shot.png" --size 1366x768
test -s "$work/shot.png"

step "the window in a gallery state (offscreen), with its visual checks"
"$bin/python" -m inspector.qt.harness.gallery "$work/gallery" --states scoped-miss \
    --sizes 1366x768 --themes light >/dev/null
test -s "$work/gallery/scoped-miss-light-1366x768.png"
step "ok"
