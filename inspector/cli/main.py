"""`inspector` and its commands: the parser, `tables|presets|demo|shot`, and `inspector
[STORE]` for the window. `query` and `run-trec` live in cli.answers, `sweep|report|check` in
cli.tuning, `versions|diff-versions` in cli.stores, `mcp` in cli.serve; arguments become engine
objects in cli.options only.

Bad input exits with status 2 and one line on stderr, never a traceback (cli.guard holds the
last-resort handler, the secret scrubbing of that line and the quieting of native output).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from inspector.cli import answers as cli_answers
from inspector.cli import audit as cli_audit
from inspector.cli import flow as cli_flow
from inspector.cli import guard
from inspector.cli import serve as cli_serve
from inspector.cli import stores as cli_stores
from inspector.cli import tuning as cli_tuning
from inspector.cli.options import (
    Parser,
    add_query_options,
    add_store_options,
    open_options,
    parse_size,
    storage_from_args,
)
from inspector.core.errors import InspectorError
from inspector.core.stores.safety.redact import redact_uri

COMMANDS = ("query", "tables", "presets", "pipeline", "audit", "demo", "import", "shot",
            "sweep", "report", "check", "versions", "diff-versions", "run-trec", "mcp")


def parser() -> argparse.ArgumentParser:
    """Every command's parser (the docs' command reference is generated from it)."""
    ap = Parser(prog="inspector", description="Inspect an agent memory store's retrieval.")
    sub = ap.add_subparsers(dest="command", parser_class=Parser)
    q = sub.add_parser("query", help="run the pipeline and print every stage")
    q.add_argument("store")
    add_query_options(q)
    q.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    q.add_argument("--index-facet", choices=("auto", "on", "off"), default="auto",
                   help="compare an indexed search with an exact one (auto: on tables of up "
                        "to 20,000 rows, where it costs about what the search does)")
    q.add_argument("--fixes", choices=("on", "off"), default="on",
                   help="when fewer rows than the limit come back, run the changes that would "
                        "return a full page and list them (off: the diagnosis alone)")
    q.add_argument("--rows", type=int, default=15, help="rows shown per stage (text output)")
    cli_answers.add_export_options(q)
    t = sub.add_parser("tables", help="tables, columns, detected roles and row counts")
    t.add_argument("store")
    t.add_argument("--json", action="store_true")
    add_store_options(t, as_of=False)
    sub.add_parser("presets", help="the named presets and their candidate depths")
    cli_flow.add_parser(sub)
    cli_audit.add_audit_parser(sub)
    d = sub.add_parser("demo", help="write the demo store to PATH; without PATH, open or "
                                    "write it in the data folder and say where")
    d.add_argument("path", nargs="?")
    im = sub.add_parser("import", help="write a memory kept outside LanceDB to a new store")
    im.add_argument("kind", choices=("generative-agents",),
                    help="generative-agents: a persona's associative_memory folder "
                         "(nodes.json, embeddings.json)")
    im.add_argument("source")
    im.add_argument("dest")
    sh = sub.add_parser("shot", help="render the window offscreen after a query and save a PNG")
    sh.add_argument("store", nargs="?")
    sh.add_argument("--out", required=True)
    sh.add_argument("--size", default="1600x1000", help="window size WIDTHxHEIGHT")
    add_query_options(sh)
    for flag, (takes, _) in NOT_IN_A_PICTURE.items():  # query's, refused in one line
        sh.add_argument(flag, **({} if takes else {"action": "store_const", "const": True}),
                        default=None, help=argparse.SUPPRESS)
    cli_tuning.add_parsers(sub)
    cli_stores.add_parsers(sub)
    cli_answers.add_parsers(sub)
    cli_serve.add_parser(sub)
    return ap


def _cmd_tables(a: argparse.Namespace) -> int:
    from inspector.core.evidence.report import format_tables, tables_json
    from inspector.core.stores.opening import describe_tables

    infos = describe_tables(a.store, storage_from_args(a))
    shown = redact_uri(a.store)
    if a.json:
        print(json.dumps(tables_json(shown, infos)))
    else:
        print(format_tables(shown, infos))
    return 0


def _cmd_demo(a: argparse.Namespace) -> int:
    import shlex

    from inspector.core.stores import demo

    if a.path is not None:
        print(f"demo store written to {demo.write_demo(a.path)}")
        return 0
    there = demo.has_demo_store(demo.demo_store_path())
    path = demo.ensure_demo_store()
    print(f"demo store {'already in' if there else 'written to'} {path}\n"
          f"(the data folder; INSPECTOR_DATA_DIR moves it). Try:\n"
          f"  inspector query {shlex.quote(str(path))} --preset docs-before-fix "
          f"--scope vault-agent --text {shlex.quote(demo.SCOPE_QUERY)}")
    return 0


def _cmd_import(a: argparse.Namespace) -> int:
    from inspector.core.stores.imports.generative_agents import TABLE, import_memory_stream

    path = import_memory_stream(a.source, a.dest)
    print(f"memory stream written to {path} (table {TABLE}); query it with --preset "
          f"generative-agents")
    return 0


def _cmd_presets(a: argparse.Namespace) -> int:
    from inspector.core.evidence.report import format_presets

    print(format_presets())
    return 0


# query's options that mean nothing for a picture: (takes a value, why)
_PRINTS = "is about what `inspector query` prints or writes; a picture has none of it"
NOT_IN_A_PICTURE = {
    "--json": (False, _PRINTS), "--rows": (True, _PRINTS), "--export": (True, _PRINTS),
    "--format": (True, _PRINTS), "--force": (False, _PRINTS),
    "--index-facet": (True, "chooses whether `inspector query` compares an indexed search with "
                            "an exact one; the window always does"),
    "--fixes": (True, "asks `inspector query` to list the fixes it ran; the window's banner "
                      "always offers them")}


def _cmd_shot(a: argparse.Namespace) -> int:
    """The window offscreen after the question `inspector query` would answer (any preset or
    pipeline file), or the demo store's first story when no store and no query are given."""
    from inspector.core.stores.safety.outputs import check_target

    for flag, (_, why) in NOT_IN_A_PICTURE.items():
        if getattr(a, flag[2:].replace("-", "_")) is not None:
            raise InspectorError(f"{flag} {why}: run `inspector query`.")
    check_target(a.out, [a.store], force=True)  # inside the store: refused before any window
    size = parse_size(a.size)
    from inspector.core.engine.flow.question import resolve
    from inspector.core.stores.docs_source import is_sqlite_file
    from inspector.core.stores.store import is_remote, local_path, readable_folder

    asks = bool(a.text or a.vector is not None or a.vector_of)
    if a.store is not None and not asks:
        raise InspectorError("Give a query for the store: --text TEXT, --vector JSON or "
                             "--vector-of ID.")
    demo = a.store is None
    if demo:  # the demo store: its first story, or the question asked of it
        from inspector.core.stores.demo import ensure_demo_store

        a.store = str(ensure_demo_store())
    q = cli_flow.question_from_args(a, need_query=False)
    resolve(q)  # a bad preset, option, --set or config is said before the window starts
    if demo and not asks:
        q = None
    options = open_options(a)
    if a.store is not None and not is_remote(a.store) and not is_sqlite_file(local_path(a.store)):
        readable_folder(a.store)  # a missing folder is said before the window starts
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from inspector.qt.app import shot

    return shot(q, options, size, a.out)


