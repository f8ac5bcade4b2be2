"""Scope rules as the public engine applies them, and pushdown that cannot be subverted."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.scope import (
    evaluate,
    make_scope,
    normalize_scope,
    normalize_scope_map,
    pushdown,
    scope_key,
)
from inspector.core.stores.opening import open_store
from inspector.core.stores.roles import Roles
from tests.askkit import ask

ROLES = Roles(id="id", text="text", vector="vector", repo="repo", path="path", scope="scope")
ROWS = {
    "repo": ["vault", "Vault", "platform", "platform", "ops", None],
    "path": ["vault/a.md", "Vault/b.md", "platform/vault/c.md", "vault/d.md", "ops/vault",
             "misc/e.md"],
}


def _eval(scope, strategy="repo_prefix", scope_map=None):
    ok, why, _ = evaluate(make_scope(scope, strategy, scope_map), ROLES, ROWS, 6)
    return ok, why


def test_scope_is_normalised_like_the_engine():
    assert normalize_scope("  ISO:Vault/sub ") == "vault/sub"
    assert normalize_scope("scope:Vault") == "vault"
    assert normalize_scope("iso:scope:x") == "scope:x"  # only one leading prefix is removed
    assert scope_key("vault/sub") == "vault"
    assert scope_key("agent:main") == "agent"
    assert scope_key("plain") == "plain"


def test_repo_prefix_matches_repo_or_path_case_insensitively():
    ok, why = _eval("iso:VAULT/anything")
    assert ok == [True, True, False, True, False, False]
    assert why[0] == "repo == 'vault'"
    assert why[3] == "path starts with 'vault/'"
    assert "!=" in why[2]


def test_global_and_empty_scope_match_everything():
    for scope in ("global", "GLOBAL", "", "iso:global"):
        ok, why = _eval(scope)
        assert all(ok)
        assert why[0] == "global scope"
    ok, why = _eval(None)
    assert all(ok) and why[0] == "no scope"


def test_path_prefix_rules():
    ok, why = _eval("vault", "path_prefix")
    # path == p, startswith p/, or contains /p/
    assert ok == [True, True, True, True, False, False]
    assert why[2] == "path contains '/vault/'"
    ok, _ = _eval("ops/vault", "path_prefix")
    assert ok == [False, False, False, False, True, False]


def test_map_strategy_entries_empty_entries_and_unknown_scope():
    smap = {"team-a": ["vault", "platform/vault"], "nobody": []}
    ok, why = _eval("team-a", "map", smap)
    assert ok == [True, True, True, True, False, False]
    assert why[2] == "map: path under 'platform/vault'"
    ok, why = _eval("nobody", "map", smap)
    assert ok == [False] * 6 and "maps to no entries" in why[0]
    ok, why = _eval("stranger", "map", smap)  # no entry: denied, as the plugin's map denies
    assert ok == [False] * 6 and "maps to no entries" in why[0]


def test_the_docs_rules_are_one_copy_the_classic_and_the_plugin_read() -> None:
    """The classic docs presets and openclaw-mem's stages decide scopes with the same rule
    (they disagreed: scope "/vault" against repo "vault"), at its boundaries: a repo named
    like the scope with a suffix is not under it, in the repo rule and in the map rule."""
    from inspector.core.engine.flow.stages.openclaw_docs.rules import matches_scope

    rows = [("vault", "x.md"), ("vault-agent", "a.md"), ("other", "vault/a.md"),
            ("other", "vault-agent/b.md"), ("Vault", "V.md")]
    smap = {"[iso:Team]": ["/vault", 7, ""]}
    for scope in ("/vault", "[iso:VAULT]", " scope:vault/x ", "vault:sub"):
        for strategy, m in (("repo_prefix", {}), ("path_prefix", {}), ("map", smap)):
            spec = make_scope(scope if strategy != "map" else "team", strategy, m)
            mine = evaluate(spec, ROLES, {"repo": [r for r, _ in rows],
                                          "path": [p for _, p in rows]}, len(rows))[0]
            theirs = [matches_scope(r, p, scope if strategy != "map" else "team", strategy,
                                    normalize_scope_map(m)) for r, p in rows]
            assert mine == theirs, (scope, strategy)
    spec = make_scope("/vault", "repo_prefix")
    ok = evaluate(spec, ROLES, {"repo": ["vault", "vault-agent"],
                                "path": ["a.md", "vault-agent/x.md"]}, 2)[0]
    assert ok == [True, False]
    spec = make_scope("team", "map", {"team": ["vault"]})
    ok = evaluate(spec, ROLES, {"repo": ["vault-agent", "x"],
                                "path": ["a.md", "vault-agent/x.md"]}, 2)[0]
    assert ok == [False, False]


def test_none_strategy_keeps_everything():
    ok, _ = _eval("vault", "none")
    assert all(ok)


def test_column_strategy_compares_exactly():
    ok, why, _ = evaluate(make_scope("Vault", "column", column="repo"), ROLES, ROWS, 6)
    assert ok == [False, True, False, False, False, False]
    assert why[1] == "repo == 'Vault'"


def test_pushdown_only_pushes_repo_style_map_entries():
    spec = make_scope("team-a", "map", {"team-a": ["vault", "platform/vault", "Ops"]})
    push = pushdown(spec, ROLES)
    assert push.values == ("vault", "Ops")
    assert push.sql == "repo IN ('vault', 'Ops')"
    path_only = pushdown(make_scope("t", "map", {"t": ["a/b"]}), ROLES)
    assert path_only.expr is None and "post-filter only" in path_only.note
    assert pushdown(make_scope("vault", "path_prefix"), ROLES).expr is None


def test_pushdown_and_post_filter_disagree_on_mixed_case_and_the_trace_shows_it(make_store):
    n = 4
    path = make_store({"id": ["a", "b", "c", "d"], "text": ["t"] * n,
                       "vector": np.eye(n, dtype=np.float32),
                       "repo": ["MyRepo", "myrepo", "other", "MyRepo"],
                       "path": ["MyRepo/x", "myrepo/y", "other/z", "MyRepo/w"]})
    store = open_store(str(path))
    q = np.zeros(n, np.float32)
    post = ask(store, vector=q, limit=4, scope="MyRepo").trace
    assert sorted(post.stage("scope").ids) == ["a", "b", "d"]  # post-filter lower-cases
    push = ask(store, vector=q, limit=4, scope="MyRepo", filter="pushdown").trace
    assert push.stage("fetch").facts["pushdown_sql"] == "repo IN ('myrepo')"
    assert push.final.ids == ["b"]
    # rows the post-filter keeps but the exact pushdown predicate does not
    assert sorted(set(post.stage("scope").ids) - set(push.final.ids)) == ["a", "d"]


VALUES = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=VALUES, others=st.lists(VALUES, min_size=1, max_size=6))
def test_no_scope_string_changes_the_pushed_down_predicate(make_store, scope, others):
    values = [scope, *others, "' OR '1'='1", "x%", "_", "a\\b", 'q"q']
    n = len(values) * 2
    rng = np.random.default_rng(len(values))
    path = make_store({"id": [f"r{i}" for i in range(n)], "text": ["t"] * n,
                       "vector": rng.normal(size=(n, 3)).astype(np.float32),
                       "scope": pa.array([values[i % len(values)] for i in range(n)])})
    store = open_store(str(path))
    t = ask(store, vector=np.zeros(3, np.float32), limit=n, cap=0, scope=scope,
            scope_strategy="column", scope_column="scope", filter="pushdown").trace
    want = sorted(f"r{i}" for i in range(n) if values[i % len(values)] == scope)
    assert sorted(t.stage("fetch").ids) == want
    push = pushdown(make_scope(scope, "column", None, "scope"), store.roles)
    assert (push.column, push.values) == ("scope", (scope,))


def test_the_docs_rules_remembered_across_calls_give_what_a_fresh_decision_gives(monkeypatch):
    """A sweep's queries bring the same rows back in new pools: the docs rules' verdicts are
    remembered by the spec and the row's (repo, path) values, types included, and each equals
    the rule decided afresh; a second call with the same values decides none again."""
    import math

    from inspector.core.engine import scope as S

    rng = np.random.default_rng(7)
    pick = [None, "", "vault", "Vault", "vault-agent", 3, "3", 3.0, math.nan, ["vault"],
            "vault/docs/a.md", "docs/vault/x", "other/vault/y.md", "VAULT/deep/z"]
    n = 400
    repos = [pick[i] for i in rng.integers(0, len(pick), n)]
    paths = [pick[i] for i in rng.integers(0, len(pick), n)]
    values = {"repo": repos, "path": paths}
    specs = [make_scope("vault", "repo_prefix"), make_scope("vault", "path_prefix"),
             make_scope("vault", "map", {"vault": ["vault", "docs/vault"]}),
             make_scope("3", "repo_prefix")]
    S._DOC_RULES.clear()
    calls: list[int] = []
    real = S.match_docs

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(S, "match_docs", counted)
    for spec in specs:
        first = evaluate(spec, ROLES, values, n)
        calls.clear()
        again = evaluate(spec, ROLES, values, n)
        reads_repo = spec.strategy != "path_prefix"  # path_prefix reads the path alone
        unhashable = sum(isinstance(r, list) and reads_repo or isinstance(p, list)
                         for r, p in zip(repos, paths, strict=True))
        assert len(calls) == unhashable  # only rows whose values cannot be remembered
        with monkeypatch.context() as m:
            m.setattr(S, "_doc_memo", lambda _spec: None)
            fresh = evaluate(spec, ROLES, values, n)
        assert first == again == fresh
    S._DOC_RULES.clear()
