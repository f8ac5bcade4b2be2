"""One question asked of the one engine, as the tests ask it: a preset (or pipeline file),
the query, a scope and a limit, and the classic options by their command-line names
(overfetch, cap, blend, min_score, mode, filter, ...: `flow.spec.held_options`, as
`inspector query --overfetch 2.5` sets them). An option the pipeline does not hold is an
error, never silently ignored."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def question(store: Any, *, preset: str | None = "lancedb", pipeline_file: str | None = None,
             text: str | None = None, vector: Any = None, vector_of: str | None = None,
             scope: str | None = None, scopes: list[str] | None = None,
             limit: int | None = 10, expect: tuple[str, ...] | list[str] = (),
             exact: bool = False, table: str | None = None, embedder: str | None = None,
             sets: dict[str, Any] | None = None, widen: dict[str, int] | None = None,
             **options: Any) -> Any:
    """The question these arguments ask (options: classic options by name)."""
    from inspector.core.engine.flow.question import make_question
    from inspector.core.engine.flow.spec import held_options, load_file, load_shipped

    spec = load_shipped(preset) if pipeline_file is None else load_file(pipeline_file)
    held = held_options(spec, options)
    missing = sorted(set(options) - set(held))
    if missing:
        raise AssertionError(f"pipeline {spec.name} holds no option {missing}")
    given = {k: v for one in held.values() for k, v in one.items()}
    uri = store if isinstance(store, (str, Path)) else store.uri
    if scope is not None:
        scopes = [scope]
    return make_question(store=str(uri), table=table, text=text,
                         vector=None if vector is None else [float(x) for x in vector],
                         vector_of=vector_of, embedder=embedder,
                         preset=None if pipeline_file else preset,
                         pipeline_file=pipeline_file, scopes=scopes, limit=limit,
                         expect=list(expect), exact=exact, set={**given, **(sets or {})},
                         widen=widen or {})


def opened(store: Any, table: str | None = None) -> Any:
    if isinstance(store, (str, Path)):
        from inspector.core.stores.opening import open_store

        return open_store(str(store), table)
    return store


def ask(store: Any, *, fixes: bool = False, facet: str = "off", cache: Any = None,
        **fields: Any) -> Any:
    """The one engine's Answer (trace, diagnosis, expected rows, index facet) of the question
    (`question`'s arguments) on `store` (an open store, or a path opened here)."""
    from inspector.core.engine.flow.question import answer

    q = question(store, **fields)
    return answer(q, opened(store, fields.get("table")), cache, fixes=fixes, facet_mode=facet)


def ask_json(store: Any, **fields: Any) -> dict[str, Any]:
    """The answer as schema 3 JSON (what `inspector query --json` prints)."""
    from inspector.core.engine.flow.answer import to_json

    return to_json(ask(store, **fields))


def final_ids(store: Any, **fields: Any) -> list[str]:
    return ask(store, **fields).trace.final.ids
