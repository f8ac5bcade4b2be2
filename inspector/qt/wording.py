"""Words the window shows: the core speaks the command line's language, the window says
where to click instead; counts read as English."""

from __future__ import annotations

from typing import Any

# the core speaks the command line's language; the window says where to click instead
GUI_WORDS = (
    ("pass --embedder NAME, or query with --vector or --vector-of ID instead",
     "pick an embedder next to Run, or give the query's vector: from a file, or a row's id "
     "(the buttons here)"),
    ("pass --embedder NAME", "pick an embedder next to Run"),
    ("--vector-of ID", "Use as query (right-click a row)"),
    ("pass --embedder ", "pick in the embedder box next to Run: "),
)


def gui_words(message: str) -> str:
    for cli, gui in GUI_WORDS:
        message = message.replace(cli, gui)
    return message


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def show_value(v: Any) -> str:
    """A grid value as a tick, a label or a combo entry shows it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return f"{v:g}" if isinstance(v, (int, float)) else str(v)
