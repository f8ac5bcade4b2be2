"""The receipt's map: the cut ring never draws outside the plot's box."""

from __future__ import annotations

import re

from inspector.core.evidence.svg import scatter


def test_the_cut_ring_is_clipped_to_the_plot_box() -> None:
    out = scatter([0.0, 1.0, 0.5], [0.0, 1.0, 0.9], ["in cut", "returned", "in scope"],
                  query=(0.95, 0.95), radius=5.0)
    box = re.search(r'<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="none"',
                    out).groups()
    # the ring sits in a nested svg viewport exactly the box's size, which clips it
    viewport = re.search(r'<svg x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)">'
                         r'<circle [^>]*stroke-dasharray', out)
    assert viewport is not None and viewport.groups() == box
    assert "url(" not in out  # receipts stay self-contained
