"""One question on two versions of a table side by side, and the write that pushed a row out
of the results, for any pipeline: any of its stages can be compared (the last, the final
results, by default).

Every version is opened with a checkout, which reads a manifest and never writes; the query
vector is computed once and reused (a text query is embedded once), so only the data differs
between the runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.question import Question, query_vector, runs_for
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.errors import InspectorError
from inspector.core.jsonio import plain
from inspector.core.stores.store import Store
from inspector.core.stores.versions import list_versions


@dataclass(frozen=True)
class RankChange:
    id: Any
    rank_a: int | None  # 1-based rank in the compared stage, None when absent
    rank_b: int | None

    def to_json(self) -> dict[str, Any]:
        return {"id": plain(self.id), "rank_a": self.rank_a, "rank_b": self.rank_b}


@dataclass(frozen=True)
class VersionDiff:
    """The same question on versions a and b: both runs, and what changed in one stage."""

    version_a: int
    version_b: int
    a: FlowTrace
    b: FlowTrace
    stage: str
    only_a: tuple[Any, ...]  # in a's stage, not in b's: pushed out (or deleted)
    only_b: tuple[Any, ...]  # in b's stage, not in a's: came in
    moved: tuple[RankChange, ...]  # in both, at different ranks

    def to_json(self) -> dict[str, Any]:
        from inspector.core.engine.flow.answer import to_json

        return {"stage": self.stage, "version_a": self.version_a, "version_b": self.version_b,
                "only_a": [plain(x) for x in self.only_a],
                "only_b": [plain(x) for x in self.only_b],
                "moved": [m.to_json() for m in self.moved],
                "a": to_json(self.a), "b": to_json(self.b)}


def _ids(t: FlowTrace, stage: str) -> list[str]:
    names = [s.name for s in t.stages]
    if stage not in names:
        raise InspectorError(f"Unknown stage '{stage}'; pipeline {t.spec.name} has "
                             f"{', '.join(names)}.")
    return t.stage(stage).ids


def diff_traces(a: FlowTrace, b: FlowTrace, stage: str | None = None, version_a: int = 0,
                version_b: int = 0) -> VersionDiff:
    """Rows only in one run's stage (the last by default), and rank changes for rows in
    both."""
    stage = stage or a.stages[-1].name
    ia, ib = _ids(a, stage), _ids(b, stage)
    ra = {x: r for r, x in enumerate(ia, 1)}
    rb = {x: r for r, x in enumerate(ib, 1)}
    moved = tuple(RankChange(x, ra[x], rb[x]) for x in ia if x in rb and ra[x] != rb[x])
    return VersionDiff(version_a=version_a, version_b=version_b, a=a, b=b, stage=stage,
                       only_a=tuple(x for x in ia if x not in rb),
                       only_b=tuple(x for x in ib if x not in ra), moved=moved)


def pinned(store: Store, q: Question) -> Question:
    """The question with its query vector computed once (a text embedded, a row's vector
    read), so every version runs the same vector."""
    vec, _, _ = query_vector(store, q)
    if vec is None or q.vector is not None:
        return q
    return q.model_copy(update={"vector": [float(x) for x in vec], "vector_of": None})


def run_at(store: Store, q: Question, version: int) -> FlowTrace:
    """The question's run on the table as of `version` (a checkout; never a write)."""
    s = store if version == store.version else store.reopen(version)
    runs, notes, inexact = runs_for(q, s)
    t = runs.run()
    return t.with_notes(notes, inexact) if notes or inexact else t


def compare_versions(store: Store, q: Question, version_a: int, version_b: int | None = None,
                     stage: str | None = None) -> VersionDiff:
    """Run one question (same vector, same pipeline) on two versions of the store's table.
    version_b defaults to the newest version."""
    q = pinned(store, q)
    vb = store.latest_version() if version_b is None else version_b
    a, b = run_at(store, q, version_a), run_at(store, q, vb)
    return diff_traces(a, b, stage, int(a.store["version"]), int(b.store["version"]))


@dataclass(frozen=True)
class PushOut:
    """Where a row left the results: the last version holding it and the first without it."""

    id: Any
    last_with: int | None
    first_without: int | None
    entered: tuple[Any, ...]  # rows in first_without's results that were not in last_with's
    checked: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": plain(self.id), "last_with": self.last_with,
                "first_without": self.first_without,
                "entered": [plain(x) for x in self.entered], "checked": list(self.checked)}


def find_push_out(store: Store, q: Question, row_id: Any, versions: list[int] | None = None,
                  stage: str | None = None) -> PushOut:
    """Walk versions oldest to newest and report the first write after which row_id is no
    longer in `stage` (it was in the version before). Each version is one pipeline run."""
    q = pinned(store, q)
    todo = versions or [v.version for v in list_versions(store)]
    key = str(row_id)
    prev: tuple[int, list[str]] | None = None
    checked: list[int] = []
    for v in sorted(todo):
        t = run_at(store, q, v)
        ids = _ids(t, stage or t.stages[-1].name)
        checked.append(v)
        if prev is not None and key not in ids and key in prev[1]:
            return PushOut(id=row_id, last_with=prev[0], first_without=v,
                           entered=tuple(x for x in ids if x not in prev[1]),
                           checked=tuple(checked))
        prev = (v, ids)
    return PushOut(id=row_id, last_with=None, first_without=None, entered=(),
                   checked=tuple(checked))


def format_diff(diff: VersionDiff, push: PushOut | None = None) -> str:
    """Readable text for a version comparison (the CLI's `diff-versions`)."""
    store = diff.a.store
    rows_a, rows_b = diff.a.store.get("rows"), diff.b.store.get("rows")
    ra = {x: r for r, x in enumerate(diff.a.stage(diff.stage).ids, 1)}
    rb = {x: r for r, x in enumerate(diff.b.stage(diff.stage).ids, 1)}
    out = [f"store {store['uri']}  table {store['table']}  pipeline {diff.a.spec.name}  "
           f"stage {diff.stage}",
           f"v{diff.version_a} ({rows_a} rows): {len(ra)} results   "
           f"v{diff.version_b} ({rows_b} rows): {len(rb)} results"]
    out.append(f"only in v{diff.version_a} (pushed out or deleted): " + (", ".join(
        f"{x} (#{ra[x]})" for x in diff.only_a) or "none"))
    out.append(f"only in v{diff.version_b} (came in): " + (", ".join(
        f"{x} (#{rb[x]})" for x in diff.only_b) or "none"))
    out.append("moved: " + (", ".join(f"{m.id} #{m.rank_a} -> #{m.rank_b}" for m in diff.moved)
                            or "none"))
    if push is not None:
        if push.first_without is None:
            out.append(f"{push.id}: never left the {diff.stage} results in versions "
                       f"{', '.join(map(str, push.checked))}")
        else:
            came = ", ".join(str(plain(x)) for x in push.entered) or "nothing new"
            out.append(f"{push.id}: in the results at v{push.last_with}, gone at "
                       f"v{push.first_without}; came in then: {came}")
    return "\n".join(out)
