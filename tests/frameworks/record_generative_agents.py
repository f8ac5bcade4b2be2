"""Record what Generative Agents' released retrieval returns: its own AssociativeMemory writes
a persona's memory stream (nodes.json, embeddings.json, kw_strength.json, as the simulation
saves it), its own `new_retrieve` (reverie/backend_server/persona/cognitive_modules/
retrieve.py) ranks the stream for each focal point, and the stream and the results are saved
as a fixture (tests/frameworks/data/generative_agents/{store/, cases.json}).

    python tests/frameworks/record_generative_agents.py CHECKOUT [--out DIR]

CHECKOUT is a checkout of joonspk-research/generative_agents (the code is imported from it,
never copied here). Its OpenAI embedding call (gpt_structure.get_embedding, bound into
retrieve.py) is replaced by the deterministic embedding of record.py; `openai` and the
untracked `utils.py` (the API key) are stubbed when they cannot be imported, as no call
reaches them. numpy is the only package it needs. It imports nothing from the inspector.

Each case loads the saved stream afresh (new_retrieve rewrites last_accessed of what it
returns), and its scores are the ones new_retrieve ranked by: its last
top_highest_x_values(master_out, n_count), observed by wrapping that function.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import io
import json
import shutil
import sys
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from record import embed  # noqa: E402 - the embedding every framework fixture shares

START = dt.datetime(2023, 2, 13, 7, 0, 0)
FOCAL = ("how do we deploy the payments service", "when does the database backup run",
         "which editor theme is preferred", "trip to berlin in march",
         "what is the cat called", "isabella is planning the valentine party")
LIMITS = (3, 10, 30, 100)
# scratch.json's retrieval hyperparameters for the weighted cases (the defaults are 1, 1, 1,
# 0.99)
WEIGHTS = {"recency_w": 2, "relevance_w": 0.5, "importance_w": 1.5, "recency_decay": 0.9}

# minutes after START | subject | predicate | object | description | poignancy
EVENTS = """
0 | Isabella | is | sleeping | Isabella is sleeping | 1
0 | bed | is | idle | bed is idle | 1
10 | Isabella | is | waking up | Isabella is waking up (stretching and getting out of bed) | 2
20 | Klaus | deploy | payments service | Klaus deploys the payments service blue green | 6
20 | Maria | run | database backup | Maria says the postgres database backup runs nightly at two | 4
35 | Isabella | prefers | dark editor theme | Isabella prefers a dark editor theme and vim keys | 3
50 | cafe counter | is | idle | cafe counter is idle | 1
60 | Isabella | books | flight to berlin | Isabella books a flight to berlin for march | 7
60 | Tom | has | cat | Tom has a cat named miso who hates the vacuum | 5
75 | Isabella | is | cooking | Isabella is cooking (making pasta for the cafe lunch) | 3
90 | Klaus | sends | billing invoice | Klaus sends the billing invoice on the first monday | 4
90 | Klaus | sends | billing invoice | Klaus sends the billing invoice on the first monday | 4
120 | Isabella | plans | valentine party | Isabella is planning a valentine party at hobbs cafe | 9
130 | Maria | is | studying | Maria is studying physics at the cafe | 2
150 | Isabella | deploy | window | deploy window tie alpha bravo charlie | 5
150 | Isabella | deploy | window | charlie bravo alpha tie window deploy | 5
180 | Tom | is | idle | Tom is idle | 1
200 | Isabella | is | serving coffee | Isabella is serving coffee to Maria | 2
"""


def _table(text: str) -> list[tuple[Any, ...]]:
    """Rows of ` | `-separated fields; the first and the last are integers."""
    rows = []
    for line in text.strip().splitlines():
        f = line.split(" | ")
        rows.append((int(f[0]), *f[1:-1], int(f[-1])))
    return rows


THOUGHTS = [  # (minutes after START, s, p, o, description, poignancy, indices of EVENTS filled)
    (125, "Isabella", "plans", "party",
     "Isabella wants everyone at the cafe to come to the valentine party", 8, (12,)),
    (140, "Isabella", "worries", "deploy",
     "Klaus seems stressed about deploying the payments service", 5, (3,)),
    (160, "Isabella", "remembers", "cat",
     "Tom mentioned his cat miso hates the vacuum", 3, (8,)),
    (160, "Isabella", "looks forward", "berlin",
     "Isabella looks forward to the berlin trip in march", 6, (7,)),
    (210, "Isabella", "is", "idle", "Isabella is idle", 1, ()),
]
CHATS = [
    (170, "Isabella", "chat with", "Maria",
     "conversing about the valentine party and the database backup", 6),
]


def _load_their_code(checkout: Path) -> dict[str, Any]:
    """Import retrieve.py and the memory structures from the checkout; stub what it cannot
    import and never calls (openai, the untracked utils.py with the API key)."""
    root = checkout.expanduser().resolve() / "reverie" / "backend_server"
    if not (root / "persona" / "cognitive_modules" / "retrieve.py").exists():
        raise SystemExit(f"{checkout} is not a checkout of joonspk-research/generative_agents "
                         f"(no reverie/backend_server/persona/cognitive_modules/retrieve.py)")
    sys.path.insert(0, str(root))
    for name, attrs in (("utils", {"openai_api_key": "not-used", "key_owner": "not-used"}),
                        ("openai", {"api_key": None})):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.SimpleNamespace(**attrs)  # type: ignore[assignment]
    from persona.cognitive_modules import retrieve
    from persona.memory_structures.associative_memory import AssociativeMemory
    from persona.memory_structures.scratch import Scratch

    retrieve.get_embedding = lambda text, model="text-embedding-ada-002": embed(text)
    return {"retrieve": retrieve, "AssociativeMemory": AssociativeMemory, "Scratch": Scratch}


def _write_stream(code: dict[str, Any], folder: Path) -> None:
    """The stream, written by AssociativeMemory.add_event/add_thought/add_chat and saved by
    AssociativeMemory.save, as the simulation writes a persona's associative memory."""
    folder.mkdir(parents=True)
    (folder / "nodes.json").write_text("{}")
    (folder / "embeddings.json").write_text("{}")
    (folder / "kw_strength.json").write_text(
        json.dumps({"kw_strength_event": {}, "kw_strength_thought": {}}))
    mem = code["AssociativeMemory"](str(folder))
    adds: list[tuple[int, str, tuple[Any, ...]]] = (
        [(e[0], "event", e) for e in _table(EVENTS)] + [(t[0], "thought", t) for t in THOUGHTS]
        + [(c[0], "chat", c) for c in CHATS])
    nodes = {}
    for i, (minutes, kind, spec) in sorted(enumerate(adds), key=lambda a: (a[1][0], a[0])):
        _, s, p, o, desc, poignancy = spec[:6]
        created = START + dt.timedelta(minutes=minutes)
        keywords = {s, o}
        pair = (desc, embed(desc))
        if kind == "event":
            node = mem.add_event(created, None, s, p, o, desc, keywords, poignancy, pair, None)
        elif kind == "thought":
            filling = [nodes[j].node_id for j in spec[6]]
            node = mem.add_thought(created, None, s, p, o, desc, keywords, poignancy, pair,
                                   filling)
        else:
            node = mem.add_chat(created, None, s, p, o, desc, keywords, poignancy, pair, [])
        nodes[i] = node
    mem.save(str(folder))


