"""A table's vector indexes as LanceDB describes them, read once per opened version.

With a vector index LanceDB's search is approximate; what kind of index it is (and its metric)
decides whether a search uses it at all and whether a deep fetch answers a shallow one exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# LanceDB 0.40's search defaults (lance PR 3903): both nprobes bounds 20; HNSW ef = 1.5 * k.
DEFAULT_NPROBES = 20
VECTOR_PREFIXES = ("IVF", "HNSW")


@dataclass(frozen=True)
class IndexInfo:
    """One vector index: its type as LanceDB names it (IVF_PQ, IVF_HNSW_SQ, ...) and build
    parameters where LanceDB exposes them (None where it does not, e.g. partitions in 0.40)."""

    name: str
    type: str
    column: str
    metric: str | None
    indexed_rows: int | None = None
    unindexed_rows: int | None = None
    partitions: int | None = None
    sub_vectors: int | None = None
    num_bits: int | None = None
    hnsw_m: int | None = None  # max connections per node
    hnsw_ef_construction: int | None = None

    @property
    def is_hnsw(self) -> bool:
        return "HNSW" in self.type

    @property
    def is_ivf(self) -> bool:
        return self.type.startswith("IVF")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "column": self.column,
                "metric": self.metric, "indexed_rows": self.indexed_rows,
                "unindexed_rows": self.unindexed_rows, "partitions": self.partitions,
                "sub_vectors": self.sub_vectors, "num_bits": self.num_bits,
                "hnsw_m": self.hnsw_m, "hnsw_ef_construction": self.hnsw_ef_construction}

    def describe(self) -> str:
        """One line for `inspector tables`: type, column, metric and the build parameters."""
        extra = [f"{self.metric or '?'} metric"]
        for label, value in (("partitions", self.partitions), ("sub-vectors", self.sub_vectors),
                             ("bits", self.num_bits), ("HNSW m", self.hnsw_m),
                             ("ef_construction", self.hnsw_ef_construction),
                             ("unindexed rows", self.unindexed_rows)):
            if value is not None and not (label == "unindexed rows" and value == 0):
                extra.append(f"{label} {value}")
        return f"{self.type} on {self.column} ({', '.join(extra)})"


def lance_type_name(raw: str) -> str:
    """'IvfHnswSq' (list_indices) -> 'IVF_HNSW_SQ' (the name LanceDB's index_stats uses)."""
    if raw.isupper() or "_" in raw:
        return raw.upper()
    return "_".join(re.findall(r"[A-Z][a-z0-9]*", raw)).upper() or raw.upper()


def _int(x: Any) -> int | None:
    return int(x) if isinstance(x, int) and not isinstance(x, bool) else None


def from_config(cfg: Any) -> IndexInfo | None:
    """An IndexInfo from one `list_indices()` entry, or None for a scalar or full-text index."""
    kind = lance_type_name(str(getattr(cfg, "index_type", "") or ""))
    columns = list(getattr(cfg, "columns", None) or [])
    if not kind.startswith(VECTOR_PREFIXES) or not columns:
        return None
    details = getattr(cfg, "index_details", None)
    details = details if isinstance(details, dict) else {}
    comp = details.get("compression") if isinstance(details.get("compression"), dict) else {}
    hnsw = details.get("hnsw") if isinstance(details.get("hnsw"), dict) else {}
    metric = details.get("metric_type")
    return IndexInfo(
        name=str(getattr(cfg, "name", "") or ""), type=kind, column=str(columns[0]),
        metric=str(metric).lower() if metric else None,
        indexed_rows=_int(getattr(cfg, "num_indexed_rows", None)),
        unindexed_rows=_int(getattr(cfg, "num_unindexed_rows", None)),
        partitions=_int(details.get("num_partitions")),
        sub_vectors=_int(comp.get("num_sub_vectors")), num_bits=_int(comp.get("num_bits")),
        hnsw_m=_int(hnsw.get("max_connections")),
        hnsw_ef_construction=_int(hnsw.get("construction_ef")))


def vector_indexes(configs: Any) -> tuple[IndexInfo, ...]:
    """The vector indexes among `list_indices()` entries, in LanceDB's order."""
    out = []
    for cfg in configs or ():
        info = from_config(cfg)
        if info is not None:
            out.append(info)
    return tuple(out)


def index_on(indexes: tuple[IndexInfo, ...], column: str | None) -> IndexInfo | None:
    """The vector index a search over `column` uses, if any."""
    return next((i for i in indexes if i.column == column), None)
