"""The issue's done-when figures over the whole shared corpus, as a test.

The corpus lives in ../shared/corpus (read-only, present on developer machines
and in CI); `python -m bench.corpus_audit` prints the same figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus_audit import DEFAULT_CORPUS, SETTINGS, audit_corpus, corpus_files

pytestmark = pytest.mark.skipif(not DEFAULT_CORPUS.is_dir(), reason="no ../shared/corpus")


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("kind", ["md", "html"])
def test_corpus_has_no_invariant_violations(kind: str, setting: str) -> None:
    files = corpus_files(Path(DEFAULT_CORPUS) / kind)
    assert len(files) > 200
    audit, _ = audit_corpus(files, SETTINGS[setting])
    assert audit.chunks > len(files)
    assert not audit.violations, audit.examples
    # Sections apart (the default) leaves small sections in chunks of their own: at
    # 512 tokens the mean fill is about 0.51 (0.77 with Sections.PACKED), by design.
    assert sum(audit.fill) / len(audit.fill) > 0.45, "chunks should not be mostly tiny"
