"""The one place command-line arguments become engine objects: the question (the question
model), parameters and open options. Every command (and the window's launch and `shot`) goes
through these."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.core.engine.flow.shipped import accepted_names, shipped_names
from inspector.core.engine.params import DISTANCES, FILTERS, MODES, TIE_RULES, Params
from inspector.core.engine.presets import PRESETS, former_note
from inspector.core.engine.scope import STRATEGIES
from inspector.core.errors import InspectorError
from inspector.core.stores.options import OpenOptions
from inspector.core.stores.remote import parse_option_pairs

# Arguments that map one to one onto Params fields (None: not given, so a preset may fill in).
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
    g.add_argument("--preset", choices=[*PRESETS, *(n for n in accepted_names()
                                                    if n not in PRESETS)],
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


def given_from_args(a: argparse.Namespace) -> dict[str, Any]:
    """The explicitly given parameters (scope map file read), as build_params takes them."""
    from inspector.core.engine.params import freeze_map
    from inspector.core.engine.scope import load_scope_map

    refuse_flow_options(a)
    given = {k: getattr(a, k) for k in PARAM_KEYS if getattr(a, k, None) is not None}
    if isinstance(given.get("scope"), list):
        if len(given["scope"]) > 1:
            raise InspectorError("This preset takes one --scope; the pipeline presets ("
                                 + ", ".join(shipped_names()) + ") take several.")
        given["scope"] = given["scope"][0]
    if getattr(a, "scope_map", None):
        given["scope_map"] = freeze_map(load_scope_map(a.scope_map))
    return given


FLOW_ONLY = ("system_config", "scope_list", "now", "where")


def _pipeline_spec(a: argparse.Namespace) -> Any:
    from inspector.core.engine.flow.spec import load_file

    return load_file(a.pipeline)


def is_flow(a: argparse.Namespace) -> bool:
    """True when the arguments name a pipeline of stages (not the fixed pipeline's shape)."""
    if getattr(a, "pipeline", None) is not None:
        return _pipeline_spec(a).engine != "fixed"
    return getattr(a, "preset", None) is not None and a.preset not in PRESETS


def refuse_flow_options(a: argparse.Namespace) -> None:
    """Pipelines of stages run only in `inspector query` for now; say so instead of guessing."""
    if is_flow(a):
        raise InspectorError(f"`inspector {getattr(a, 'command', None) or 'query'}` runs the "
                             f"fixed pipeline's presets only; pipelines of stages ("
                             f"{', '.join(n for n in shipped_names() if n not in PRESETS)}, "
                             f"or --pipeline FILE) run in `inspector query`."
                             f"{former_note(getattr(a, 'preset', None))}")
    given = [f"--{k.replace('_', '-')}" for k in FLOW_ONLY if getattr(a, k, None) is not None]
    if given:
        raise InspectorError(f"{', '.join(given)} apply to pipelines of stages ("
                             f"{', '.join(n for n in shipped_names() if n not in PRESETS)}, "
                             f"or --pipeline FILE).")


def fixed_preset(a: argparse.Namespace) -> Any:
    """The preset the arguments name: a name, or, for --pipeline FILE or --set, the Preset
    compiled from the pipeline file with the assignments applied (None: no preset)."""
    from inspector.core.engine.inputs import fixed_preset_of

    return fixed_preset_of(a.preset, getattr(a, "pipeline", None), _sets(a))


def _sets(a: argparse.Namespace) -> dict[str, Any]:
    from inspector.core.engine.flow.spec import parse_assignment

    return dict(parse_assignment(x) for x in getattr(a, "set", None) or [])


def fixed_question(a: argparse.Namespace) -> Any:
    """The question `inspector query` asks of the fixed pipeline, as the question model
    (flow.question.Question): preset or fixed pipeline file, --set, the query input, scope,
    limit, expected ids, and every fixed parameter given explicitly (`params`)."""
    from inspector.core.engine.flow.question import make_question
    from inspector.core.engine.inputs import parse_vector
    from inspector.core.stores.remote import parse_option_pairs
    from inspector.core.stores.safety.redact import redact_uri

    params_from_args(a)  # every option checked first, each with its own sentence
    given = given_from_args(a)
    scope, limit = given.pop("scope", None), given.pop("limit", None)
    if "scope_map" in given:
        given["scope_map"] = {k: list(v) for k, v in given["scope_map"]}
    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = [float(x) for x in parse_vector(a.vector)] if a.vector is not None else None
    return make_question(store=redact_uri(a.store or ""), table=a.table, text=a.text,
                         vector=vector, vector_of=a.vector_of, embedder=a.embedder,
                         preset=a.preset, pipeline_file=getattr(a, "pipeline", None),
                         set=_sets(a),
                         columns=parse_option_pairs(getattr(a, "column", None) or [],
                                                    "--column", secret=False),
                         scopes=None if scope is None else [scope], limit=limit,
                         expect=list(a.expect), params=given)


def params_from_args(a: argparse.Namespace) -> Params:
    from inspector.core.engine.inputs import build_params

    given = given_from_args(a)
    return build_params(preset=fixed_preset(a), **given)


def query_from_args(a: argparse.Namespace, store: Any, params: Params) -> Any:
    """The query the options describe: --vector, --vector-of or --text (with --embedder)."""
    from inspector.core.engine.inputs import build_query, parse_vector

    if a.vector is not None and a.vector_of is not None:
        raise InspectorError("Give either --vector or --vector-of, not both.")
    vector = parse_vector(a.vector) if a.vector is not None else None
    return build_query(store, params.mode, text=a.text, vector=vector, vector_of=a.vector_of,
                       embedder=a.embedder)


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
