"""The window's fixed-pipeline state as the question model (flow.question.Question) and back:
what receipts, sweeps and the saved settings keep, and what `shot` and a restored window put
into the window. The window holds a preset name plus the parameters given explicitly, as the
CLI does; the question holds the same, so one converts to the other without loss."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from inspector.core.engine.flow.question import Question
from inspector.core.engine.inputs import (
    given_question,
    parse_vector,
    question_given,
    question_params,
)
from inspector.core.errors import InspectorError


def window_question(vm: Any) -> Question:
    """What the window (a qt.viewmodel.Inspector) asks now; its store URI without
    credentials. A JSON array typed as the query is the vector query_job searches with."""
    st, text, vector = vm.store, vm.text.strip() or None, vm.vector
    if text and text.startswith("[") and vector is None and vm.vector_of is None:
        try:
            text, vector = None, tuple(parse_vector(text).tolist())
        except InspectorError:
            pass  # asked as typed: the query job says why it cannot run
    return given_question(
        "" if st is None else st.uri, vm.preset, vm.given,
        table=None if st is None else st.table_name, text=text,
        vector=None if vector is None else list(vector), vector_of=vm.vector_of,
        embedder=vm.embedder, expect=list(vm.expected))


def window_given(q: Question) -> tuple[str | None, dict[str, Any]]:
    """The window's (preset, given parameters) for a fixed-pipeline question. A fixed pipeline
    file or --set values have no preset name: their compiled parameters are given whole (the
    window shows a custom pipeline), the very Params `inspector query` runs."""
    if q.pipeline_file is not None or q.set:
        return None, dataclasses.asdict(question_params(q))
    return q.preset, question_given(q)


def restore_question(vm: Any, q: Question, compare: bool = False) -> None:
    """A question's parameters and query text into the window, without running it (a saved
    question); parameters that no longer validate leave the defaults (Inspector.restore).
    A vector asked alone shows as its JSON array, as a user types one."""
    preset, given = window_given(q)
    vm.restore(preset, given, compare)
    alone = q.vector is not None and q.text is None
    vm.text = json.dumps(q.vector) if alone else q.text or ""


def put_question(vm: Any, q: Question) -> None:
    """The whole question into the window, without running it (`shot`): its parameters and
    text, a vector given beside the text, the row it queries by, its embedder and expected
    rows."""
    restore_question(vm, q)
    vm.vector = tuple(q.vector) if q.vector is not None and q.text is not None else None
    vm.vector_of, vm.embedder = q.vector_of, q.embedder
    vm.expected = list(q.expect)
