"""Filters cannot change their meaning: an injection corpus (unbalanced parentheses, `OR 1=1`
forms, comments, quotes of every kind, semicolons, backslashes, unicode lookalikes) tried as
every input that reaches a filter, on every shipped preset, on a store of that preset's own
system: the scope (`--scope`), the `where` setting (`--where`), the scope's column
(`--set STAGE.scope_path`, `--column scope=`), and for the fixed presets `--scope-column`,
`--scope-map` and `--filter pushdown`. Either the command refuses in one line (exit 2) or
every row it returns lies in the scope the answer states; a scope no row holds returns none."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.spec import load_shipped, shipped_names
from tests.core.engine.flow.fixtures import FIXTURES

DATA = Path(__file__).resolve().parents[1] / "frameworks" / "data"
NOW = "1796113038032"
NOBODY = "nobody-agent"
CORPUS = [
    "1=1) OR (1=1", "nobody') OR ('1'='1", "x' OR 1=1 --", "x' OR '1'='1' /*", "*/ OR 1=1 /*",
    "x'; DROP TABLE memories; --", 'nobody" OR "1"="1', "x` OR 1=1 OR `y", "(((", ")) OR ((",
    "x') OR TRUE OR ('", "ｘ）ＯＲ（１＝１", "x\u2019) OR (\u2018a\u2019=\u2018a",
    "x\\') OR 1=1 OR ('", "nobody%", "_%", "1=1; SELECT 1", "1=1\n--\n)", "\udc80",
    "TRUE OR 1=1", "1=1",
]


def _system(preset: str) -> str:
    for prefix, system in (("crewai", "crewai"), ("langchain", "langchain"), ("agno", "agno"),
                           ("cognee", "cognee"), ("mem0", "mem0"),
                           ("llamaindex", "llamaindex"), ("openclaw-mem", "docs"),
                           ("openclaw-search", "demo"), ("openclaw", "openclaw"),
                           ("memory-lancedb-pro", "mlp"), ("generative", "ga")):
        if preset.startswith(prefix):
            return system
    return "demo"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, demo_path: Path) -> dict[str, list[str]]:
    """Each system's store and the query arguments that search it."""
    from inspector.core.stores.imports.generative_agents import import_memory_stream

    base = tmp_path_factory.mktemp("injection")
    out: dict[str, list[str]] = {}
    for system in ("crewai", "langchain", "llamaindex", "openclaw", "agno", "cognee", "mem0"):
        shutil.copytree(DATA / system / "store", base / system)
        doc = json.loads((DATA / system / "cases.json").read_text())
        text, vec = next(iter(doc["vectors"].items()))
        (base / f"{system}.json").write_text(json.dumps(vec))
        out[system] = [str(base / system), "--vector", f"@{base / system}.json"]
        if doc.get("table"):
            out[system] += ["--table", doc["table"]]
        out[f"{system}:text"] = ["--text", text]
    shutil.copytree(DATA / "generative_agents" / "store", base / "stream")
    ga = import_memory_stream(base / "stream", base / "ga")
    doc = json.loads((DATA / "generative_agents" / "cases.json").read_text())
    (base / "ga.json").write_text(json.dumps(next(iter(doc["vectors"].values()))))
    out["ga"] = [str(ga), "--vector", f"@{base / 'ga.json'}"]
    shutil.copytree(FIXTURES / "memory-lancedb-pro" / "store", base / "mlp")
    out["mlp"] = [str(base / "mlp"), "--vector",
                  f"@{FIXTURES / 'memory-lancedb-pro' / 'q_pg.json'}",
                  "--text", "postgres connection pool size", "--now", NOW]
    shutil.copy(FIXTURES / "openclaw-mem" / "docs.sqlite", base / "docs.sqlite")
    vecs = json.loads((FIXTURES / "openclaw-mem" / "query_vectors.json").read_text())
    text, vec = next(iter(vecs.items()))
    (base / "docs.json").write_text(json.dumps(vec))
    out["docs"] = [str(base / "docs.sqlite"), "--vector", f"@{base / 'docs.json'}", "--text",
                   text]
    out["demo"] = [str(demo_path), "--text", "how do I rotate the signing keys"]
    return out


def _ask(*argv: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["query", *argv, "--json", "--limit", "10"])
    lines = err.getvalue().strip().splitlines()
    if code:
        assert code == 2 and len(lines) == 1, (argv, err.getvalue())
        assert "unexpectedly" not in lines[0], (argv, lines[0])
        return code, None, lines[0]
    return code, json.loads(out.getvalue()), ""


def _rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return answer["stages"][-1]["candidates"]


def _scope_paths(preset: str) -> list[str]:
    spec = load_shipped(preset)
    return sorted({f"{st.name}.scope_path" for r in spec.routes for st in r.stages
                   if "scope_path" in kind_of(st.kind).by_name})


def _drops_scope(preset: str) -> bool:
    """The system drops the caller's scope and filter (LangChain's by-vector call, which Mem0
    calls): the answer says so instead of applying it."""
    return any(st.kind == "filter_dropped" for r in load_shipped(preset).routes
               for st in r.stages)


def _keeps_unscoped_rows(preset: str) -> bool:
    """Agno's user_id filter keeps the rows of no user: `(user_id = 'u' OR user_id IS NULL)`."""
    return any(st.params.get("scope_rule") == "agno_user" for r in load_shipped(preset).routes
               for st in r.stages)


def _needs_text(preset: str) -> bool:
    return any(kind_of(st.kind).resolve(st.params, st.name).get("query_type") in
               ("fts", "hybrid") or st.kind in ("lancedb_fts", "sqlite_fts5")
               for r in load_shipped(preset).routes for st in r.stages)


