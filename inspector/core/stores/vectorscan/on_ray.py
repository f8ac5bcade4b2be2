"""The batched scan split over a Ray cluster (optional extra `scale`: `pip install -e '.[scale]'`).

The table's rows are cut into contiguous row-id ranges, whole Lance fragments where there are
enough of them (a row id is `fragment << 32 | offset`), else slices of one; each Ray task
opens the same table at the same pinned version, scans its range with the same exact kernels
and returns its own top-k per query; the driver merges them (`scan.merge_partials`), which
gives the single-machine result bit for bit. Workers must be able to import `inspector` (a
local cluster inherits this environment; a remote one needs it in its runtime environment).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.errors import InspectorError
from inspector.core.stores.store import Store, is_remote, local_path
from inspector.core.stores.vectorscan import scan as S


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InspectorError("--ray needs Ray: pip install -e '.[scale]'.") from None
    return ray


def row_ranges(rowids: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Inclusive row-id ranges of about equal row counts, cut at fragment boundaries when the
    table has at least `parts` fragments."""
    rowids = np.sort(rowids)
    if not len(rowids):
        return []
    frags = rowids >> 32
    starts = np.flatnonzero(np.r_[True, frags[1:] != frags[:-1]])
    if len(starts) >= parts:  # whole fragments, balanced by rows
        cuts = starts[np.searchsorted(starts, np.linspace(0, len(rowids), parts + 1)[1:-1])]
    else:
        cuts = np.linspace(0, len(rowids), parts + 1).astype(int)[1:-1]
    edges = [0, *sorted(set(int(c) for c in cuts if 0 < c < len(rowids))), len(rowids)]
    return [(int(rowids[a]), int(rowids[b - 1])) for a, b in zip(edges, edges[1:], strict=False)
            if b > a]


def _scan_range(uri: str, table: str, version: int, options: dict[str, str] | None,
                column: str, dim: int, req: S.ScanRequest, rowids: np.ndarray,
                jit: bool) -> S.ScanResult:
    import lancedb

    tbl = lancedb.connect(uri, storage_options=options).open_table(table)
    tbl.checkout(version)
    part = S.ScanRequest(req.vectors, req.k, req.distance, req.groups, req.allowed,
                         len(rowids))
    ranges = S.row_ranges(np.asarray(rowids, np.int64), max(S.BATCH_ROWS, req.k + 1))
    return S.scan_batches(lambda: S.vector_ranges(tbl, column, ranges), column, dim, part, jit)


def scan_on_ray(store: Store, req: S.ScanRequest, address: str | None = None,
                jit: bool = True) -> S.ScanResult:
    """`scan.scan_batches` over the whole table, one Ray task per row range."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 ignore_reinit_error=True)
    parts = max(1, int(ray.cluster_resources().get("CPU", 1)))
    rowids = S.allowed_rowids(store.table, None, store.roles.id)
    ranges = row_ranges(rowids, parts)
    if not ranges:
        return S.ScanResult([np.zeros(0, np.int64)] * len(req.vectors),
                            [np.zeros(0, np.float32)] * len(req.vectors),
                            np.zeros(len(req.vectors), np.int64))
    task = ray.remote(_scan_range)
    shared = ray.put(req)
    uri = store.uri if is_remote(store.uri) else str(local_path(store.uri).resolve())
    futures = [task.remote(uri, store.table_name, store.version, store.storage_options,
                           store.roles.vector, store.dim, shared,
                           rowids[(rowids >= lo) & (rowids <= hi)], jit)
               for lo, hi in ranges]
    return S.merge_partials(ray.get(futures), req.k)
