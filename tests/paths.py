"""Where the tests find the project, their fixtures and ../shared, wherever a test file sits."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""This folder: the root of the test tree."""
ROOT = TESTS.parent
"""The project."""
FIXTURES = TESTS / "fixtures"
"""Real documents the tests chunk (each folder's SOURCES.md says where they come from)."""
SHARED = ROOT.parent / "shared"
"""The read-only ../shared folder beside the project (absent in some CI clones)."""
