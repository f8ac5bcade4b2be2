"""Application entry points (placeholder until the window lands: prints the demo story)."""

from __future__ import annotations

from typing import Any


def launch(store: str | None, table: str | None) -> int:
    from inspector.core.demo import SCOPE_QUERY, ensure_demo_store
    from inspector.core.inputs import build_params, build_query
    from inspector.core.pipeline import run
    from inspector.core.report import format_trace
    from inspector.core.store import open_store

    st = open_store(store or str(ensure_demo_store()), table)
    text = SCOPE_QUERY
    params = build_params(preset="docs-before-fix", scope="vault-agent", limit=10)
    if store is not None:
        print(f"opened {st.uri}: {st.rows} rows")
        return 0
    print(format_trace(run(st, build_query(st, params.mode, text=text), params)))
    return 0


def shot(args: Any) -> int:
    raise SystemExit("inspector shot: the window is not built yet")
