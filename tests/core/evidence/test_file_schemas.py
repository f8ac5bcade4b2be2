"""The JSON Schemas of judgments, checks and scope-map files agree with their readers: what a
reader accepts fits the schema (the documented examples too), and each kind of bad input the
reader refuses, the schema refuses as well."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.cli.main import main
from inspector.core.analysis.judgments import Judgments
from inspector.core.engine.scope import parse_scope_map
from inspector.core.errors import InspectorError
from inspector.core.evidence.checks import parse_checks
from inspector.core.evidence.file_schemas import SCHEMAS

ROOT = Path(__file__).resolve().parents[3]
TEXT = "how do I rotate the signing keys for service tokens"


def fits(kind: str, doc: Any) -> bool:
    try:
        jsonschema.validate(doc, SCHEMAS[kind]())
    except jsonschema.ValidationError:
        return False
    return True


def reads(kind: str, doc: Any, tmp_path: Path) -> bool:
    try:
        if kind == "judgments":
            Judgments.from_json(doc)
        elif kind == "scope-map":
            parse_scope_map(doc)
        else:
            parse_checks(doc, tmp_path, "checks")
    except InspectorError:
        return False
    return True


GOOD = [
    ("judgments", {"format": "inspector-judgments", "version": 1,
                   "queries": [{"query": TEXT, "scope": "vault-agent",
                                "judgments": {"a": 2, "b": "1", "c": None}},
                               {"query": "plain", "scope": None},
                               {"query": "listed", "relevant": ["a", "b"],
                                "vector_of": "a"}]}),
    ("judgments", [{"query": TEXT}]),
    ("scope-map", {"vault-agent": ["vault-agent", "vault/"], "ops": "ops"}),
    ("checks", {"format": "inspector-checks", "version": 1, "store": "s",
                "defaults": {"limit": 10},
                "checks": [
                    {"name": "fixed", "text": TEXT, "scope": "vault-agent",
                     "preset": "docs-pushdown", "params": {"overfetch": 3},
                     "relevant": {"a": 2},
                     "assert": ["returned == 10", {"id": "a", "top": 3}]},
                    {"name": "by example", "vector_of": "a", "assert": ["returned > 0"]},
                    {"name": "stages", "question": {"preset": "memory-lancedb-pro",
                                                    "text": TEXT, "scopes": ["global"]},
                     "assert": ["returned >= 1"]},
                    {"audit": "scopes", "preset": "docs-pushdown", "per_scope": 2,
                     "assert": ["no_leaks", "no_starvation"]},
                    {"audit": "recall", "preset": "memory-lancedb-pro",
                     "assert": "no_never_recallable"},
                ]}),
]

BAD = [
    ("judgments", {"queries": [{"scope": "x"}]}),  # no query text
    ("judgments", {"queries": [{"query": "q", "scope": 3}]}),
    ("judgments", {"queries": [{"query": "q", "judgments": "a"}]}),
    ("judgments", {"queries": [{"query": "q", "judgments": {"a": -1}}]}),
    ("judgments", {"queries": "q"}),
    ("scope-map", ["vault"]),
    ("scope-map", {"vault": [1, 2]}),
    ("checks", {"checks": {}}),
    ("checks", {"store": 5, "checks": []}),
    ("checks", {"defaults": [], "checks": []}),
    ("checks", {"checks": ["q"]}),
    ("checks", {"checks": [{"text": TEXT}]}),  # no assertions
    ("checks", {"checks": [{"text": TEXT, "assert": []}]}),
    ("checks", {"checks": [{"assert": ["returned > 0"]}]}),  # no query
    ("checks", {"checks": [{"text": 5, "assert": ["returned > 0"]}]}),
    ("checks", {"checks": [{"text": TEXT, "params": [], "assert": ["returned > 0"]}]}),
    ("checks", {"checks": [{"audit": "leaks", "preset": "docs-pushdown",
                            "assert": ["no_leaks"]}]}),
    ("checks", {"checks": [{"audit": "scopes", "assert": ["no_leaks"]}]}),  # no preset
    ("checks", {"checks": [{"audit": "scopes", "preset": "docs-pushdown",
                            "assert": ["no_leaks"], "sampel": 3}]}),
    ("checks", {"checks": [{"audit": "recall", "preset": "docs-pushdown",
                            "assert": ["no_leeks"]}]}),
    ("checks", {"checks": [{"question": {"preset": "memory-lancedb-pro", "txet": "x"},
                            "assert": ["returned >= 1"]}]}),
    ("checks", {"checks": [{"question": {"preset": "memory-lancedb-pro"}, "assert": []}]}),
]


@pytest.mark.parametrize(("kind", "doc"), GOOD, ids=lambda x: x if isinstance(x, str) else "")
def test_what_a_reader_accepts_fits_its_schema(kind: str, doc: Any, tmp_path: Path) -> None:
    assert reads(kind, doc, tmp_path)
    assert fits(kind, doc)


@pytest.mark.parametrize(("kind", "doc"), BAD, ids=lambda x: x if isinstance(x, str) else "")
def test_what_a_reader_refuses_its_schema_refuses(kind: str, doc: Any, tmp_path: Path) -> None:
    assert not reads(kind, doc, tmp_path)
    assert not fits(kind, doc)


def test_the_documented_examples_fit_and_the_command_prints_each_schema(capsys) -> None:
    formats = (ROOT / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", formats, re.S)]
    named = {"inspector-judgments": "judgments", "inspector-checks": "checks"}
    seen = set()
    for doc in blocks:
        kind = named.get(doc.get("format")) if isinstance(doc, dict) else None
        if kind:
            seen.add(kind)
            assert fits(kind, doc), doc
    assert seen == {"judgments", "checks"}
    for kind in SCHEMAS:
        assert main(["pipeline", "schema", kind]) == 0
        assert json.loads(capsys.readouterr().out) == SCHEMAS[kind]()
