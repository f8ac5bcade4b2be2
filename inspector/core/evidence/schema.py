"""The shape of a receipt, as pydantic models: what `receipt.load` validates before anything
is shown (a file anyone can edit: a part of the wrong shape is one sentence naming the first
field that is wrong, `errors()[0]["loc"]`), and what `inspector pipeline schema receipt`
prints (`model_json_schema()`, with each side's answer described by the answer's own schema,
`answer_schema.py`).

The models hold what a reader of the receipt reads back (the verdict, every stage's rows and
drops, the evidence the page and the window draw); the rest of each answer is kept as it was
written, and the answer schema says what it holds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from inspector.core.engine.flow.question import Question

FORMAT = "inspector-receipt"
VERSION = 2
Id = str | int


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Returned(_Strict):
    count: int = Field(ge=0)
    ids: list[Id]
    full_page: bool


class FixDoc(_Strict):
    """A fix the diagnosis ran: what it is, the arguments that apply it, what it returned."""

    label: str
    kind: Literal["own", "what_if"]
    argv: list[str]
    changes: dict[str, Any]
    widen: dict[str, int]
    exact: bool
    returns: Returned


class Side(_Strict):
    """One side of the verdict: its question's rows returned of the limit and its
    diagnosis with the fixes that were run."""

    label: str
    pipeline: str
    returned: int = Field(ge=0)
    limit: int = Field(ge=1)
    ids: list[Id]
    code: str
    title: str
    message: str
    fixes: list[FixDoc]
    exact: bool
    scoped_recall: float | None = None


class Verdict(_Strict):
    before: Side
    after: Side | None = None
    gained: list[Id] = Field(default_factory=list)
    lost: list[Id] = Field(default_factory=list)


class Candidate(_Open):
    id: Id
    rank: int = Field(ge=1)
    score: float | None


class Dropped(_Open):
    id: Id
    code: str


class Stage(_Open):
    name: str
    kind: str
    role: str
    count: int = Field(ge=0)
    candidates: list[Candidate]
    dropped: list[Dropped]

    @model_validator(mode="after")
    def _count(self) -> Stage:
        if self.count != len(self.candidates):
            raise ValueError(f"count {self.count} is not the number of candidates "
                             f"({len(self.candidates)})")
        return self


class Diagnosis(_Open):
    code: str
    title: str
    message: str
    fixes: list[FixDoc]


class Answer(_Open):
    """One side's answer as `inspector query --json` prints it (schema 3)."""

    schema_: Literal[3] = Field(alias="schema")
    store: dict[str, Any]
    pipeline: dict[str, Any]
    params: dict[str, Any]
    stages: list[Stage] = Field(min_length=1)
    diagnosis: Diagnosis
    question: Question


class MapDoc(_Strict):
    """The rows of the probe on two PCA axes (analysis.poolmap)."""

    ids: list[Id]
    x: list[float]
    y: list[float]
    query: list[float] | None = Field(None, min_length=2, max_length=2)
    in_scope: list[bool]
    raw_rank: list[int]
    final: list[bool]
    cut_depth: int = Field(ge=0)
    cut_radius: float | None
    explained: list[float] = Field(min_length=2, max_length=2)
    stage: str = ""

    @model_validator(mode="after")
    def _lengths(self) -> MapDoc:
        n = len(self.ids)
        for name in ("x", "y", "in_scope", "raw_rank", "final"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values for {n} rows")
        return self


class SideEvidence(_Strict):
    """What a side's answer is measured against: its truth (the same question, its filters
    seeing the whole ranking) and the metrics of its final list."""

    truth: list[Id] | None
    metrics: dict[str, float | None]


class Evidence(_Strict):
    before: SideEvidence
    after: SideEvidence | None = None
    judgments: dict[str, float] | None = None
    safe: dict[str, Any] | None = None  # analysis.safe.SafeDepth.to_json()
    sweep: dict[str, Any] | None = None  # analysis.sweep.SweepResult.to_json()
    comparison: dict[str, Any] | None = None  # analysis.compare.Comparison.to_json()
    map: MapDoc | None = None


class Reopen(_Strict):
    """Where the receipt's question is re-run live: the store (without credentials), the
    table and the version it read."""

    store: str
    table: str | None
    version: int | None
    rows: int | None
    how: str


class Receipt(_Strict):
    """The one receipt of every pipeline (see receipt.py)."""

    format: Literal["inspector-receipt"]
    version: Literal[2]
    created: str
    verdict: Verdict
    before: Answer
    after: Answer | None = None
    evidence: Evidence
    reopen: Reopen


def receipt_schema() -> dict[str, Any]:
    """The receipt's JSON Schema: the models above, each side's answer by the answer schema."""
    from inspector.core.evidence.answer_schema import answer_schema

    out = Receipt.model_json_schema(by_alias=True)
    answer = {k: v for k, v in answer_schema().items() if k != "$schema"}
    out.setdefault("$defs", {})["Answer"] = answer
    out["properties"]["after"] = {"anyOf": [{"$ref": "#/$defs/Answer"}, {"type": "null"}],
                                  "default": None}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **out, "title": "inspector receipt"}
