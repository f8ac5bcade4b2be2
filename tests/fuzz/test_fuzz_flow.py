"""Fuzzing what a user types at a pipeline of stages (issue 33): `--set` on every declared
parameter and setting with hostile values (inf, NaN, 1e999, a 400-digit integer, texts,
lists of non-texts, objects), the limit and its bounds, and system configuration files of
every shape. Every run ends with exit 0 or exit 2 and one line on stderr that is a sentence,
never "failed unexpectedly"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.spec import load_shipped
from tests.fuzz.test_fuzz_cli import SCALE, _run, json_value, text
from tests.storekit import write_tuning_store

FUZZ = settings(max_examples=int(40 * SCALE), deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
PRESETS = ["langchain-lancedb", "llamaindex-lancedb", "memory-lancedb-pro", "crewai-memory",
           "openclaw"]
HOSTILE = st.one_of(st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "1e12", "-1",
                                     "0", "1" * 400, "[1, 2]", '["a", 3]', "{}", '{"a": 1}',
                                     "true", "null", '"x"', "[]", "0.5", "1e308", "-0"]),
                     json_value.map(json.dumps), text)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tuning_store(tmp_path_factory.mktemp("fuzz-flow") / "store", n=60)


def _names(preset: str) -> list[str]:
    spec = load_shipped(preset)
    params = [f"{st_.name}.{p.name}" for r in spec.routes for st_ in r.stages
              for p in kind_of(st_.kind).params]
    return sorted({*params, *spec.settings, "limit.default", "limit.min", "limit.max"})


@FUZZ
@given(data=st.data(), preset=st.sampled_from(PRESETS))
def test_random_assignments_give_an_answer_or_one_sentence(capsys, store, data, preset):
    names = _names(preset)
    args = ["query", str(store), "--preset", preset, "--vector-of", "m0001", "--now", "0"]
    for _ in range(data.draw(st.integers(1, 3))):
        args += ["--set", f"{data.draw(st.sampled_from(names))}={data.draw(HOSTILE)}"]
    if data.draw(st.booleans()):
        args += ["--limit", data.draw(st.sampled_from(["0", "1", "1000000000000", "-5"]))]
    _run(capsys, args)


config_value = st.one_of(json_value, st.sampled_from([1e308, -1.0, 0, "none", "vector",
                                                      "hybrid", [1], {"x": [1]}]))


@FUZZ
@given(data=st.data(), preset=st.sampled_from(["memory-lancedb-pro", "openclaw-mem-pushdown"]))
def test_random_system_configs_give_an_answer_or_one_sentence(capsys, store, tmp_path, data,
                                                              preset):
    spec = load_shipped(preset)
    keys = list(spec.system_config.map) + list(spec.system_config.unmodelled)
    doc: dict = {}
    for key in data.draw(st.lists(st.sampled_from(keys), max_size=4)):
        node = doc
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[leaf] = data.draw(config_value)
    shape = data.draw(st.sampled_from(["doc", "list", "scalar", "wrapped"]))
    body = {"doc": doc, "list": [doc], "scalar": data.draw(json_value),
            "wrapped": {"plugins": {"entries": doc}}}[shape]
    f = tmp_path / "config.json"
    f.write_text(json.dumps(body))
    _run(capsys, ["query", str(store), "--preset", preset, "--vector-of", "m0001",
                  "--text", "keys", "--now", "0", "--system-config", str(f)])
