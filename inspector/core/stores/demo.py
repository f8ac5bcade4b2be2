"""Write the bundled demo store: deterministic text, the built-in embedder, and two stories.

Story 1 (scoped miss): in scope `vault-agent`, a docs-style query's global top-10 is all
`platform-docs`, so the post-filter returns nothing; a wider pool or pushdown finds the rows.
Story 2 (importance): a low-importance memory sits slightly closer to a preference query than
a high-importance one; blending importance swaps them.
Story 3 (a deliberate tie): one memory saved twice has two rows at exactly the same distance;
at limit 1 the tie straddles the cut, LanceDB's row id decides, and importance breaks it.

Every text is unique and most carry a few extra words, so distances and BM25 scores rarely tie:
neither of the first two stories depends on how ties are ordered (a test checks no tie
straddles any cut they show).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.errors import InspectorError
from inspector.core.stores.ann import demo as indexed_demo
from inspector.core.stores.embed import HashEmbedder
from inspector.core.stores.store import META_KEY

DIM = 256
TABLE = "memories"
SCOPE_QUERY = "how do I rotate the signing keys for service tokens"
BLEND_QUERY = "which editor theme does the user prefer"
TIE_QUERY = "what timezone is the user in"
CATEGORIES = ("preference", "fact", "decision", "entity", "other")
REPOS = ("platform-docs", "vault-agent", "billing-api", "web-frontend", "ml-pipeline",
         "mobile-app", "infra-terraform", "search-service", "auth-gateway", "data-warehouse",
         "notifications", "support-bot", "analytics", "design-system", "release-tools",
         "agent-memory")
_SIZES = {"platform-docs": 520, "vault-agent": 120}
_DEFAULT_SIZE = 170
_T0_MS = 1_767_225_600_000.0  # 2026-01-01T00:00:00Z

_TOPICS: dict[str, tuple[str, ...]] = {
    "deploy": ("deploy the {x} service with a canary release and watch the error budget",
               "rollback steps when the {x} deploy fails health checks",
               "blue green deployment notes for {x} behind the load balancer"),
    "testing": ("run the {x} integration tests against a disposable database",
                "flaky test triage for {x}: quarantine, reproduce, fix",
                "snapshot tests for {x} must be reviewed before merge"),
    "logging": ("structured logging fields for {x}: request id, tenant, latency",
                "log retention for {x} is thirty days in cold storage",
                "turn on debug logging for {x} only behind a feature flag"),
    "migrations": ("database migration checklist for {x}: backup, dry run, apply",
                   "schema changes in {x} must be backwards compatible for one release",
                   "long running migrations in {x} run in batches at night"),
    "caching": ("cache invalidation for {x} uses versioned keys in redis",
                "the {x} cache warms from the nightly export",
                "tune cache expiry for {x} to cut database load"),
    "ratelimit": ("rate limits for {x} are per tenant with a burst allowance",
                  "429 responses from {x} include a retry after header"),
    "onboarding": ("new engineers on {x} start with the architecture overview",
                   "local setup for {x}: docker compose, seed data, make dev"),
    "incidents": ("incident review for {x}: timeline, impact, follow ups",
                  "paging policy for {x} escalates after fifteen minutes"),
    "search": ("the {x} search index is rebuilt after bulk imports",
               "relevance tuning notes for {x}: boosts, synonyms, typo tolerance"),
    "billing": ("invoices in {x} are generated on the first day of the month",
                "proration rules in {x} for plan upgrades and downgrades"),
}
_THINGS = ("gateway", "worker", "scheduler", "exporter", "dashboard", "queue", "ledger",
           "crawler", "indexer", "notifier", "uploader", "resolver")
_MEMORIES = (
    ("preference", "the user likes concise answers with code first"),
    ("preference", "the user works in the {x} repository most mornings"),
    ("fact", "the {x} team meets on thursdays for planning"),
    ("fact", "staging for {x} is reset every sunday night"),
    ("decision", "we decided to keep {x} on postgres instead of moving to a document store"),
    ("decision", "the {x} api will stay on version two until the migration ends"),
    ("entity", "dana owns the {x} on call rotation"),
    ("entity", "the {x} vendor contact is the platform partnerships team"),
    ("other", "remember to update the {x} changelog before tagging"),
)
# Words that vary otherwise templated texts: lengths and shared words differ, so scores do too.
_WORD = re.compile(r"[^\W_]+")  # a word as the full-text tokenizer splits them
_FILLER = ("quarterly", "legacy", "regional", "nightly", "internal", "shared", "draft",
           "pilot", "mirrored", "archived", "tenant", "sandbox", "weekend", "hotfix", "beta",
           "compliance", "latency", "budget", "handover", "runbook", "ownership", "capacity",
           "audit", "alerting", "vendor", "sprint", "roadmap", "partner", "fallback", "quota",
           "europe", "asia", "replica", "cutover", "freeze", "backlog", "postmortem", "pager")
_PLATFORM_KEYS = (
    "rotate the signing keys for service tokens every ninety days",
    "signing key rotation: rotate service token keys and publish the new key id",
    "to rotate signing keys for service tokens, stage the new key then revoke the old",
    "service tokens are verified with signing keys; rotate keys after any leak",
    "automate signing key rotation for service tokens in the platform scheduler",
    "audit which service tokens still use the old signing keys after you rotate",
    "rotate signing keys: overlap old and new keys so service tokens stay valid",
    "emergency rotation of signing keys for all service tokens",
)
# The second and third copy of each platform text add one of these, so no two are equal.
_PLATFORM_TAILS = ("in staging first", "for partner integrations", "after the audit window",
                   "with the security team on call", "before the quarterly freeze",
                   "using the platform runbook", "for every region", "and notify consumers",
                   "during low traffic", "with a dry run", "across both clusters",
                   "per the compliance checklist", "once the pager is quiet",
                   "for internal callers too", "and record the change", "in the release window")
_VAULT_KEYS = (
    "vault agent can rotate keys for tokens it issues on request from the operator console",
    "rotate the transit keys held by vault agent and re-wrap tokens stored in the secrets engine",
    "vault agent renews tokens; key rotation is done with the rotate endpoint of transit",
    "configure vault agent templates to pick up rotated keys for tokens after each render",
    "vault agent caches service tokens until their lease runs out",
    "the vault agent sidecar signs requests with a short lived key",
    "vault agent auto auth exchanges the service account for a token",
    "audit log entries for vault agent include the token accessor",
    "vault agent keeps wrapped secrets out of the service environment",
    "a vault agent restart drops cached tokens and fetches new ones",
    "the vault agent key ring is backed up before every upgrade",
    "vault agent exposes a local listener so services avoid handling tokens",
)
_BLEND_PAIR = (
    ("agent-memory-theme-close", "the user prefers the light editor theme", 0.15),
    ("agent-memory-theme-far", "the user prefers the dark editor theme at night", 0.95),
)
# One memory saved twice (story 3): same text, so the same vector and the same distance.
_TIE_PAIR = (
    ("agent-memory-timezone-1", "the user timezone is europe lisbon", 0.4),
    ("agent-memory-timezone-2", "the user timezone is europe lisbon", 0.9),
)


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(20261130)
    rows: list[dict[str, Any]] = []

    def add(repo: str, text: str, category: str, importance: float | None,
            rid: str | None = None) -> None:
        n = len(rows)
        rows.append({
            "id": rid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"demo/{repo}/{n}")),
            "text": text, "category": category, "importance": importance,
            "createdAt": _T0_MS + n * 3_600_000.0 + rng.randrange(3_600_000),
            "repo": repo, "path": f"{repo}/{'docs' if category == 'fact' else 'notes'}/{n:05d}.md",
            "agentId": "main" if n % 3 else "ops",
        })

    seen: set[str] = set()
    for repo in REPOS:
        size = _SIZES.get(repo, _DEFAULT_SIZE)
        special = _special_texts().get(repo, ())
        for text in special:
            seen.add(text)
            add(repo, text, "fact", round(rng.uniform(0.4, 0.9), 2))
        for _ in range(size - len(special)):
            thing = rng.choice(_THINGS)
            if rng.random() < 0.3:
                cat, tmpl = rng.choice(_MEMORIES)
            else:
                cat, tmpl = rng.choice(("fact", "other", "decision")), rng.choice(
                    _TOPICS[rng.choice(tuple(_TOPICS))])
            imp = None if rng.random() < 0.05 else round(rng.uniform(0.05, 1.0), 2)
            add(repo, _varied(rng, tmpl.format(x=f"{repo} {thing}"), seen), cat, imp)
    for rid, text, imp in _BLEND_PAIR + _TIE_PAIR:
        add("agent-memory", text, "preference", imp, rid=rid)
    return rows


_TIE_IDS = frozenset(rid for rid, _, _ in _TIE_PAIR)
JITTER = 0.003  # per-component noise on stored vectors, far below the stories' distance gaps


def _jittered(vectors: np.ndarray, keep: list[bool]) -> np.ndarray:
    """Stored vectors with a tiny deterministic jitter, re-normalised: a bag of words gives
    equal distances to texts of one shape, real embeddings never coincide. Rows in `keep`
    (the deliberate tie) keep their exact vectors."""
    noise = np.random.default_rng(20261130).normal(0.0, JITTER, vectors.shape)
    noise[np.asarray(keep, bool)] = 0.0
    out = vectors + noise.astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def _special_texts() -> dict[str, list[str]]:
    """The story's key-rotation docs: three versions of each platform text, and the vault
    texts. Equal query terms in texts of equal length tie in BM25, so a text that would repeat
    another's (terms, length) gets filler words: the story never depends on how ties are ordered.
    Terms are compared by their first three letters, coarser than any stemmer."""
    tails = iter(_PLATFORM_TAILS)
    platform = [text if copy == 0 else f"{text} {next(tails)}"
                for copy in range(3) for text in _PLATFORM_KEYS]
    filler = itertools.cycle(_FILLER)
    out: dict[str, list[str]] = {}
    for repo, texts in (("platform-docs", platform), ("vault-agent", list(_VAULT_KEYS))):
        out[repo], used = [], set()
        for text in texts:
            while _signatures(text) & used:
                text = f"{text} {next(filler)}"
            used |= _signatures(text)
            out[repo].append(text)
    return out


# Words of the story texts that LanceDB's full-text index drops (measured with lancedb 0.40):
# they do not count towards a text's length.
_STOP = frozenset("a after all and are both by can do for how i in is it of on out re so the "
                  "their then to too until up which with you".split())


def _signatures(text: str) -> set[tuple[Any, ...]]:
    """What a text's BM25 score for the scoped-miss query depends on: the count of each query
    term (by its first three letters, coarser than a stemmer) and the text's length, counted
    with and without the stop words the index drops."""
    words = [w[:3] for w in _WORD.findall(text.lower()) if w not in _STOP]
    query = {w[:3] for w in _WORD.findall(SCOPE_QUERY.lower()) if w not in _STOP}
    terms = tuple(sorted(Counter(w for w in words if w in query).items()))
    return {("all", terms, len(_WORD.findall(text))), ("kept", terms, len(words))}


def _varied(rng: random.Random, text: str, seen: set[str]) -> str:
    """The text with 0-3 filler words added, never one already used."""
    out = text
    for n in range(rng.choice((0, 1, 1, 2, 3)), 8):
        out = " ".join([text, *rng.sample(_FILLER, n)]) if n else text
        if out not in seen:
            break
    seen.add(out)
    return out


def suggested_queries() -> list[dict[str, Any]]:
    return [
        {"name": "Scoped miss: key rotation in vault-agent", "text": SCOPE_QUERY,
         "preset": "docs-before-fix", "scope": "vault-agent", "limit": 10,
         "story": "Post-filter after the global cut returns nothing; raise over-fetch to 2.5 "
                  "or switch to pushdown and the vault-agent docs appear."},
        {"name": "Importance: editor theme preference", "text": BLEND_QUERY,
         "preset": "importance-blend", "limit": 5, "min_score": 0.0, "blend": 0.0,
         "expect": [_BLEND_PAIR[1][0]],
         "story": "At blend 0 the low-importance memory ranks first; drag the blend weight "
                  "to 0.5 and the important one overtakes it."},
        {"name": "Tie: one memory saved twice", "text": TIE_QUERY, "preset": "memory-plugin",
         "limit": 1, "expect": [_TIE_PAIR[1][0]],
         "story": "The same memory was saved twice, so both rows are exactly as far from the "
                  "query: at limit 1 the tie straddles the cut and LanceDB's row id order "
                  "returns the older, less important copy. Switch to importance-blend and "
                  "importance breaks the tie."},
    ]


def build_demo(path: str | Path, overwrite: bool = False) -> Path:
    """Write the demo store to a new folder (refusing to touch an existing non-empty one)."""
    import lancedb

    target = Path(path).expanduser()
    if not overwrite:
        _refuse_full(target)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="demo-indexed") as pool:
        # the indexed table's index training and story search run in LanceDB, which lets go
        # of the GIL, while this thread reads the main table's rows (as shipped) and embeds
        # them (the story goes into the main table's metadata, so the main table is written
        # after it)
        indexed = pool.submit(indexed_demo.build_indexed, target, META_KEY,
                              rows_table(indexed_demo.TABLE, indexed_demo._rows))
        rows = rows_table(TABLE, _rows)
        vectors = _jittered(HashEmbedder(dim=DIM).embed(rows.column("text").to_pylist()),
                            keep=[rid in _TIE_IDS for rid in rows.column("id").to_pylist()])
        story = indexed.result()
    meta = {"embedder": {"name": "hash-v1", "dim": DIM}, "demo": True,
            "suggested_queries": suggested_queries() + story}
    schema = pa.schema([
        pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
        pa.field("vector", pa.list_(pa.float32(), DIM)),
        pa.field("importance", pa.float64()), pa.field("category", pa.utf8()),
        pa.field("createdAt", pa.float64()), pa.field("repo", pa.utf8()),
        pa.field("path", pa.utf8()), pa.field("agentId", pa.utf8()),
    ], metadata={META_KEY: json.dumps(meta).encode()})
    cols = {k: rows.column(k) for k in schema.names if k != "vector"}
    cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)
    table = pa.table(cols, schema=schema)
    target.mkdir(parents=True, exist_ok=True)
    db = lancedb.connect(str(target))
    tbl = db.create_table(TABLE, table, mode="overwrite")
    from lancedb.index import FTS

    tbl.create_index("text", config=FTS())
    return target


def _refuse_full(target: Path) -> None:
    """The demo store is only written to a new or empty folder."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InspectorError(f"{target} already exists and is not empty; the demo store "
                             "is only written to a new or empty folder.")


