"""The documented example commands (README.md, docs/) on the demo store, recorded so that a
refactoring can prove it changed no output. `python -m tests.golden.record` rewrites
tests/golden/expected/ (review the diff before committing); tests/golden/test_golden.py
compares a fresh run with it.
Timings, the clock a question ran at (no `--now` given: the time of the run) and scratch
folders are blanked so two runs compare byte for byte."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).parent
EXPECTED = HERE / "expected"
TIMING = re.compile(r"created|created_at|timestamp|time|now|now_iso|\w*seconds|\w*_ms")
CLOCK = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")  # in text output


def scrub(obj: object, store: str, tmp: str) -> object:
    """The same output with timings and the scratch folder blanked."""
    if isinstance(obj, dict):
        return {k: ("<t>" if TIMING.fullmatch(k) else scrub(v, store, tmp))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub(v, store, tmp) for v in obj]
    if isinstance(obj, str):
        return CLOCK.sub("<t>", obj.replace(store, "<store>").replace(tmp, "<dir>"))
    return obj


def commands() -> Iterator[tuple[str, str]]:
    for line in (HERE / "commands.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, args = (s.strip() for s in line.split("|", 1))
            yield name, args


def in_process(argv: list[str]) -> tuple[int, str]:
    """Run `inspector ARGV` in this interpreter; its exit code and standard output."""
    from inspector.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def outputs(store: str, tmp: str,
            run: Callable[[list[str]], tuple[int, str]] = in_process) -> Iterator[tuple[str, str]]:
    """(name, recorded text) per command; `store` is a demo store, `tmp` a scratch folder."""
    for name, args in commands():
        argv = [a.format(store=store, dir=tmp) for a in shlex.split(args)]
        code, text = run(argv)
        try:
            text = json.dumps(scrub(json.loads(text), store, tmp), indent=1, sort_keys=True)
        except ValueError:
            text = str(scrub(text, store, tmp))
        extra = ""
        if name == "report":
            data = json.loads(Path(f"{tmp}/r.json").read_text())
            extra = json.dumps(scrub(data, store, tmp), indent=1, sort_keys=True)
        yield name, f"exit {code}\n{text}\n{extra}"


def main() -> None:
    from inspector.core.stores.demo import build_demo

    EXPECTED.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = str(build_demo(Path(tmp) / "demo"))
        for name, text in outputs(store, tmp):
            (EXPECTED / f"{name}.txt").write_text(text, encoding="utf-8")
    print(f"recorded {len(list(commands()))} outputs in {EXPECTED}", file=sys.stderr)


if __name__ == "__main__":
    main()
