"""The report's plots: intervals drawn, and lines that coincide still told apart."""

from __future__ import annotations

import re

from evaluation.report import _svg_plot

SAME = [(256.0, 0.9, 0.85, 0.95), (512.0, 0.92, 0.88, 0.96), (1024.0, 0.93, 0.89, 0.97)]


def _plot(lines: int) -> str:
    return _svg_plot(
        "answer-complete@5", {f"line {i}": SAME for i in range(lines)}, "max", "complete@5"
    )


def test_every_point_has_its_interval_drawn() -> None:
    svg = _plot(3)
    bars = re.findall(r'<path d="M[\d.]+,([\d.]+)V([\d.]+)', svg)
    assert len(bars) == 3 * len(SAME)
    assert all(float(low) > float(high) for low, high in bars)  # screen y grows downwards
    assert "95% intervals" in svg


def _attribute(element: str, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', element)
    return found.group(1) if found else ""


def test_lines_that_coincide_differ_in_place_pattern_width_and_marker() -> None:
    svg = _plot(4)
    lines = re.findall(r"<polyline ([^>]*)/>", svg)
    assert len(lines) == 4
    looks = {(_attribute(line, "stroke"), _attribute(line, "stroke-dasharray")) for line in lines}
    assert len(looks) == 4
    starts = {_attribute(line, "points").split(",")[0] for line in lines}
    assert len(starts) == 4  # side by side, not on top of each other
    widths = [float(_attribute(line, "stroke-width")) for line in lines]
    assert widths == sorted(widths, reverse=True)  # the first drawn is the widest
    assert svg.count("<circle") >= len(SAME)
    assert svg.count("<polygon") >= 3 * len(SAME)  # square, triangle, diamond markers
