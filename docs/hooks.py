"""mkdocs hooks: the reference is generated at build time from the project's own code, so it
can never drift from it. A page asks for a part with a line `<!-- generate: NAME -->`:
`commands` (the argparse parser), `stages` (the stage registry), `pipelines` (the shipped
pipeline files), `schema-question`, `schema-pipeline`, `schema-receipt`, `schema-answer`,
`schema-judgments`, `schema-checks` and `schema-scope-map` (the JSON Schemas).
An unknown name fails the build."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

MARK = re.compile(r"^<!-- generate: ([a-z-]+) -->$", re.M)
HELP_WIDTH = "100"  # argparse wraps help at the terminal's width; the docs use a fixed one


def on_pre_build(config: Any, **_: Any) -> None:
    """Screenshots come from the visual gallery (scripts/docs_screenshots.sh), never by hand:
    every image in docs/images is named after the gallery state it shows."""
    from mkdocs.exceptions import PluginError

    from inspector.qt.harness.gallery import STATES

    images = Path(config["docs_dir"]) / "images"
    strays = sorted(p.name for p in images.iterdir() if p.suffix != ".png"
                    or p.stem not in STATES) if images.is_dir() else []
    if strays:
        raise PluginError(f"docs/images holds {', '.join(strays)}: not a gallery state's PNG "
                          f"(states: {', '.join(STATES)}); render it with "
                          "scripts/docs_screenshots.sh")


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARK.sub(lambda m: GENERATORS[m.group(1)](), markdown)


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _code(value: object) -> str:
    """Inline code that survives any backtick inside the value."""
    text = _cell(value)
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


# ------------------------------------------------------------------ commands (argparse)


def _subcommands(ap: argparse.ArgumentParser) -> Iterator[tuple[str, str, Any]]:
    for action in ap._actions:  # argparse keeps sub-commands only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def commands() -> str:
    from inspector.cli.main import parser, window_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        out = ["## `inspector [STORE]`", "", "The window.", "", "```text",
               window_parser().format_help().rstrip(), "```", ""]
        for name, help_, sub in _subcommands(parser()):
            out += [f"## `inspector {name}`", "", _sentence(help_), "", "```text",
                    sub.format_help().rstrip(), "```", ""]
            for name2, help2, sub2 in _subcommands(sub):
                out += [f"### `inspector {name} {name2}`", "", _sentence(help2), "", "```text",
                        sub2.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(out)


# ------------------------------------------------------------------ stages (the registry)


def _default(value: Any) -> str:
    if isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False)
        return _code(text) if len(text) <= 60 else f"a table of {len(value)} entries"
    return _code(json.dumps(list(value) if isinstance(value, tuple) else value,
                            ensure_ascii=False))


def _range(p: Any) -> str:
    if p.choices:
        return " ".join(_code(c) for c in p.choices)
    if p.lo is None and p.hi is None:
        return ""
    lo = "-inf" if p.lo is None else f"{p.lo:g}"
    hi = "inf" if p.hi is None else f"{p.hi:g}"
    return f"[{lo}, {hi}]"


def _summary(kind: Any) -> str:
    """The stage function's first docstring paragraph (the registry keeps its first line)."""
    import inspect

    doc = inspect.cleandoc(kind.fn.__doc__ or "") or kind.doc or "(no description)"
    return _cell(" ".join(doc.split("\n\n")[0].split()))


def stages() -> str:
    import inspector.core.engine.flow.stages  # noqa: F401 - registers every kind
    from inspector.core.engine.flow.registry import KINDS, ROLES

    out = [f"{len(KINDS)} stage kinds in {len(ROLES)} roles. *live*: a change is answered "
           "from the rows already fetched; *new search*: it fetches again.", ""]
    for role in ROLES:
        kinds = sorted((k for k in KINDS.values() if k.role == role), key=lambda k: k.kind)
        if not kinds:
            continue
        out += [f"## {role.capitalize()} stages", ""]
        for k in kinds:
            out += [f"### `{k.kind}`", "", f"*{role}*: {_summary(k)}", ""]
            if not k.params:
                out += ["No parameters.", ""]
                continue
            out += ["| parameter | type | default | range | change | what it is |",
                    "|---|---|---|---|---|---|"]
            for p in k.params:
                out.append(f"| `{p.name}` | {p.type} | {_default(p.default)} | {_range(p)} | "
                           f"{'live' if p.live else 'new search'} | {_cell(p.doc)} |")
            out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------ the shipped pipelines


