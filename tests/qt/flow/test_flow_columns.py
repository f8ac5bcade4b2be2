"""The window's pipeline view asks with the column roles the store was opened with
(`inspector STORE --column scope=metadata.user_id`): the ones its pipeline reads, so the
answer on screen is the command line's."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.core.engine.flow.question import ask
from inspector.core.stores.opening import open_store
from tests.frameworks.test_nested_roles import LANGCHAIN, _user
from tests.frameworks.test_recorded import DATA, same


def test_the_pipeline_view_asks_with_the_roles_its_pipeline_reads(qapp, tmp_path: Path) -> None:
    from inspector.qt.flow.session import FlowSession
    from inspector.qt.jobs import Jobs

    shutil.copytree(DATA / "langchain" / "store", tmp_path / "store")
    store = open_store(str(tmp_path / "store"), "vectorstore",
                       roles={"scope": "metadata.user_id", "category": "metadata.topic"})
    session = FlowSession(Jobs())
    session.store = store
    session.preset = "crewai-memory"  # reads CrewAI's own columns: no role reaches it
    assert session.question().columns == {}
    case = next(c for c in LANGCHAIN if not c["prefilter"])
    session.preset, session.vector = "langchain-lancedb", case["vector"]
    session.scopes, session.limit = [_user(case["filter"])], case["k"]
    q = session.question()
    assert q.columns == {"scope": "metadata.user_id"}  # category: the fixed pipeline's
    trace, _ = ask(q, store)
    same([(s.id, s.score) for s in trace.final.rows], case["results"], case["name"])
