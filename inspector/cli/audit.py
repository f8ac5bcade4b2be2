"""`inspector audit recall|scopes|change`: store-wide audits over any preset or pipeline,
the arguments made one Question as `inspector query` makes them."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inspector.cli.flow import scopes_from_args
from inspector.cli.options import open_options
from inspector.core.errors import InspectorError
from inspector.core.jsonio import dumps


def add_audit_parser(sub: Any) -> None:
    from inspector.cli.options import add_store_options
    from inspector.core.analysis.audit import FIXES
    from inspector.core.engine.flow.shipped import accepted_names

    p = sub.add_parser("audit", help="store-wide audits over any preset or pipeline")
    ps = p.add_subparsers(dest="audit_command", required=True, parser_class=type(p))
    for name, help_ in (("recall", "can each memory be recalled by its own vector and text"),
                        ("change", "what one parameter change does across every probe"),
                        ("scopes", "leaks and starvation, scope by scope")):
        x = ps.add_parser(name, help=help_)
        x.add_argument("store")
        x.add_argument("--table")
        x.add_argument("--preset", choices=accepted_names())
        x.add_argument("--pipeline", metavar="FILE")
        x.add_argument("--system-config", metavar="FILE")
        x.add_argument("--set", action="append", default=[], metavar="STAGE.PARAM=VALUE",
                       help="recall: change the pipeline; change: the change to measure")
        x.add_argument("--scope", action="append",
                       help="probe every memory in these scopes (default: each its own)")
        x.add_argument("--scope-list", metavar="JSON")
        x.add_argument("--limit", type=int)
        x.add_argument("--now", metavar="EPOCH_MS|ISO")
        x.add_argument("--sample", type=int, help="probe a random sample of N memories")
        x.add_argument("--seed", type=int, default=0)
        x.add_argument("--per-scope", type=int, default=10, help="scopes: probes a scope")
        x.add_argument("--json", action="store_true")
        x.add_argument("--rows", type=int, default=20, help="rows listed (text output)")
        x.add_argument("--no-scan", action="store_true",
                       help="search each probe on its own (no batched scan over the vectors)")
        x.add_argument("--fixes", type=int, default=FIXES, metavar="N",
                       help="recall: the smallest change that returns each of the first N "
                            "never-recalled memories; scopes: the diagnosis's fixes of the "
                            "first N short examples (each fix run; 0: none)")
        x.add_argument("--index-facet", choices=("auto", "on", "off"), default="auto",
                       help="on an indexed table, compare each probe not found with an exact "
                            "search (lost_to_index); auto: tables up to 20,000 rows")
        x.add_argument("--column", action="append", default=[], metavar="ROLE=COL",
                       help="a column role, e.g. --column scope=metadata.user_id")
        add_store_options(x, as_of=True)


def cmd_audit(a: argparse.Namespace) -> int:
    import time

    from inspector.core.analysis import audit
    from inspector.core.engine.flow.question import make_question, parse_now, resolve
    from inspector.core.engine.flow.spec import parse_assignment
    from inspector.core.stores.opening import open_store
    from inspector.core.stores.safety.redact import redact_uri

    if a.sample is not None and a.sample < 1:
        raise InspectorError("--sample takes a whole number of memories >= 1.")
    scopes = scopes_from_args(a)
    sets = dict(parse_assignment(x) for x in a.set)
    q = make_question(store=redact_uri(a.store), table=a.table, preset=a.preset,
                      pipeline_file=a.pipeline, system_config=a.system_config,
                      set={} if a.audit_command == "change" else sets, scopes=scopes,
                      limit=a.limit, now=parse_now(a.now) if a.now else None,
                      columns=open_options(a).kwargs()["roles"] or {})
    resolve(q)  # an unknown preset or parameter fails before the store opens
    if a.audit_command == "change" and not sets:
        raise InspectorError("audit change needs the change: --set STAGE.PARAM=VALUE.")
    store = open_store(a.store, a.table, **open_options(a).kwargs())
    now = q.now if q.now is not None else time.time() * 1000
    own = scopes is None
    if a.audit_command == "scopes":
        if not 1 <= a.per_scope <= 10_000:
            raise InspectorError("--per-scope takes a whole number between 1 and 10000.")
        res = audit.scope_audit(store, q, now, per_scope=a.per_scope, seed=a.seed,
                                scan=not a.no_scan, fixes=max(0, a.fixes),
                                facet_mode=a.index_facet)
        text = audit.format_scopes(res)
    elif a.audit_command == "recall":
        def progress(done: int, total: int) -> bool:
            if sys.stderr.isatty() and (done % 25 == 0 or done == total):
                sys.stderr.write(f"\rprobed {done}/{total}")
                sys.stderr.flush()
            return True

        res = audit.recall_audit(store, q, now, own_scope=own, sample=a.sample, seed=a.seed,
                                 progress=progress, scan=not a.no_scan, fixes=max(0, a.fixes),
                                 facet_mode=a.index_facet)
        text = audit.format_recall(res, a.rows)
    else:
        res = audit.change_audit(store, q, now, sets, own_scope=own, sample=a.sample,
                                 seed=a.seed, scan=not a.no_scan,
                                 facet_mode=a.index_facet)
        text = audit.format_change(res)
    if a.json:
        print(dumps(res))
    else:
        print(text)
    return 0
