"""`inspector check` with audit assertions, for CI: "no memory of scope X is never
recallable", "no leaks", "no starvation"; each holds on one store or pipeline and fails,
exit 1, with the offending memories named, on another."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.cli.main import main


def check(tmp_path: Path, store: Path, *checks: dict[str, Any]) -> tuple[int, list[Any], str]:
    f = tmp_path / f"checks{len(list(tmp_path.glob('checks*')))}.json"
    f.write_text(json.dumps({"store": str(store), "checks": list(checks)}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", str(f), "--json"])
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        main(["check", str(f)])
    return code, json.loads(out.getvalue()), text.getvalue()


def test_no_never_recallable_fails_on_the_scope_holding_the_twin(demo_path: Path,
                                                                  tmp_path: Path) -> None:
    base = {"audit": "recall", "preset": "memory-plugin", "limit": 1,
            "assert": ["no_never_recallable"]}
    code, res, text = check(tmp_path, demo_path, {**base, "name": "ops", "scope": "ops"},
                            {**base, "name": "main", "scope": "main"})
    assert code == 1
    ops, main_ = res
    assert ops["passed"] and ops["assertions"][0]["actual"] == 0
    assert not main_["passed"] and main_["assertions"][0]["actual"] == 1
    why = main_["assertions"][0]["why"]
    assert "agent-memory-timezone-2 (shadowed at fetch: not_fetched)" in why
    assert "of 2016 memories of scope main" in why
    assert "FAIL  main" in text and "PASS  ops" in text


def test_no_starvation_names_the_starved_probes_and_pushdown_passes(demo_path: Path,
                                                                    tmp_path: Path) -> None:
    entry = {"audit": "scopes", "per_scope": 2, "assert": ["no_leaks", "no_starvation"]}
    code, res, _ = check(tmp_path, demo_path, {**entry, "preset": "docs-pushdown"})
    assert code == 0 and res[0]["passed"]
    code, res, _ = check(tmp_path, demo_path, {**entry, "preset": "docs-before-fix"})
    leaks, starve = res[0]["assertions"]
    assert code == 1 and leaks["passed"] and not starve["passed"]
    n = starve["actual"]
    assert n > 10 and starve["why"].count(" of 10)") == 10 and f"… {n - 10} more" in starve["why"]
    assert "(agent-memory: " in starve["why"]


@pytest.fixture
def leaky(make_store: Any) -> Path:
    """Repos a and b; five rows of b are filed under a path in a/, so repo_prefix's path rule
    lets them into scope a, while pushing the scope down (repo IN (a)) keeps them out."""
    rng = np.random.default_rng(3)
    n = 40
    repo = ["a"] * 20 + ["b"] * 20
    path = [f"{r}/notes/{i}.md" for i, r in enumerate(repo)]
    for i in range(20, 25):
        path[i] = f"a/shared/{i}.md"
    return make_store({"id": [f"m{i:02d}" for i in range(n)],
                       "text": [f"note {i}" for i in range(n)],
                       "vector": rng.normal(size=(n, 8)).astype(np.float32),
                       "repo": repo, "path": path, "importance": [0.5] * n})


def test_no_leaks_names_the_rows_a_path_rule_lets_in(leaky: Path, tmp_path: Path) -> None:
    entry = {"audit": "scopes", "preset": "importance-blend", "per_scope": 20, "limit": 10,
             "assert": ["no_leaks"]}
    post = {"scope_rule.strategy": "repo_prefix", "scope_rule.pushdown": False,
            "min_score.min": 0}
    code, res, _ = check(tmp_path, leaky, {**entry, "set": post})
    a = res[0]["assertions"][0]
    assert code == 1 and not a["passed"] and a["actual"] > 0
    assert a["why"].startswith("rows of another scope returned: ") and " of b in a" in a["why"]
    code, res, _ = check(tmp_path, leaky, {**entry, "set": {**post, "scope_rule.pushdown": True}})
    assert code == 0 and res[0]["assertions"][0]["actual"] == 0


@pytest.mark.parametrize("entry,message", [
    ({"audit": "recall", "assert": ["no_never_recallable"]}, "needs \"preset\""),
    ({"audit": "recall", "preset": "memory-plugin", "assert": ["no_leaks"]}, "lists what must"),
    ({"audit": "nope", "preset": "memory-plugin", "assert": []}, "is one of recall, scopes"),
    ({"audit": "scopes", "preset": "memory-plugin", "scope": "x", "assert": ["no_leaks"]},
     "narrows a recall audit"),
    ({"audit": "recall", "preset": "memory-plugin", "sample": 0,
      "assert": ["no_never_recallable"]}, "\"sample\" takes a whole number"),
])
def test_a_malformed_audit_check_is_one_line_exit_2(demo_path: Path, tmp_path: Path,
                                                    entry: dict[str, Any], message: str,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"store": str(demo_path), "checks": [entry]}))
    capsys.readouterr()
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
