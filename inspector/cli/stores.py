"""`inspector versions|diff-versions`: a table's history, and one question on two versions
(any pipeline: the question `inspector query` asks from the same options)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from inspector.cli import flow as cli_flow
from inspector.cli.options import add_query_options, add_store_options, open_from_args
from inspector.core.jsonio import dumps


def add_parsers(sub: Any) -> None:
    v = sub.add_parser("versions", help="a table's versions: number, time, row count")
    v.add_argument("store")
    v.add_argument("--table")
    v.add_argument("--json", action="store_true")
    add_store_options(v, as_of=False)
    dv = sub.add_parser("diff-versions", help="one query on two versions: what left, what came")
    dv.add_argument("store")
    add_query_options(dv)
    dv.add_argument("--from", dest="version_a", type=int, required=True, metavar="V",
                    help="the older version")
    dv.add_argument("--to", dest="version_b", type=int, metavar="V",
                    help="the newer version (default: the latest)")
    dv.add_argument("--stage", metavar="STAGE",
                    help="the stage compared (default: the last, the final results)")
    dv.add_argument("--who-pushed-out", metavar="ID",
                    help="walk the versions in between: the first write after which ID is gone")
    dv.add_argument("--json", action="store_true")


def _cmd_versions(a: argparse.Namespace) -> int:
    from inspector.core.stores.versions import list_versions

    store = open_from_args(a)
    got = list_versions(store)
    if a.json:
        print(json.dumps({"uri": store.display_uri, "table": store.table_name,
                          "versions": [v.to_json() for v in got]}))
        return 0
    print(f"store {store.display_uri}  table {store.table_name}")
    for v in got:
        ts = v.timestamp.isoformat(sep=" ", timespec="seconds") if v.timestamp else "-"
        print(f"  v{v.version:<6} {ts:<20} {'-' if v.rows is None else v.rows:>9} rows")
    return 0


def _cmd_diff_versions(a: argparse.Namespace) -> int:
    from inspector.core.analysis import version_diff as v
    from inspector.core.engine.flow.question import resolve
    from inspector.core.stores.versions import list_versions

    q = cli_flow.question_from_args(a)
    resolve(q)  # a bad pipeline or --set is said before the store opens
    store = open_from_args(a, version=a.version_a)
    diff = v.compare_versions(store, q, a.version_a, a.version_b, a.stage)
    push = None
    if a.who_pushed_out:
        lo, hi = sorted((diff.version_a, diff.version_b))
        span = [x.version for x in list_versions(store) if lo <= x.version <= hi]
        push = v.find_push_out(store, q, a.who_pushed_out, span, diff.stage)
    if a.json:
        doc = diff.to_json()
        doc["push_out"] = push.to_json() if push else None
        print(dumps(doc))
    else:
        print(v.format_diff(diff, push))
    return 0


HANDLERS = {"versions": _cmd_versions, "diff-versions": _cmd_diff_versions}