def window_parser() -> argparse.ArgumentParser:
    """`inspector [STORE]`: the window (the docs' command reference prints this one too)."""
    ap = Parser(prog="inspector", description="Open the inspector window on a store "
                "(the demo store when none is given). Commands: " + ", ".join(COMMANDS) + ".")
    ap.add_argument("store", nargs="?")
    ap.add_argument("--table")
    ap.add_argument("--pipeline", metavar="FILE",
                    help="a pipeline of stages (TOML or JSON) to show in the pipeline view, as "
                         "File > Open pipeline file… does; queries are typed in the window")
    add_store_options(ap)
    return ap


def _launch(argv: Sequence[str]) -> int:
    a = window_parser().parse_args(list(argv))
    options = open_options(a)
    if a.pipeline is not None:  # a bad file is said before any window opens
        from inspector.core.engine.flow.spec import load_stages_file

        load_stages_file(a.pipeline)
    from inspector.qt.app import launch

    return launch(a.store, a.table, options, pipeline=a.pipeline)


HANDLERS = {"query": cli_answers.cmd_query, "tables": _cmd_tables, "presets": _cmd_presets,
            "pipeline": cli_flow.cmd_pipeline, "audit": cli_audit.cmd_audit,
            "demo": _cmd_demo, "import": _cmd_import, "shot": _cmd_shot,
            **cli_tuning.HANDLERS, **cli_stores.HANDLERS, **cli_answers.HANDLERS,
            **cli_serve.HANDLERS}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr and exit 2 (a user error names the
    input; anything else names the command that failed); `--debug` shows the traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [x for x in argv if x != "--debug"]
    guard.learn_secrets(argv)
    try:
        guard.check_text(argv)
        if argv and argv[0] in ("-h", "--help"):
            parser().print_help()
            return 0
        if argv == ["--version"]:
            from inspector import __version__

            print(f"inspector {__version__}")
            return 0
        if not argv or argv[0] not in COMMANDS:
            return _launch(argv)
        a = parser().parse_args(argv)
        if a.command in ("shot", "mcp"):  # a window, or a server that logs to stderr
            return HANDLERS[a.command](a)
        with guard.quiet(debug):
            return HANDLERS[a.command](a)
    except InspectorError as exc:
        return guard.fail(str(exc), exc if debug else None)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the last resort: one line, never a traceback
        return guard.fail(guard.unexpected(argv, exc), exc if debug else None)