def _base(stores: dict[str, list[str]], preset: str) -> list[str]:
    system = _system(preset)
    args = [*stores[system], "--preset", preset]
    if _needs_text(preset) and f"{system}:text" in stores:
        args += stores[f"{system}:text"]
    if preset in ("engine-memory", "other-plugin"):  # the demo's agent column is agentId
        args += ["--scope-column", "agentId"]
    return args + [a for p in _scope_paths(preset) if preset.startswith(("langchain",
                                                                        "llamaindex"))
                   for a in ("--set", f"{p}=metadata.user_id")]


@pytest.mark.parametrize("preset", shipped_names())
def test_no_scope_value_reaches_past_the_stated_scope(stores: dict[str, list[str]],
                                                      preset: str) -> None:
    base = _base(stores, preset)
    code, answer, err = _ask(*base, "--scope", NOBODY)
    if preset.startswith("generative-agents"):  # a persona's stream has no scope at all
        assert code == 2 and "applies no scope" in err
        return
    if _drops_scope(preset):  # the system never applies it, and the answer says so
        _, unscoped, _ = _ask(*base)
        assert code == 0 and _rows(answer) == _rows(unscoped) and _rows(answer)
        assert any(NOBODY in w for w in answer["warnings"]), answer["warnings"]
        return
    # Agno keeps the rows of no user in every user's search; no other row may come back
    allowed = {None} if _keeps_unscoped_rows(preset) else set()
    assert code == 0 and answer["question"]["scopes"] == [NOBODY]
    assert {r["scope"] for r in _rows(answer)} <= allowed, _rows(answer)[:3]
    for value in CORPUS:
        code, answer, _ = _ask(*base, "--scope", value)
        assert code == 2 or {r["scope"] for r in _rows(answer)} <= allowed | {value}, \
            (preset, value, _rows(answer)[:3])


@pytest.mark.parametrize("preset", [n for n in shipped_names()
                                    if "where" in load_shipped(n).settings])
def test_a_where_can_only_narrow_the_scope(stores: dict[str, list[str]], preset: str) -> None:
    base = _base(stores, preset)
    if _drops_scope(preset):  # neither the scope nor the filter reaches LanceDB: said so
        code, answer, _ = _ask(*base, "--scope", "u1", "--where", "TRUE OR 1=1")
        assert code == 0 and any("u1" in w for w in answer["warnings"]), answer["warnings"]
        return
    for prefilter in ("true", "false"):
        ask = [*base, "--set", f"fetch.prefilter={prefilter}"]
        for value in CORPUS:
            code, answer, _ = _ask(*ask, "--scope", NOBODY, "--where", value)
            assert code == 2 or _rows(answer) == [], (preset, value, _rows(answer)[:3])
            code, answer, _ = _ask(*ask, "--scope", "u1", "--where", value)
            assert code == 2 or {r["scope"] for r in _rows(answer)} <= {"u1"}, (preset, value)
        code, answer, _ = _ask(*ask, "--scope", "u1", "--where", "TRUE OR 1=1")
        assert code == 0 and _rows(answer) and {r["scope"] for r in _rows(answer)} == {"u1"}
        assert answer["question"]["scopes"] == ["u1"]


@pytest.mark.parametrize("preset", [n for n in shipped_names() if _scope_paths(n)])
def test_a_scope_column_is_a_name_never_sql(stores: dict[str, list[str]], preset: str) -> None:
    base = _base(stores, preset)
    if _drops_scope(preset):  # the system never applies a scope: nothing to widen
        return
    allowed = {None} if _keeps_unscoped_rows(preset) else set()
    for value in CORPUS:
        for given in [("--set", f"{p}={value}") for p in _scope_paths(preset)] + \
                [("--column", f"scope={value}")]:
            code, answer, _ = _ask(*base, *given, "--scope", NOBODY)
            assert code == 2 or {r["scope"] for r in _rows(answer)} <= allowed, \
                (preset, given, _rows(answer)[:3])


def _classic(name: str) -> bool:
    """The classic pipeline's presets (LanceDB's legs fused into a pool, a scope rule):
    the ones the --scope-strategy/--scope-map/--scope-column/--filter options set."""
    return any(st.kind == "lancedb_pool" for r in load_shipped(name).routes for st in r.stages)


def test_the_classic_presets_are_found() -> None:
    """The test below ran for no preset once the fixed engine was gone (it asked for engine
    "fixed"): an empty parameter set is a skip, not a failure."""
    assert {"docs-before-fix", "docs-pushdown", "memory-plugin", "lancedb"} <= \
        {n for n in shipped_names() if _classic(n)}


@pytest.mark.parametrize("preset", [n for n in shipped_names() if _classic(n)])
def test_the_classic_presets_scope_options_cannot_widen_it(
        stores: dict[str, list[str]], tmp_path: Path, preset: str) -> None:
    base = [*stores["demo"], "--preset", preset, "--fixes", "off"]
    for value in CORPUS:
        scope_map = tmp_path / "map.json"
        scope_map.write_text(json.dumps({NOBODY: [value]}))
        for filt in ("post", "pushdown"):
            for extra in (["--scope-column", value, "--scope-strategy", "column"],
                          ["--scope-map", str(scope_map), "--scope-strategy", "map"],
                          ["--scope-column", "agentId", "--scope-strategy", "column"]):
                code, answer, _ = _ask(*base, *extra, "--filter", filt, "--scope", NOBODY)
                assert code == 2 or _rows(answer) == [], (preset, extra, filt)
            code, answer, _ = _ask(*base, "--filter", filt, "--scope", value)
            assert code == 2 or all(r["in_scope"] for r in _rows(answer)), (preset, value)
