"""The one place command-line arguments become engine objects: the query options every
command shares, the question model they ask (`question_from_args`: every command, and the
window's launch and `shot`), and how the store is opened."""

from __future__ import annotations

import argparse
import json
from typing import Any

from inspector.core.engine.flow.shipped import DEFAULT_PIPELINE, accepted_names
from inspector.core.engine.flow.stages.classic import MODES, TIE_RULES
from inspector.core.engine.scope import STRATEGIES
from inspector.core.errors import InspectorError
from inspector.core.stores.options import OpenOptions
from inspector.core.stores.remote import parse_option_pairs

DISTANCES = ("l2", "cosine")
FILTERS = ("post", "pushdown")
# the pipeline options of the command line (None: not given); each sets the parameter of the
# stage that holds it (flow.spec.OPTION_PARAMS), limit, scope and exact are the question's
PARAM_KEYS = ("mode", "distance", "limit", "overfetch", "cap", "fts_k", "vec_k", "rrf_k", "blend",
              "default_importance", "min_score", "scope", "scope_strategy", "scope_column",
              "filter", "tie_rule", "nprobes", "min_nprobes", "max_nprobes", "refine_factor",
              "ef", "exact")


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        # the line already starts "inspector: "; a subcommand adds its own name after it
        where = self.prog.removeprefix("inspector").strip()
        raise InspectorError(f"{where}: {message}" if where else message)


def add_query_options(ap: argparse.ArgumentParser) -> None:
    """Options shared by every command that runs a query; None means 'not given'."""
    ap.add_argument("--table", help="table name (default: the only table, or 'memories')")
    q = ap.add_argument_group("query input (text drives full-text; a vector drives vector search)")
    q.add_argument("--text", help="query text, embedded for vector search unless --mode fts")
    q.add_argument("--vector", help="query vector as a JSON array, or @FILE")
    q.add_argument("--vector-of", metavar="ID", help="use a stored row's vector (query by example)")
    q.add_argument("--embedder", help="embedder for --text (default: the one the store records)")
    g = ap.add_argument_group("pipeline")
    g.add_argument("--preset", choices=accepted_names(),
                   help="reproduce a real system (see `inspector presets`, `inspector pipeline "
                        "list`)")
    g.add_argument("--pipeline", metavar="FILE",
                   help="a pipeline file (TOML or JSON) to run instead of a preset")
    g.add_argument("--system-config", metavar="FILE",
                   help="the system's own configuration (JSON), mapped onto the pipeline")
    g.add_argument("--set", action="append", default=[], metavar="STAGE.PARAM=VALUE",
                   help="change one stage parameter (or a pipeline SETTING=VALUE)")
    g.add_argument("--where", metavar="SQL",
                   help="pipelines with a `where` setting: the filter as the system passes "
                        "it to LanceDB (placed where the system places it), joined with the "
                        "scope so it can only narrow it; the same as --set where=SQL")
    g.add_argument("--widen", action="append", default=[], metavar="STAGE=DEPTH",
                   help="what-if (never the system's behaviour): the stage keeps at least "
                        "DEPTH rows (a fetch asks for that many); the diagnosis's 'search "
                        "deeper' fixes are this")
    g.add_argument("--now", metavar="EPOCH_MS|ISO",
                   help="the clock of time-dependent stages (default: now)")
    g.add_argument("--mode", choices=MODES)
    g.add_argument("--distance", choices=DISTANCES)
    g.add_argument("--limit", type=int)
    g.add_argument("--overfetch", type=float, help="raw pool depth = ceil(limit * F), F >= 1")
    g.add_argument("--cap", type=int, help="largest pool depth (0 = none; default 50)")
    g.add_argument("--fts-k", type=int, help="floor for the full-text leg's k (hybrid)")
    g.add_argument("--vec-k", type=int, help="floor for the vector leg's k (hybrid)")
    g.add_argument("--rrf-k", type=int, help="RRF constant k: 1 / (k + rank) (hybrid; 60)")
    g.add_argument("--blend", type=float, help="importance blend weight w in [0, 1]")
    g.add_argument("--default-importance", type=float, help="importance used when missing")
    g.add_argument("--min-score", type=float, help="drop results whose blended score is lower")
    g.add_argument("--tie-rule", choices=TIE_RULES,
                   help="how equal scores are ordered: lancedb (LanceDB's own order, its "
                        "native hybrid) or id (ties by id ascending, the docs engine)")
    _add_ann_options(ap)
    s = ap.add_argument_group("scope")
    s.add_argument("--scope", action="append",
                   help="the caller's scope (empty or 'global' = everything); pipeline presets "
                        "take it repeated: rows in any listed scope are in scope")
    s.add_argument("--scope-list", metavar="JSON",
                   help="pipeline presets: the scopes as a JSON array; [] denies everything")
    s.add_argument("--scope-strategy", choices=STRATEGIES)
    s.add_argument("--scope-map", metavar="FILE", help="JSON {scope: [prefix, ...]}")
    s.add_argument("--scope-column", help="column compared for --scope-strategy column")
    s.add_argument("--filter", choices=FILTERS, help="post: after the cut; pushdown: prefilter")
    ap.add_argument("--expect", action="append", default=[], metavar="ID",
                    help="report where this id is dropped and what depth returns it")
    ap.add_argument("--column", action="append", default=[], metavar="ROLE=COL",
                    help="override a detected column role, e.g. --column importance=weight")
    add_store_options(ap)


