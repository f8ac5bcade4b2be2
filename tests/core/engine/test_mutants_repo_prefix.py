"""A repo-prefix scope is a whole repo name or a whole path segment, never a string prefix:
scope `vault` keeps repo `vault` and path `vault/...`, and not repo `vault-agent`, path
`vault-agent/...` or a file named `vault.md`; the pushed-down predicate is `repo IN ('vault')`
on real LanceDB rows."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.engine.scope import evaluate, make_scope, pushdown
from inspector.core.stores.opening import open_store
from inspector.core.stores.roles import Roles
from tests.askkit import ask

ROWS = [  # id, repo, path
    ("v1", "vault", "vault/x.md"),  # repo == vault
    ("v2", "other", "vault/y.md"),  # path under vault/
    ("a1", "vault-agent", "vault-agent/x.md"),
    ("a2", "other", "vault-agent/y.md"),
    ("a3", "vault-agent", "docs/z.md"),
    ("a4", "other", "vault.md"),  # starts with "vault", not with "vault/"
    ("a5", "vaults", "vaults/w.md"),
]
IDS = [r[0] for r in ROWS]
POST = ["v1", "v2"]  # what the post-filter keeps
PUSHED = ["v1"]  # what repo IN ('vault') keeps
SCOPES = ["vault", "Vault", "iso:vault", "vault/sub/dir", "scope:vault:main"]
QUERY = np.array([1, 0, 0, 0], np.float32)


@pytest.fixture
def store(make_store):
    n = len(ROWS)
    vec = np.zeros((n, 4), np.float32)
    vec[:, 0] = 1.0 + 0.1 * np.arange(1, n + 1)  # ranked in ROWS order
    return open_store(str(make_store({"id": IDS, "text": ["t"] * n, "vector": vec,
                                      "repo": [r[1] for r in ROWS],
                                      "path": [r[2] for r in ROWS]})))


@pytest.mark.parametrize("scope", SCOPES)
def test_repo_prefix_post_filter_does_not_match_a_repo_that_merely_starts_with_the_scope(scope):
    roles = Roles(id="id", text="text", vector="vector", repo="repo", path="path")
    values = {"repo": [r[1] for r in ROWS], "path": [r[2] for r in ROWS]}
    ok, why, _ = evaluate(make_scope(scope), roles, values, len(ROWS))
    assert [i for i, keep in zip(IDS, ok, strict=True) if keep] == POST
    assert why[:3] == ["repo == 'vault'", "path starts with 'vault/'",
                       "repo 'vault-agent' != 'vault'"]


@pytest.mark.parametrize("scope", SCOPES)
def test_a_post_filtered_run_keeps_only_the_repo_and_its_paths(store, scope):
    t = ask(store, vector=QUERY, limit=len(ROWS), scope=scope).trace
    assert t.stage("fetch").ids == IDS
    assert t.stage("scope").ids == POST
    assert t.final.ids == POST
    # the pushed-down verdict beside it: the exact repo only, never by prefix
    assert ask(store, vector=QUERY, limit=len(ROWS), scope=scope,
               filter="pushdown").trace.final.ids == PUSHED


@pytest.mark.parametrize("scope", ["vault", "iso:vault", "vault/sub/dir"])
def test_pushdown_fetches_only_rows_of_the_exact_repo_from_lancedb(store, scope):
    push = pushdown(make_scope(scope), store.roles)
    assert push.sql == "repo IN ('vault')"
    # the predicate itself, on LanceDB: rows of repo vault only, not vault-agent or vaults
    got = store.table.search().where(push.expr).select(["id"]).to_arrow()["id"].to_pylist()
    assert sorted(got) == PUSHED
    t = ask(store, vector=QUERY, limit=len(ROWS), scope=scope, filter="pushdown").trace
    assert t.stage("fetch").ids == PUSHED  # before the cut: LanceDB returned nothing else
    assert t.stage("scope").dropped == ()
    assert t.final.ids == PUSHED