def _retrieve(code: dict[str, Any], folder: Path, focal: str, n_count: int,
              weights: dict[str, Any] | None) -> list[dict[str, Any]]:
    """new_retrieve on a freshly loaded stream: the nodes it returns, in its order, each with
    the score new_retrieve ranked it by."""
    retrieve = code["retrieve"]
    persona = types.SimpleNamespace(a_mem=code["AssociativeMemory"](str(folder)),
                                    scratch=code["Scratch"](str(folder / "no-scratch.json")))
    persona.scratch.curr_time = START + dt.timedelta(days=1)
    for key, value in (weights or {}).items():
        setattr(persona.scratch, key, value)
    seen: list[dict[str, Any]] = []
    original = retrieve.top_highest_x_values

    def observed(d: dict[str, Any], x: int) -> dict[str, Any]:
        top = original(d, x)
        seen.append(top)
        return top

    retrieve.top_highest_x_values = observed
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints every node's score
            got = retrieve.new_retrieve(persona, [focal], n_count)[focal]
    finally:
        retrieve.top_highest_x_values = original
    ranked = seen[-1]
    assert [n.node_id for n in got] == list(ranked)
    return [{"id": nid, "score": float(score)} for nid, score in ranked.items()]


def record(checkout: Path, out: Path) -> None:
    code = _load_their_code(checkout)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    store = out / "store"
    _write_stream(code, store)
    cases = []
    for qi, focal in enumerate(FOCAL):
        for n in LIMITS:
            for wname, weights in (("default", None), ("weighted", WEIGHTS)):
                cases.append({"name": f"q{qi}_n{n}_{wname}", "focal": focal, "n_count": n,
                              "scratch": weights or {},
                              "results": _retrieve(code, store, focal, n, weights)})
    source = checkout / "reverie/backend_server/persona/cognitive_modules/retrieve.py"
    doc = {"system": "joonspk-research/generative_agents new_retrieve (retrieve.py)",
           "retrieve_py_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
           "table": "nodes", "cases": cases,
           "vectors": {f: embed(f) for f in FOCAL}}
    (out / "cases.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="a checkout of joonspk-research/generative_agents")
    ap.add_argument("--out", default=str(HERE / "data" / "generative_agents"))
    a = ap.parse_args(argv)
    record(Path(a.checkout), Path(a.out))
    print(f"recorded generative_agents into {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
