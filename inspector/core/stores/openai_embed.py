"""Embed query text with an OpenAI-compatible embeddings endpoint, using only the standard library.

Real stores hold vectors from hosted models (1536 dimensions for text-embedding-3-small). The
key comes from the environment (`INSPECTOR_EMBED_API_KEY`, else `OPENAI_API_KEY`) and is never
written anywhere; the base URL from `INSPECTOR_EMBED_BASE_URL`, else `OPENAI_BASE_URL`, else
OpenAI's. Every failure (no key, 401, 429, 5xx, a timeout, a bad answer) is one sentence.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.errors import InspectorError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_VARS = ("INSPECTOR_EMBED_API_KEY", "OPENAI_API_KEY")
URL_VARS = ("INSPECTOR_EMBED_BASE_URL", "OPENAI_BASE_URL")
TIMEOUT_VAR = "INSPECTOR_EMBED_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
# hosted models and their native dimension, for picking a model from a store's dimension
KNOWN_MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072,
                "text-embedding-ada-002": 1536}


def _env(names: tuple[str, ...], environ: Mapping[str, str]) -> str | None:
    for n in names:
        v = environ.get(n, "").strip()
        if v:
            return v
    return None


@dataclass(frozen=True)
class OpenAIEmbedder:
    """POST {base_url}/embeddings {model, input} -> {data: [{embedding, index}], ...}."""

    model: str
    dim: int
    base_url: str = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    api_key: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @classmethod
    def from_env(cls, model: str, dim: int,
                 environ: Mapping[str, str] | None = None) -> OpenAIEmbedder:
        env = os.environ if environ is None else environ
        try:
            timeout = float(env.get(TIMEOUT_VAR, "") or DEFAULT_TIMEOUT)
        except ValueError:
            raise InspectorError(f"{TIMEOUT_VAR} must be a number of seconds.") from None
        return cls(model=model, dim=dim, base_url=_env(URL_VARS, env) or DEFAULT_BASE_URL,
                   timeout=timeout, api_key=_env(KEY_VARS, env))

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.api_key:
            raise InspectorError(f"Embedding with '{self.model}' needs an API key in "
                                 "OPENAI_API_KEY (or INSPECTOR_EMBED_API_KEY); or query by "
                                 "example with --vector-of ID.")
        body = json.dumps({"model": self.model, "input": list(texts)}).encode()
        url = self.base_url.rstrip("/") + "/embeddings"
        req = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise InspectorError(_http_message(url, exc)) from None
        except TimeoutError:
            raise InspectorError(f"The embeddings service at {url} did not answer within "
                                 f"{self.timeout:g} seconds.") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise InspectorError(f"The embeddings service at {url} did not answer within "
                                     f"{self.timeout:g} seconds.") from None
            raise InspectorError(f"Cannot reach the embeddings service at {url}: "
                                 f"{exc.reason}.") from None
        except OSError as exc:
            raise InspectorError(f"Cannot reach the embeddings service at {url}: {exc}.") \
                from None
        return self._parse(raw, len(texts), url)

    def _parse(self, raw: bytes, n: int, url: str) -> np.ndarray:
        try:
            data = json.loads(raw)["data"]
            rows = sorted(data, key=lambda d: int(d["index"]))
            mat = np.asarray([r["embedding"] for r in rows], np.float64)
        except (ValueError, KeyError, TypeError) as exc:
            raise InspectorError(f"The embeddings service at {url} sent an answer that is not "
                                 "an embeddings response.") from exc
        if mat.ndim != 2 or mat.shape[0] != n:
            raise InspectorError(f"The embeddings service at {url} returned {len(data)} "
                                 f"embeddings for {n} texts.")
        if mat.shape[1] != self.dim:
            raise InspectorError(f"Model '{self.model}' returned {mat.shape[1]}-dimensional "
                                 f"vectors but the store's vectors have {self.dim}.")
        if not np.all(np.isfinite(mat)):
            raise InspectorError(f"The embeddings service at {url} returned non-finite values.")
        return mat.astype(np.float32)


def _api_message(exc: urllib.error.HTTPError) -> str:
    try:
        body: Any = json.loads(exc.read() or b"{}")
        msg = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except (ValueError, AttributeError, OSError):
        msg = None
    return f": {' '.join(str(msg).split())[:160].rstrip('.')}" if msg else ""


def _http_message(url: str, exc: urllib.error.HTTPError) -> str:
    code = exc.code
    detail = _api_message(exc)
    if code in (401, 403):
        return (f"The embeddings service at {url} rejected the API key ({code}){detail}; "
                "check OPENAI_API_KEY.")
    if code == 429:
        return (f"The embeddings service at {url} is rate-limiting or out of quota "
                f"(429){detail}; wait and try again.")
    if code == 404:
        return f"The embeddings service at {url} does not know this model or path (404){detail}."
    if code >= 500:
        return f"The embeddings service at {url} failed ({code}){detail}; try again later."
    return f"The embeddings service at {url} refused the request ({code}){detail}."


def guess_model(dim: int) -> str | None:
    """The hosted model whose native dimension is dim (the most common one for 1536)."""
    return next((m for m, d in KNOWN_MODELS.items() if d == dim), None)
