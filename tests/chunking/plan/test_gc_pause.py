"""The collector pause restores the collector's state, even when the body raises."""

from __future__ import annotations

import gc

import pytest

from chunking.parse.gc_pause import paused_gc


def test_collector_is_off_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_is_restored_when_the_body_raises() -> None:
    with pytest.raises(ValueError, match="boom"), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_nested_pause_leaves_re_enabling_to_the_outer_one() -> None:
    with paused_gc():
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
