"""Relevance judgments and query sets: which ids are relevant (with grades) for a query in a scope.

One immutable `Judgments` value the window updates as the user marks rows (`add`, `remove`)
and saves; the CLI reads the same files. JSON and CSV hold the same information:
JSON {"format": "inspector-judgments", "version": 1, "queries": [{"query", "scope",
"name", "vector_of" or "vector" (the query's own vector, a list of numbers), "judgments":
{id: grade}}]}; CSV columns query,scope,id,grade[,name]
where a row with an empty id declares a query without judgments.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.jsonio import parse_json, read_text
from inspector.core.stores.safety import outputs

FORMAT = "inspector-judgments"
VERSION = 1
CSV_FIELDS = ("query", "scope", "id", "grade", "name")


def _scope(scope: str | None) -> str | None:
    return scope if scope not in (None, "") else None


def _grade(value: Any, where: str) -> float:
    if value in (None, ""):
        return 1.0
    try:
        g = float(value)
    except (TypeError, ValueError):
        raise InspectorError(f"{where}: grade {value!r} is not a number.") from None
    if not math.isfinite(g) or g < 0:
        raise InspectorError(f"{where}: grade {value!r} must be a number >= 0.")
    return g


def _vector(value: Any, where: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in value):
        raise InspectorError(f"{where}: \"vector\" must be a non-empty list of finite numbers.")
    return tuple(float(x) for x in value)


@dataclass(frozen=True)
class JudgedQuery:
    """One query of a set: its text, scope, optional name/example id, and graded ids."""

    text: str
    scope: str | None = None
    grades: tuple[tuple[str, float], ...] = ()  # sorted by id; grade 0 = judged not relevant
    name: str | None = None
    vector_of: str | None = None
    vector: tuple[float, ...] | None = None  # an explicit query vector

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.text.strip(), _scope(self.scope))

    @property
    def label(self) -> str:
        return self.name or self.text

    def grade_map(self) -> dict[str, float]:
        return dict(self.grades)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.text, "scope": self.scope}
        if self.name:
            out["name"] = self.name
        if self.vector_of:
            out["vector_of"] = self.vector_of
        if self.vector is not None:
            out["vector"] = list(self.vector)
        out["judgments"] = {i: (int(g) if g.is_integer() else g) for i, g in self.grades}
        return out


@dataclass(frozen=True)
class Judgments:
    """An ordered set of judged queries; every change returns a new value."""

    queries: tuple[JudgedQuery, ...] = ()

    def find(self, text: str, scope: str | None = None) -> JudgedQuery | None:
        key = (text.strip(), _scope(scope))
        return next((q for q in self.queries if q.key == key), None)

    def grades_for(self, text: str, scope: str | None = None) -> dict[str, float]:
        q = self.find(text, scope)
        return q.grade_map() if q else {}

    def _put(self, q: JudgedQuery) -> Judgments:
        out = [q if x.key == q.key else x for x in self.queries]
        if not any(x.key == q.key for x in self.queries):
            out.append(q)
        return Judgments(tuple(out))

    def with_query(self, text: str, scope: str | None = None, name: str | None = None,
                   vector_of: str | None = None,
                   vector: tuple[float, ...] | None = None) -> Judgments:
        """Add a query without judgments (a query set entry); a known query keeps its grades."""
        if not text or not text.strip():
            raise InspectorError("A judged query needs its query text.")
        old = self.find(text, scope)
        q = JudgedQuery(text.strip(), _scope(scope), old.grades if old else (),
                        name or (old.name if old else None),
                        vector_of or (old.vector_of if old else None),
                        vector if vector is not None else (old.vector if old else None))
        return self._put(q)

    def add(self, text: str, scope: str | None, row_id: Any, grade: float = 1.0) -> Judgments:
        """Mark row_id with a grade for (query, scope); an existing grade is replaced."""
        g = _grade(grade, "judgment")
        base = self.with_query(text, scope).find(text, scope)
        assert base is not None
        grades = dict(base.grades)
        grades[str(row_id)] = g
        return self._put(replace(base, grades=tuple(sorted(grades.items()))))

    def remove(self, text: str, scope: str | None, row_id: Any) -> Judgments:
        """Forget the judgment of row_id for (query, scope); the query itself stays."""
        q = self.find(text, scope)
        if q is None:
            return self
        grades = tuple((i, g) for i, g in q.grades if i != str(row_id))
        return self._put(replace(q, grades=grades))

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "queries": [q.to_json() for q in self.queries]}

    @classmethod
    def from_json(cls, data: Any, source: str = "judgments") -> Judgments:
        if isinstance(data, dict):
            data = data.get("queries")
        if not isinstance(data, list):
            raise InspectorError(f"{source} must hold a list of queries under \"queries\".")
        out = cls()
        for n, entry in enumerate(data, 1):
            where = f"{source}, query {n}"
            if not isinstance(entry, dict) or not isinstance(entry.get("query"), str):
                raise InspectorError(f"{where}: each entry needs a \"query\" text.")
            scope = entry.get("scope")
            if scope is not None and not isinstance(scope, str):
                raise InspectorError(f"{where}: \"scope\" must be a string or null.")
            out = out.with_query(entry["query"], scope, entry.get("name"), entry.get("vector_of"),
                                 _vector(entry.get("vector"), where))
            marks = entry.get("judgments", entry.get("relevant", {}))
            if isinstance(marks, list):
                marks = {str(i): 1 for i in marks}
            if not isinstance(marks, dict):
                raise InspectorError(f"{where}: \"judgments\" must map ids to grades.")
            for rid, g in marks.items():
                out = out.add(entry["query"], scope, rid, _grade(g, where))
        return out

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_FIELDS)
        for q in self.queries:
            rows = q.grades or (("", None),)
            for rid, g in rows:
                grade = "" if g is None else (int(g) if g.is_integer() else g)
                w.writerow([q.text, q.scope or "", rid, grade, q.name or ""])
        return buf.getvalue()

    @classmethod
    def from_csv(cls, text: str, source: str = "judgments") -> Judgments:
        reader = csv.DictReader(io.StringIO(text))
        missing = {"query", "id"} - set(reader.fieldnames or ())
        if missing:
            raise InspectorError(f"{source} needs the CSV columns query,scope,id,grade; "
                                 f"missing {', '.join(sorted(missing))}.")
        out = cls()
        for n, row in enumerate(reader, 2):
            where = f"{source}, line {n}"
            text_ = (row.get("query") or "").strip()
            if not text_:
                raise InspectorError(f"{where}: the query is empty.")
            scope = (row.get("scope") or "").strip() or None
            out = out.with_query(text_, scope, (row.get("name") or "").strip() or None)
            rid = (row.get("id") or "").strip()
            if rid:
                out = out.add(text_, scope, rid, _grade(row.get("grade"), where))
        return out


def load_judgments(path: str | Path) -> Judgments:
    """Read a judgments or query-set file: .csv as CSV, anything else as JSON."""
    p = Path(path)
    text = read_text(p, "Judgments file")
    if p.suffix.lower() == ".csv":
        return Judgments.from_csv(text, str(p))
    return Judgments.from_json(parse_json(text, "Judgments file", p), str(p))


def save_judgments(judgments: Judgments, path: str | Path) -> Path:
    """Write judgments as CSV (.csv) or JSON (anything else) by the guarded writer (never into
    a store, never through a link; an existing file is replaced); returns the path written."""
    p = Path(path)
    text = judgments.to_csv() if p.suffix.lower() == ".csv" else \
        json.dumps(judgments.to_json(), indent=2, ensure_ascii=False) + "\n"
    return outputs.write_file(p, text, force=True)