def _leading_comment(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").rstrip())
    return " ".join(lines)


def pipelines() -> str:
    import inspector.core.engine.flow.stages  # noqa: F401 - registers every kind
    from inspector.core.engine.flow import spec as flow_spec
    from inspector.core.engine.flow.registry import kind_of
    from inspector.core.engine.flow.shipped import shipped_dir

    names = flow_spec.shipped_names()
    specs = {n: flow_spec.load_shipped(n) for n in names}
    out = [f"{len(names)} pipeline files ship inside the package "
           "(`resources/pipelines/NAME.toml`); each is a preset (`--preset NAME`).", "",
           "| pipeline | system | source version |", "|---|---|---|"]
    for n, s in specs.items():
        text = shipped_dir().joinpath(f"{n}.toml").read_text(encoding="utf-8")
        source = re.search(r"read from (.+?)[;.](?:\s|$)", _leading_comment(text))
        version = s.version or (f"read from {source.group(1)}" if source else "—")
        out.append(f"| [`{n}`](#{n}) | {_cell(s.system) or '—'} | "
                   f"{_cell(version)} |")
    out.append("")
    for n, s in specs.items():
        text = shipped_dir().joinpath(f"{n}.toml").read_text(encoding="utf-8")
        out += [f"## {n}", "", f"**{_cell(s.title)}**", ""]
        facts = [("system", s.system), ("source version", s.version),
                 ("read from", _leading_comment(text)), ("path", s.path),
                 ("depth", s.depth_rule), ("ties", s.ties), ("index knobs", s.index_knobs),
                 ("limit", f"default {s.limit.default}, clamped to "
                           f"{s.limit.min}..{s.limit.max}")]
        out += [f"- **{k}**: {_cell(v)}" for k, v in facts if v]
        if s.sources:
            out.append("- **sources**: " + "; ".join(_code(x) for x in s.sources))
        if s.not_reproduced:
            out.append("- **not reproduced**: " + "; ".join(_cell(x) for x in s.not_reproduced))
        if s.settings:
            out.append("- **settings**: " + ", ".join(
                f"`{k} = {json.dumps(v, ensure_ascii=False)}`" for k, v in s.settings.items()))
        if s.system_config:
            out.append(f"- **`--system-config` reads**: {_cell(s.system_config.format)}")
        out.append("")
        for route in s.routes:
            out += [f"Route `{route.name}` (when {' or '.join(route.when)}):", ""]
            for i, st in enumerate(route.stages, start=1):
                kind = kind_of(st.kind)
                given = ", ".join(f"`{k}`" for k in st.params)
                out.append(f"{i}. `{st.name}`: [`{st.kind}`](stages.md#{st.kind}) "
                           f"({kind.role})" + (f"; sets {given}" if given else ""))
            out.append("")
        out += [f"The file, `{n}.toml`:", "", "```toml", text.rstrip(), "```", ""]
    return "\n".join(out)


# ------------------------------------------------------------------ JSON Schemas


def _schema_block(schema: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(schema, indent=1, ensure_ascii=False) + "\n```\n"


def schema_question() -> str:
    from inspector.core.engine.flow.question import question_schema

    return _schema_block(question_schema())


def schema_pipeline() -> str:
    from inspector.core.engine.flow.spec import PipelineSpec

    return _schema_block(PipelineSpec.model_json_schema(by_alias=True))


def schema_receipt() -> str:
    from inspector.core.evidence.schema import receipt_schema

    return _schema_block(receipt_schema())


def schema_answer() -> str:
    from inspector.core.evidence.answer_schema import answer_schema

    return _schema_block(answer_schema())


def _file_schema(kind: str) -> Callable[[], str]:
    def page() -> str:
        from inspector.core.evidence.file_schemas import SCHEMAS

        return _schema_block(SCHEMAS[kind]())

    return page


GENERATORS: dict[str, Callable[[], str]] = {
    "commands": commands, "stages": stages, "pipelines": pipelines,
    "schema-question": schema_question, "schema-pipeline": schema_pipeline,
    "schema-receipt": schema_receipt, "schema-answer": schema_answer,
    "schema-judgments": _file_schema("judgments"),
    "schema-checks": _file_schema("checks"), "schema-scope-map": _file_schema("scope-map")}