def demo_vector(text: str) -> np.ndarray:
    return HashEmbedder(dim=DIM).embed([text])[0]


DEMO_VERSION = 2  # 2: unique texts, jittered vectors, the tie story


def data_root() -> Path:
    """The app's data folder; INSPECTOR_DATA_DIR overrides it (tests use this)."""
    import os

    import platformdirs

    env = os.environ.get("INSPECTOR_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir("memory-store-inspector"))


def demo_store_path() -> Path:
    """Where the bundled demo store lives (or will be written): the user's data folder."""
    return data_root() / f"demo-store-v{DEMO_VERSION}"


def has_demo_store(target: Path) -> bool:
    return (target / f"{TABLE}.lance").exists()


_WRITING = threading.Lock()  # one writer per process: a launch starts it early (qt.app)


def ensure_demo_store() -> Path:
    """The bundled demo store in the user's data folder, written on first use: unpacked from
    the store as shipped, else built (a second caller while it is written waits for it)."""
    got = _ensure(build=True)
    assert got is not None  # built where it could not be unpacked
    return got


def unpack_demo_store() -> Path | None:
    """`ensure_demo_store` without building: None (nothing written) where the shipped store
    cannot be unpacked. A first launch's early writer (qt.app) imports nothing more."""
    return _ensure(build=False)


def _ensure(build: bool) -> Path | None:
    import os
    import shutil

    with _WRITING:
        target = demo_store_path()
        if has_demo_store(target):
            return target
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        if build:
            write_demo(tmp)
        elif not unpack_store(tmp):
            return None
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        return target


def write_demo(path: str | Path) -> Path:
    """The demo store written to a new or empty folder: the store as shipped (`shipped_store`),
    else, where it is missing or damaged, built from the generators (`build_demo`)."""
    target = Path(path).expanduser()
    _refuse_full(target)
    if unpack_store(target):
        return target
    return build_demo(target)


# ---- the rows as shipped --------------------------------------------------------------------
# Each demo table's rows without vectors, made by its generator (`row_generators`) once and
# kept as an Arrow file under `inspector.resources` (demo/): `build_demo` reads them instead of
# making them in Python (it builds the packed store below, and the demo where that is missing
# or damaged).
# The generators stay the source of truth: `rows_table` falls back to them where a file is
# missing or unreadable, and a test checks that every shipped file equals what its generator
# makes now. After changing a generator, write the files and the packed store again (`main`):
#     .venv/bin/python -m inspector.core.stores.demo --write resources/demo

ROWS_FOLDER = "demo"  # under inspector.resources


def rows_file_name(table: str) -> str:
    return f"{table}.arrow"


def from_rows(rows: list[dict[str, Any]]) -> pa.Table:
    """A generator's rows (dicts of plain values, every row the same keys) as a table."""
    return pa.table({k: [r[k] for r in rows] for k in rows[0]})


def read_rows_file(path: Any) -> pa.Table | None:
    """The table kept at `path` (a file or an importlib.resources traversable), None if it is
    absent or unreadable (the generator then makes the rows: a damaged install still starts)."""
    import pyarrow.ipc as ipc

    try:
        return ipc.open_file(pa.BufferReader(path.read_bytes())).read_all()
    except (OSError, pa.ArrowException):
        return None


def shipped_rows(table: str) -> pa.Table | None:
    """Demo table `table`'s rows as shipped (None: not shipped, or unreadable)."""
    try:
        folder = resources.files("inspector.resources").joinpath(ROWS_FOLDER)
    except ModuleNotFoundError:
        return None
    return read_rows_file(folder.joinpath(rows_file_name(table)))


def rows_table(table: str, make: Callable[[], list[dict[str, Any]]]) -> pa.Table:
    """The rows of demo table `table` without vectors: as shipped, else made by `make`."""
    got = shipped_rows(table)
    return got if got is not None else from_rows(make())


def write_rows(folder: str | Path,
               generators: dict[str, Callable[[], list[dict[str, Any]]]]) -> list[Path]:
    """Write each table's generated rows into `folder` (made if missing): one Arrow file each,
    zstd-compressed."""
    import pyarrow.ipc as ipc

    out = Path(folder).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table, make in generators.items():
        data = from_rows(make())
        path = out / rows_file_name(table)
        with ipc.new_file(str(path), data.schema,
                          options=ipc.IpcWriteOptions(compression="zstd")) as w:
            w.write_table(data)
        written.append(path)
    return written


def row_generators() -> dict[str, Any]:
    """Each demo table's row generator (its rows without vectors), by table name."""
    return {TABLE: _rows, indexed_demo.TABLE: indexed_demo._rows}


# ---- the store as shipped -------------------------------------------------------------------
# The whole demo store as `build_demo` writes it (both tables, their vectors, the full-text and
# IVF_PQ indexes, the stories found on that index), packed into one gzip'd tar file under
# resources/demo: a first launch unpacks it (no lancedb, no embedding, no index training
# beside the window's build), and every install shows the same stories. A test checks that its
# tables equal a fresh build's and that its stories hold on its own index; `main` writes it
# again with the rows.

STORE_ARCHIVE = "store.tar.gz"  # under ROWS_FOLDER


def shipped_store() -> Any:
    """The shipped store's archive (an importlib.resources traversable), None when the
    package has none."""
    try:
        got = resources.files("inspector.resources").joinpath(ROWS_FOLDER, STORE_ARCHIVE)
    except ModuleNotFoundError:
        return None
    return got if got.is_file() else None


def _member_ok(m: Any) -> bool:
    """A member an unpacked demo store may hold: a plain file or folder inside one of the
    demo's table folders (no link, device, absolute path nor `..`)."""
    from pathlib import PurePosixPath

    parts = PurePosixPath(m.name).parts
    return (m.isfile() or m.isdir()) and bool(parts) and ".." not in parts \
        and not PurePosixPath(m.name).is_absolute() \
        and parts[0] in (f"{TABLE}.lance", f"{indexed_demo.TABLE}.lance")


def unpack_store(target: str | Path, archive: Any = None) -> bool:
    """Unpack the shipped store (or `archive`: a path or traversable) into `target`, a new or
    empty folder. False, with nothing of it left in `target`, when there is none or it is
    damaged or holds anything but the demo's table folders (the caller then builds it)."""
    import gzip
    import shutil
    import tarfile
    import zlib

    source = shipped_store() if archive is None else archive
    if source is None:
        return False
    out = Path(target)
    existed = out.exists()
    try:
        with source.open("rb") as raw, gzip.GzipFile(fileobj=raw) as gz, \
                tarfile.open(fileobj=gz, mode="r|") as tar:
            out.mkdir(parents=True, exist_ok=True)
            for m in tar:  # a stream: each member checked before it is written
                if not _member_ok(m):
                    raise tarfile.TarError(f"unexpected member {m.name!r}")
                if hasattr(tarfile, "data_filter"):
                    tar.extract(m, out, filter="data")
                else:  # Python before 3.11.4: _member_ok is the filter
                    tar.extract(m, out)
        if has_demo_store(out) and (out / f"{indexed_demo.TABLE}.lance").is_dir():
            return True
    except (OSError, EOFError, tarfile.TarError, zlib.error):
        pass
    if existed:  # empty before: everything in it now came from the archive
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    else:
        shutil.rmtree(out, ignore_errors=True)
    return False


def pack_store(store: str | Path, archive: str | Path) -> Path:
    """A built demo store packed as `unpack_store` reads it: a tar of its table folders,
    members sorted and without owners or times, gzip'd."""
    import gzip
    import io
    import tarfile

    root = Path(store)
    out = Path(archive)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in root.rglob("*")):
            info = tar.gettarinfo(str(path), path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if path.is_dir() else 0o644
            if path.is_file():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f, gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9,
                                            mtime=0) as gz:
        gz.write(buf.getvalue())
    return out


def write_shipped(folder: str | Path) -> list[Path]:
    """What the demo ships, written into `folder`: each table's rows (`write_rows`) and the
    store built from its generators, packed (`pack_store`)."""
    import tempfile

    out = Path(folder).expanduser()
    written = write_rows(out, row_generators())
    with tempfile.TemporaryDirectory(prefix="inspector-demo-") as tmp:
        built = build_demo(Path(tmp) / "store")
        written.append(pack_store(built, out / STORE_ARCHIVE))
    return written


def main(argv: list[str] | None = None) -> int:
    """`python -m inspector.core.stores.demo --write FOLDER`: what the demo ships (the
    tables' rows, `rows_table`, and the packed store, `unpack_store`), written again from the
    generators."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--write":
        print("usage: python -m inspector.core.stores.demo --write FOLDER", file=sys.stderr)
        return 2
    for path in write_shipped(args[1]):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
