"""What runs a record: `chunk_safely` (a bug stays in its record), in a worker process
(`serve`, which sends back the answer, its logs and its memory) or a thread; and how a
worker and its forkserver die with the app."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from skills.skill.answer_caps import refused_alone
from skills.skill.chunk_records import chunk_record
from skills.skill.records import OutputRecord, failed_record
from skills.skill.worker_scoring import worker_scoring

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from chunking.plan.scoring import Scoring
    from skills.skill.contract import InputRecord
    from skills.skill.settings import Settings

logger = logging.getLogger(__name__)


PR_SET_PDEATHSIG = 1
"""Linux prctl option: a signal for the worker when its parent (the forkserver) dies."""


PARENT_CHECK_SECONDS = 0.25
"""How often the forkserver checks that the app that started it is still alive."""


READY = "ready"
"""A worker's first message: it has started and waits for records."""


def chunk_safely(
    record: InputRecord, settings: Settings, scoring: Scoring | None = None
) -> OutputRecord:
    try:
        return chunk_record(record, settings, scoring)
    except Exception:  # a bug outside chunking still stays in its record
        logger.exception("answering record %r failed", record.record_id)
        return failed_record(
            record.record_id,
            "internal error while answering this record; the function's logs have the details",
        )


def serve(connection: Connection) -> None:
    """A worker process: chunk each record it is sent, until the app closes the pipe."""
    _die_with_parent()
    connection.send(READY)
    collected = _Collector()
    root = logging.getLogger()
    root.addHandler(collected)
    root.setLevel(logging.INFO)
    while True:
        try:
            record, settings, pair_source = connection.recv()
        except (EOFError, OSError):
            return  # the app is gone, or replaced this worker
        scoring = None if pair_source is None else worker_scoring(connection, pair_source)
        # An answer too big to send is refused here, so it never crosses to the app.
        output = refused_alone(chunk_safely(record, settings, scoring), settings)
        connection.send((output, collected.drain(), _resident_bytes()))


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 elsewhere, so it is never refreshed)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the forkserver (and so the app) is gone, even in
    the middle of a record; elsewhere the closed pipe ends the worker after its record."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def exit_with_parent() -> None:
    """Exit this process (the forkserver) once the app that started it is gone, even if
    the app was SIGKILLed; its workers then die too (they asked for PR_SET_PDEATHSIG).

    The forkserver's own check (its pipe from the app reaching end of file) did not fire
    when the app was SIGKILLed, so a thread watches the parent's process id instead."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class _Collector(logging.Handler):
    """Keeps a worker's log records to send back with the record's answer, so they reach
    the app's own handlers (the Functions host collects logs from the app process only)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.entries: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Pickle-safe: the message rendered and the traceback as text, as QueueHandler does.
        message = self.format(record)
        record.msg, record.args, record.exc_info, record.exc_text = message, None, None, None
        self.entries.append(record)

    def drain(self) -> list[logging.LogRecord]:
        entries, self.entries = self.entries, []
        return entries
