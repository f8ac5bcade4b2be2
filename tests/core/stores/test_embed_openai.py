"""The OpenAI-compatible embeddings client against a loopback server speaking the API's shapes,
including its error responses; and the optional local MiniLM model (skipped when absent)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from inspector.core.errors import InspectorError
from inspector.core.stores.embed import embedder_for_store, get_embedder
from inspector.core.stores.openai_embed import OpenAIEmbedder
from inspector.core.stores.opening import open_store
from tests.askkit import ask

DIM = 8


class _Api(BaseHTTPRequestHandler):
    """POST /v1/embeddings {model, input} -> {data: [{embedding, index}], model, usage}."""

    state: dict = {}

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.state["requests"].append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
        mode = self.state["mode"]
        if mode == "slow":
            time.sleep(1.5)
        if isinstance(mode, int):
            return self._send(mode, {"error": {"message": f"Simulated failure {mode}.",
                                               "type": "test"}})
        if mode == "garbage":
            return self._send(200, {"nothing": "here"})
        dim = self.state.get("dim", DIM)
        data = [{"object": "embedding", "index": i,
                 "embedding": [float(len(t)), float(i)] + [0.5] * (dim - 2)}
                for i, t in enumerate(body["input"])]
        self._send(200, {"object": "list", "data": list(reversed(data)), "model": body["model"],
                         "usage": {"prompt_tokens": 3, "total_tokens": 3}})

    def _send(self, code: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        try:
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    state = {"mode": "ok", "requests": []}
    handler = type("Handler", (_Api,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("INSPECTOR_EMBED_BASE_URL", base)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    monkeypatch.delenv("INSPECTOR_EMBED_API_KEY", raising=False)
    state["base"] = base
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_embeds_through_the_api_shapes(api):
    emb = get_embedder("openai:text-embedding-3-small", DIM)
    vecs = emb.embed(["hello", "hi"])
    assert vecs.dtype == np.float32 and vecs.shape == (2, DIM)
    assert vecs[:, :2].tolist() == [[5.0, 0.0], [2.0, 1.0]]  # put back in index order
    (req,) = api["requests"]
    assert req["path"] == "/v1/embeddings" and req["auth"] == "Bearer sk-loopback"
    assert req["body"] == {"model": "text-embedding-3-small", "input": ["hello", "hi"]}
    assert "sk-loopback" not in repr(emb)


def test_no_key_is_one_sentence_and_sends_nothing(api, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(InspectorError) as err:
        get_embedder("openai", 1536).embed(["x"])
    assert str(err.value) == ("Embedding with 'text-embedding-3-small' needs an API key in "
                              "OPENAI_API_KEY (or INSPECTOR_EMBED_API_KEY); or query by example "
                              "with --vector-of ID.")
    assert api["requests"] == []


@pytest.mark.parametrize("mode,message", [
    (401, r"rejected the API key \(401\): Simulated failure 401; check OPENAI_API_KEY\.$"),
    (429, r"is rate-limiting or out of quota \(429\): Simulated failure 429; "
          r"wait and try again\.$"),
    (500, r"failed \(500\): Simulated failure 500; try again later\.$"),
    ("garbage", r"sent an answer that is not an embeddings response\.$"),
])
def test_error_responses_become_one_sentence(api, mode, message):
    api["mode"] = mode
    with pytest.raises(InspectorError, match=r"^The embeddings service at http://127\.0\.0\.1:"
                       r"\d+/v1/embeddings " + message) as err:
        get_embedder("openai:m", DIM).embed(["x"])
    assert "\n" not in str(err.value)


def test_timeouts_and_unreachable_servers_are_bounded_and_clear(api, monkeypatch):
    api["mode"] = "slow"
    monkeypatch.setenv("INSPECTOR_EMBED_TIMEOUT", "0.3")
    t0 = time.perf_counter()
    with pytest.raises(InspectorError, match=r"did not answer within 0\.3 seconds\.$"):
        get_embedder("openai:m", DIM).embed(["x"])
    assert time.perf_counter() - t0 < 10  # the 0.3 s asked for, not the 30 s default (any load)
    closed = OpenAIEmbedder(model="m", dim=DIM, base_url="http://127.0.0.1:1/v1", timeout=2,
                            api_key="k")
    with pytest.raises(InspectorError, match=r"^Cannot reach the embeddings service at "):
        closed.embed(["x"])


def test_wrong_dimension_is_named(api):
    api["dim"] = 4
    with pytest.raises(InspectorError, match=r"returned 4-dimensional vectors but the store's "
                                             r"vectors have 8\.$"):
        get_embedder("openai:m", DIM).embed(["x"])


def test_store_without_recorded_embedder_suggests_the_hosted_model():
    with pytest.raises(InspectorError, match=r"often text-embedding-3-small\); pass --embedder "
                                             r"openai:text-embedding-3-small"):
        embedder_for_store(None, None, 1536)
    assert get_embedder("text-embedding-3-large", 3072).model == "text-embedding-3-large"
    with pytest.raises(InspectorError, match="Name the hosted model"):
        get_embedder("openai", 7)


def test_text_queries_run_on_a_store_through_the_client(api, make_store):
    rng = np.random.default_rng(0)
    path = make_store({"id": ["a", "b", "c"], "text": ["one", "two", "three"],
                       "vector": rng.normal(size=(3, DIM)).astype(np.float32)})
    store = open_store(str(path))
    t = ask(store, text="which one", embedder="openai:my-model", limit=2).trace
    assert t.query_source == "text:openai:my-model" and t.vector.shape == (DIM,)
    assert len(t.final.rows) == 2


def test_local_minilm_model_loads_offline_when_installed():
    pytest.importorskip("sentence_transformers")
    emb = get_embedder("all-MiniLM-L6-v2", 384)
    vec = emb.embed(["the user prefers a dark editor theme"])
    assert vec.shape == (1, 384) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
