"""Imported only by the chunk workers' forkserver: warm every cache chunking fills lazily.

The one module that does work at import time, on purpose: the forkserver imports it once,
and every worker forked from it starts with the encodings, parsers and segmenter loaded
(shared copy-on-write), so a worker that replaces a killed one answers its first record
as fast as any other. It also makes the forkserver exit when the app is gone, so no worker
outlives the app. Nothing else imports it.
"""

from __future__ import annotations

from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.settings import Settings
from skills.skill.worker_process import exit_with_parent

_SAMPLES = (
    {"text": "# Title\n\nA sentence. Another one, with [a link](x).\n\n| a | b |\n|---|---|\n"},
    {"text": "<h1>Title</h1><p>A sentence. Another one.</p>", "format": "html"},
    {"text": "Plain text. Two sentences.", "textSplitMode": "sentences"},
    # A page of over 4,096 characters: what a long text loads (numpy, for line tables and
    # the token index) is then shared by every worker instead of imported by each.
    {"text": "# Title\n\n" + "A sentence of a longer page, and [a link](x).\n\n" * 120},
    # An encoder that is not shipped (the error path). Not o200k_base: its ranks add
    # ~70 MB to every worker, so only a worker that gets an o200k record loads them (0.2 s).
    {"text": "Tokens.", "encoderModelName": "gpt2"},
)


def warm() -> None:
    """Chunk one small record of each kind with the default settings."""
    settings = Settings()
    for number, data in enumerate(_SAMPLES):
        chunk_record(InputRecord(record_id=str(number), data=data), settings)


exit_with_parent()
warm()
