"""The Python API's exports and table listing: `Result.to_csv/to_parquet` write the files
`inspector query --export` writes for the same query, `inspector.tables` is `inspector tables
--json`, and neither writes anywhere it was not asked."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import inspector
from inspector.cli.main import main
from inspector.core.errors import InspectorError
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot

NOW = "1796113038032"


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("api-exports"))


def _cases(demo: Path, fx: Path) -> list[tuple[dict, list[str]]]:
    vec = json.loads((fx / "q_pg.json").read_text())
    return [
        (dict(store=demo, text="rotate the signing keys", preset="docs-overfetch",
              scope="vault-agent"),
         [str(demo), "--text", "rotate the signing keys", "--preset", "docs-overfetch",
          "--scope", "vault-agent"]),
        (dict(store=fx / "store", text="postgres connection pool size", vector=vec,
              preset="memory-lancedb-pro", scopes=["agent:main"], now=int(NOW)),
         [str(fx / "store"), "--text", "postgres connection pool size", "--vector",
          f"@{fx / 'q_pg.json'}", "--preset", "memory-lancedb-pro", "--scope", "agent:main",
          "--now", NOW]),
    ]


def test_result_exports_are_the_command_lines(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path, demo_path: Path,
                                              fx: Path) -> None:
    before = snapshot(fx / "store")
    for n, (kw, argv) in enumerate(_cases(demo_path, fx)):
        store = kw.pop("store")
        r = inspector.open(store).query(**kw)
        for fmt in ("csv", "parquet"):
            api_dir, cli_dir = tmp_path / f"api{n}{fmt}", tmp_path / f"cli{n}{fmt}"
            written = getattr(r, f"to_{fmt}")(api_dir)
            assert main(["query", *argv, "--export", str(cli_dir), "--format", fmt]) == 0
            capsys.readouterr()
            names = sorted(p.name for p in cli_dir.iterdir())
            assert sorted(p.name for p in written) == names
            for name in names:
                a, c = api_dir / name, cli_dir / name
                if name.endswith(".parquet"):
                    assert pq.read_table(a).equals(pq.read_table(c)), name
                elif name == "answer.json":  # the flow question names the store as given
                    assert json.loads(a.read_text())["stages"] == \
                        json.loads(c.read_text())["stages"]
                else:
                    assert a.read_bytes() == c.read_bytes(), name
        tables = r.stage_tables()
        assert list(tables) == [f"{i:02d}-{s}" for i, s in enumerate(r.stages, 1)] + \
            ["results"]
        assert tables["results"].column("id").to_pylist() == r.final_ids
    assert snapshot(fx / "store") == before


def test_result_exports_refuse_to_overwrite_or_write_into_the_store(
        tmp_path: Path, fx: Path) -> None:
    store = fx / "store"
    before = snapshot(store)
    r = inspector.open(store).query(text="postgres", vector_of="a1",
                                    preset="memory-lancedb-pro", now=int(NOW))
    out = tmp_path / "out"
    first = r.to_csv(out)
    with pytest.raises(InspectorError, match="exists"):
        r.to_csv(out)
    assert r.to_csv(out, force=True) == first
    with pytest.raises(InspectorError, match="inside the store"):
        r.to_parquet(store / "exports")
    with pytest.raises(InspectorError, match="csv or parquet"):
        from inspector.core.evidence.exports import export_answer

        export_answer(r.to_json(), tmp_path / "y", "xlsx")
    assert snapshot(store) == before


def test_tables_lists_what_the_command_line_lists(capsys: pytest.CaptureFixture[str],
                                                  fx: Path) -> None:
    store = str(fx / "store")
    capsys.readouterr()
    assert main(["tables", store, "--json"]) == 0
    assert inspector.tables(store) == json.loads(capsys.readouterr().out)
    assert inspector.tables(store)[0]["system"]["preset"] == "memory-lancedb-pro"
