"""The README stays a front page whose links hold, and the docs' reference (generated at build
time by docs/hooks.py) covers every command, stage kind and shipped pipeline file. The strict
mkdocs build itself runs in CI (`scripts/dev docs`)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_fits_on_two_screens_and_its_links_hold() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    targets = [t for t in LINK.findall(text) if "://" not in t and not t.startswith("#")]
    assert targets, "the README links to no page"
    broken = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not broken, broken


def test_the_command_reference_has_every_command_and_sub_command() -> None:
    from inspector.cli.main import COMMANDS

    page = _hooks().commands()
    for name in COMMANDS:
        assert f"## `inspector {name}`\n" in page, name
    for name in ("pipeline list", "pipeline show", "pipeline stages", "pipeline schema",
                 "audit recall", "audit scopes", "audit change"):
        assert f"### `inspector {name}`\n" in page, name
    assert "usage: inspector query" in page and "--preset" in page


def test_the_stage_and_pipeline_references_have_every_kind_and_file() -> None:
    import inspector.core.engine.flow.stages  # noqa: F401 - registers every kind
    from inspector.core.engine.flow.registry import KINDS
    from inspector.core.engine.flow.shipped import shipped_names

    hooks = _hooks()
    stages = hooks.stages()
    for kind in KINDS.values():
        assert f"### `{kind.kind}`\n" in stages
        for p in kind.params:
            assert f"| `{p.name}` |" in stages, (kind.kind, p.name)
    pipelines = hooks.pipelines()
    for name in shipped_names():
        assert f"## {name}\n" in pipelines and f"`{name}.toml`" in pipelines
    assert "| f6e63af (1.1.0-beta.11, 2026-08-08) |" in pipelines  # a source version
    assert "read from REFERENCE.md 1A" in pipelines  # a fixed preset's source
