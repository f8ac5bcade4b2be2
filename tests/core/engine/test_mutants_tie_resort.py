"""The blended re-sort's tie rule (flow/stages/importance.py resort_order): rows with equal blended
score go by id ascending under tie rule `id`, and keep their scoped order (a stable sort)
under `lancedb`. The stores put the two orders apart: the closer row of each tie has the
larger id."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.askkit import ask

QUERY = np.array([1, 0, 0, 0], np.float32)


def _store(make_store, ids, dist, imp):
    """Rows at exact squared L2 distances from the query (1, 0, 0, 0)."""
    from inspector.core.stores.opening import open_store

    vec = np.zeros((len(ids), 4), np.float32)
    vec[:, 0] = 1 - np.sqrt(np.asarray(dist, np.float64))
    return open_store(str(make_store({"id": ids, "text": [f"memory {i}" for i in ids],
                                      "vector": vec, "importance": pa.array(imp, pa.float64())})))


@pytest.fixture(params=["strings", "numbers"])
def crossed(request, make_store):
    """c first, d last; b (distance 0.25, base 0.8, importance 0.5) and a (distance 1, base
    0.5, importance 0.8) blend to exactly 0.4 at w = 1, b ahead of a in the scoped order
    although a's id is smaller. Numeric ids order as numbers (9 before 10)."""
    names = ["c", "b", "a", "d"] if request.param == "strings" else [1, 10, 9, 20]
    store = _store(make_store, names, [0.01, 0.25, 1.0, 4.0], [1.0, 0.5, 0.8, 1.0])
    return store, dict(zip("cbad", map(str, names), strict=True))  # ids as text


def test_the_two_tied_rows_really_tie_and_scope_keeps_distance_order(crossed):
    store, n = crossed
    t = ask(store, vector=QUERY, limit=4, blend=1.0).trace
    assert t.stage("scope").ids == [n["c"], n["b"], n["a"], n["d"]]
    base = {x.id: x.score for x in t.stage("blend").rows_in}
    score = {x.id: x.score for x in t.stage("blend").rows}
    b, a = n["b"], n["a"]
    assert base[b] != base[a] and score[b] == score[a] == 0.4


def test_id_tie_rule_orders_equal_blended_scores_by_id_ascending(crossed):
    store, n = crossed
    t = ask(store, vector=QUERY, limit=4, blend=1.0, tie_rule="id").trace
    assert t.stage("blend").ids == [n["c"], n["a"], n["b"], n["d"]]
    assert t.final.ids == [n["c"], n["a"], n["b"], n["d"]]
    cut = ask(store, vector=QUERY, limit=2, overfetch=2.0, blend=1.0, tie_rule="id").trace
    assert cut.final.ids == [n["c"], n["a"]]  # the tie at the limit goes to the smaller id


def test_lancedb_tie_rule_keeps_the_scoped_order_among_equal_blended_scores(crossed):
    store, n = crossed
    t = ask(store, vector=QUERY, limit=4, blend=1.0, tie_rule="lancedb").trace
    assert t.stage("blend").ids == [n["c"], n["b"], n["a"], n["d"]]
    assert t.final.ids == [n["c"], n["b"], n["a"], n["d"]]
    cut = ask(store, vector=QUERY, limit=2, overfetch=2.0, blend=1.0, tie_rule="lancedb").trace
    assert cut.final.ids == [n["c"], n["b"]]  # the closer row keeps its place


def test_the_blended_tie_group_names_each_rules_order(crossed):
    store, n = crossed
    for rule, order in (("id", [n["a"], n["b"]]), ("lancedb", [n["b"], n["a"]])):
        t = ask(store, vector=QUERY, limit=2, overfetch=2.0, blend=1.0, tie_rule=rule).trace
        (group,) = [g for g in t.ties if g.stage == "blend"]
        assert list(group.ids) == order and group.value == 0.4 and group.at_cut \
            and group.cut == 2


def test_a_large_tie_group_keeps_the_scoped_order_or_goes_by_id(make_store):
    """42 rows, two thirds at importance 0: at w = 1 they all blend to 0 and tie, interleaved
    with untied rows. A stable sort keeps them in distance order; ids run the other way."""
    n = 42
    ids = [f"r{n - 1 - i:02d}" for i in range(n)]  # the closest row has the largest id
    store = _store(make_store, ids, [0.001 * (i + 1) for i in range(n)],
                   [1.0 if i % 3 == 0 else 0.0 for i in range(n)])
    scored = [ids[i] for i in range(0, n, 3)]  # untied, already in descending score
    zeros = [ids[i] for i in range(n) if i % 3]
    lance = ask(store, vector=QUERY, limit=n, cap=0, blend=1.0, tie_rule="lancedb").trace
    assert lance.stage("scope").ids == ids
    assert lance.stage("blend").ids == scored + zeros
    by_id = ask(store, vector=QUERY, limit=n, cap=0, blend=1.0, tie_rule="id").trace
    assert by_id.stage("blend").ids == scored + sorted(zeros)