def _add_ann_options(ap: argparse.ArgumentParser) -> None:
    x = ap.add_argument_group("vector index (default: LanceDB's own search, as the real "
                              "systems run it; no preset passes these)")
    x.add_argument("--nprobes", type=int, help="IVF partitions searched (minimum = maximum)")
    x.add_argument("--min-nprobes", type=int, help="IVF partitions always searched")
    x.add_argument("--max-nprobes", type=int,
                   help="IVF partitions searched when a filter leaves fewer than k (0 = all)")
    x.add_argument("--refine-factor", type=int, help="re-rank k * R candidates with full vectors")
    x.add_argument("--ef", type=int, help="HNSW candidates considered (LanceDB: 1.5 * k)")
    x.add_argument("--exact", action="store_true", default=None,
                   help="what-if: bypass the vector index (an exact flat search)")


def add_store_options(ap: argparse.ArgumentParser, as_of: bool = True) -> None:
    """Where and which version: object storage options, a table version, a docs model."""
    st = ap.add_argument_group("store location and version")
    st.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                    help="object storage / db:// option, e.g. aws_endpoint=http://127.0.0.1:9000 "
                    "(also from INSPECTOR_STORAGE_OPTIONS)")
    if as_of:
        st.add_argument("--as-of", type=int, metavar="VERSION",
                        help="open the table as of this version (see `inspector versions`)")
    st.add_argument("--docs-model", metavar="MODEL",
                    help="SQLite docs store: which docs_embeddings model to search")


def storage_from_args(a: argparse.Namespace) -> dict[str, str] | None:
    return parse_option_pairs(getattr(a, "storage_option", None) or []) or None


def open_options(a: argparse.Namespace) -> OpenOptions:
    """Everything the arguments say about how to open the store besides its URI and table."""
    roles = parse_option_pairs(getattr(a, "column", None) or [], "--column", secret=False)
    if any(not role or not col for role, col in roles.items()):
        raise InspectorError("--column takes ROLE=COLUMN.")
    return OpenOptions.make(storage_from_args(a), getattr(a, "as_of", None),
                            getattr(a, "docs_model", None), roles)


def open_from_args(a: argparse.Namespace, version: int | None = None) -> Any:
    """The store the arguments name, opened read-only with every store option."""
    from inspector.core.stores.opening import open_store

    opts = open_options(a)
    if version is not None:
        opts = opts.at(version)
    return open_store(a.store, a.table, **opts.kwargs())


# the pipeline options of the command line: each sets the parameter of the stage that holds it
_OPTIONS = [k for k in PARAM_KEYS if k not in ("limit", "scope", "exact")] + ["scope_map"]


def pipeline_of(a: argparse.Namespace) -> tuple[str | None, str | None]:
    """(preset, pipeline file) the arguments name; LanceDB's own search when neither."""
    if a.preset is None and a.pipeline is None:
        return DEFAULT_PIPELINE, None
    return a.preset, a.pipeline


def scopes_from_args(a: argparse.Namespace) -> list[str] | None:
    """--scope (repeated) or --scope-list JSON; None: unscoped, []: deny everything."""
    if a.scope and a.scope_list is not None:
        raise InspectorError("Give --scope (repeated) or --scope-list, not both.")
    if a.scope_list is None:
        return list(a.scope) if a.scope else None
    try:
        scopes = json.loads(a.scope_list)
    except ValueError:
        scopes = None
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise InspectorError("--scope-list takes a JSON array of scope names, e.g. "
                             "'[\"global\", \"agent:main\"]' ([] denies everything).")
    return scopes


