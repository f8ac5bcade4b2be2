"""Where the shipped pipeline files live (inside the installed package), and their names.
Kept free of heavy imports: the command line lists these before it parses anything."""

from __future__ import annotations

from importlib import resources
from typing import Any


def shipped_dir() -> Any:
    return resources.files("inspector.resources").joinpath("pipelines")


def shipped_names() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in shipped_dir().iterdir()
                  if p.name.endswith(".toml"))
