"""Where the shipped pipeline files live (inside the installed package), and their names.
Kept free of heavy imports: the command line lists these before it parses anything."""

from __future__ import annotations

from importlib import resources
from typing import Any

DEFAULT_PIPELINE = "lancedb"  # what a question naming no pipeline runs: LanceDB's own search

# former names users may still have in files and commands: old name -> the pipeline it is now
ALIASES = {"openclaw-tool": "openclaw"}


def shipped_dir() -> Any:
    return resources.files("inspector.resources").joinpath("pipelines")


def shipped_names() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in shipped_dir().iterdir()
                  if p.name.endswith(".toml"))


def canonical(name: str) -> str:
    """The shipped pipeline a name means (a former name, an alias, means its new one)."""
    return ALIASES.get(name, name)


def accepted_names() -> list[str]:
    """Every name a preset may be given by: the shipped ones, then the aliases."""
    return [*shipped_names(), *ALIASES]