def _options_as_sets(a: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The pipeline options given (--overfetch, --blend, --rrf-k ...) as the --set assignments
    of the stages that hold them; an option no stage of this pipeline holds is refused."""
    from inspector.core.engine.flow.spec import held_options, load_file, load_shipped
    from inspector.core.engine.scope import load_scope_map

    given = {k: getattr(a, k) for k in _OPTIONS if getattr(a, k, None) is not None}
    if getattr(a, "scope_map", None):
        given["scope_map"] = load_scope_map(a.scope_map)
    if not given:
        return {}
    preset, file = pipeline_of(a)
    spec = load_shipped(preset) if preset else load_file(file)
    held = held_options(spec, given)
    missing = [f"--{k.replace('_', '-')}" for k in given if k not in held]
    if missing:
        raise InspectorError(f"{', '.join(missing)}: pipeline {spec.name} has no stage that "
                             f"takes {'it' if len(missing) == 1 else 'them'}; its parameters "
                             f"are set with --set STAGE.PARAM=VALUE (see `inspector pipeline "
                             f"show {preset or file}`).")
    return held


def widen_from_args(a: argparse.Namespace) -> dict[str, int]:
    """--widen STAGE=DEPTH (repeated): a what-if depth per stage."""
    out: dict[str, int] = {}
    for item in getattr(a, "widen", None) or []:
        stage, sep, depth = item.partition("=")
        try:
            n = int(depth)
        except ValueError:
            n = -1
        if not sep or not stage.strip() or not 1 <= n <= 10_000_000:
            raise InspectorError(f"--widen takes STAGE=DEPTH with a depth from 1 to "
                                 f"10,000,000, not {item!r}.")
        out[stage.strip()] = n
    return out


def question_from_args(a: argparse.Namespace, need_query: bool = True) -> Any:
    from inspector.core.engine.flow.inputs import parse_vector
    from inspector.core.engine.flow.question import make_question, parse_now
    from inspector.core.engine.flow.spec import parse_assignment
    from inspector.core.stores.remote import parse_option_pairs
    from inspector.core.stores.safety.redact import redact_uri

    held = _options_as_sets(a)
    scopes = scopes_from_args(a)
    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = [float(x) for x in parse_vector(a.vector)] if a.vector is not None else None
    sets = {**{k: v for one in held.values() for k, v in one.items()},
            **dict(parse_assignment(x) for x in a.set)}
    if getattr(a, "where", None) is not None:
        if "where" in sets:
            raise InspectorError("Give --where or --set where=..., not both.")
        sets["where"] = a.where  # as given: SQL text, never read as JSON
    if need_query and not (a.text or vector or a.vector_of):
        raise InspectorError("Give a query: --text TEXT, --vector JSON or --vector-of ID.")
    preset, file = pipeline_of(a)
    return make_question(store=redact_uri(a.store or ""), table=a.table, text=a.text,
                         vector=vector, vector_of=a.vector_of, embedder=a.embedder,
                         preset=preset, pipeline_file=file,
                         system_config=getattr(a, "system_config", None), set=sets,
                         widen=widen_from_args(a), exact=bool(getattr(a, "exact", None)),
                         columns=parse_option_pairs(getattr(a, "column", None) or [],
                                                    "--column", secret=False),
                         scopes=scopes, limit=a.limit,
                         now=parse_now(a.now) if getattr(a, "now", None) is not None
                         else None,
                         expect=list(a.expect))


def fixed_question(a: argparse.Namespace) -> Any:
    """The question the arguments ask (no query needed), for `inspector shot` and the window's
    launch until they ask `question_from_args` themselves: a thin compatible name, on the one
    engine (no preset named: LanceDB's own search, pipeline lancedb)."""
    return question_from_args(a, need_query=False)


def is_flow(a: argparse.Namespace) -> bool:
    """True when the arguments name a pipeline whose stages are not the classic shape
    (scope rule, fetch, scope filter, blend, min score, limit; `flow.fixed.SHAPE`): kept for
    `inspector shot`, whose picture of the classic shape is the window's classic view."""
    from inspector.core.engine.flow.fixed import SHAPE
    from inspector.core.engine.flow.spec import load_file, load_shipped

    if getattr(a, "pipeline", None) is None and getattr(a, "preset", None) is None:
        return False
    spec = load_file(a.pipeline) if getattr(a, "pipeline", None) else load_shipped(a.preset)
    return any(tuple(st.kind for st in r.stages) != SHAPE for r in spec.routes)


def parse_size(text: str) -> tuple[int, int]:
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h)) if sep else None
    except ValueError:
        size = None
    if size is None or not (320 <= size[0] <= 8192 and 240 <= size[1] <= 8192):
        raise InspectorError(f"--size takes WIDTHxHEIGHT between 320x240 and 8192x8192, "
                             f"not {text!r}.")
    return size
