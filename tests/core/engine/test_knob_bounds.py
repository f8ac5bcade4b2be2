"""Every ANN knob and depth has a bound LanceDB can honour (issue 21). Past it LanceDB aborted
the process natively (`--refine-factor 1000000000`: it reserves depth x refine factor
candidates up front, 160 GB; `--ef 1000000000`: 8 GB) or refused the search with a conversion
error. The bounds were found on these tables; the commands run in a child process whose
address space is limited to 4 GiB, so an up-front reservation fails the same on any machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.engine import params as P
from inspector.core.engine.params import Params
from inspector.core.engine.pools import EXHAUSTIVE_MAX
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.bounds import MAX_CANDIDATES
from tests import indexkit

ADDRESS_SPACE = 4 << 30


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("knobs")
    return {kind: indexkit.build(base / kind.lower(), kind) for kind in ("IVF_PQ", "IVF_HNSW_SQ")}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _inspector(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_memory)


@pytest.mark.parametrize(("kind", "knob", "value", "named"), [
    ("IVF_PQ", "--refine-factor", "1000000000", "refine_factor"),
    ("IVF_HNSW_SQ", "--ef", "1000000000", "ef"),
    ("IVF_PQ", "--nprobes", "4294967296", "nprobes"),
    ("IVF_PQ", "--min-nprobes", "30", "min_nprobes"),
])
def test_a_knob_past_its_bound_is_one_line_not_a_native_abort(tables, kind, knob, value, named):
    r = _inspector("query", str(tables[kind]), "--vector-of", "r00042", knob, value)
    assert r.returncode == 2, (r.returncode, r.stderr[-300:])
    assert r.stderr.startswith("inspector: ") and r.stderr.count("\n") == 1, r.stderr
    assert named in r.stderr and "LanceDB could not search" not in r.stderr, r.stderr


@pytest.mark.parametrize(("kind", "args"), [
    ("IVF_PQ", ["--refine-factor", str(P.MAX_REFINED // P.ANALYSIS_DEPTH)]),
    ("IVF_PQ", ["--limit", str(MAX_CANDIDATES),
                "--refine-factor", str(P.MAX_REFINED // MAX_CANDIDATES)]),
    ("IVF_PQ", ["--nprobes", str(P.MAX_NPROBES)]),
    ("IVF_PQ", ["--min-nprobes", str(P.MAX_NPROBES), "--max-nprobes", "0"]),
    ("IVF_HNSW_SQ", ["--ef", str(P.MAX_EF)]),
])
def test_lancedb_honours_every_knob_at_its_bound(tables, kind, args):
    r = _inspector("query", str(tables[kind]), "--vector-of", "r00042", "--json", *args)
    assert r.returncode == 0, (r.returncode, r.stderr[-300:])
    assert json.loads(r.stdout)["stages"][-1]["candidates"]


@pytest.mark.parametrize(("field", "bound"), [
    ("limit", MAX_CANDIDATES), ("cap", MAX_CANDIDATES), ("fts_k", MAX_CANDIDATES),
    ("vec_k", MAX_CANDIDATES), ("nprobes", P.MAX_NPROBES), ("max_nprobes", P.MAX_NPROBES),
    ("ef", P.MAX_EF), ("refine_factor", P.MAX_REFINED // P.ANALYSIS_DEPTH)])
def test_every_bound_is_checked_when_params_are_made(field, bound):
    extra = {"ef": bound} if field in ("limit", "vec_k") else {}
    Params(**{field: bound}, **extra)
    with pytest.raises(InspectorError, match=field):
        Params(**{field: bound + 1})


def test_knobs_are_checked_together():
    with pytest.raises(InspectorError, match="min_nprobes 5 is above the maximum nprobes 3"):
        Params(min_nprobes=5, max_nprobes=3)
    with pytest.raises(InspectorError, match="LanceDB's default"):
        Params(min_nprobes=21)
    Params(min_nprobes=21, max_nprobes=0)
    Params(nprobes=40, min_nprobes=30)
    with pytest.raises(InspectorError, match="ef 32 is below the vector search depth 40"):
        Params(limit=10, overfetch=4, ef=32)
    Params(limit=10, overfetch=4, ef=40)
    Params(mode="fts", ef=1, limit=50)  # no vector search: ef is not used
    with pytest.raises(InspectorError, match="refine_factor 50 is more than LanceDB"):
        Params(limit=1000, overfetch=1e308, cap=0, refine_factor=50)  # every row
    Params().with_(refine_factor=50, limit=1_000_000, cap=0)  # the index-fix ladder's top step
    with pytest.raises(InspectorError, match="refine_factor 51 is above 50, the most"):
        Params().with_(refine_factor=51, limit=1_000_000, cap=0)


def test_the_analysis_depth_is_the_engines():
    assert P.ANALYSIS_DEPTH == EXHAUSTIVE_MAX
