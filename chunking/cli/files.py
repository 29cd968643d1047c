"""Read a file a command was given: a regular file of a size the skill would take, or a
one-line refusal (every command that reads documents, questions or results goes through
`read_limited`).

A folder of documents may hold anything: a `*.md` symlink to /dev/zero grew
`python -m chunking` to the machine's memory, a FIFO named `*.md` blocked it for ever, and
a 2 GB sparse file was read whole before being refused on its first 4 KiB (issue 35). So
a file is opened without waiting for a writer, checked to be a regular file, and read up
to the limit plus one byte at most.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The most a file may hold: the largest body the skill takes (its MAX_REQUEST_BYTES
default, which tests/project/test_file_limits.py holds equal), so a command takes no file
the skill would refuse for its size, and reads no more than that to find out."""
STDIN = "-"
"""The name that stands for standard input."""


class FileRefused(OSError):
    """A file a command does not read: not a regular file, or too large; `strerror` says
    which in one line, and `filename` names it."""


def read_limited(name: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file `name` (`-`: standard input), at most `limit` of them.

    Raises FileRefused for a folder, a device (a symlink to /dev/zero), a FIFO or a socket,
    found before anything is read, and for a file of more than `limit` bytes, found after
    reading `limit` + 1 bytes at most; OSError when it cannot be opened.
    """
    if os.fspath(name) == STDIN:
        return _read_at_most(sys.stdin.buffer, limit, STDIN)
    # O_NONBLOCK: opening a FIFO does not wait for a writer; regular files ignore it.
    descriptor = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(errno.EINVAL, f"not a regular file ({_kind(mode)})", name)
        if os.fstat(descriptor).st_size > limit:
            raise FileRefused(errno.EFBIG, _too_large(limit), name)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return _read_at_most(handle, limit, name)
    finally:
        os.close(descriptor)


def _read_at_most(handle: BinaryIO, limit: int, name: str | os.PathLike[str]) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(errno.EFBIG, _too_large(limit), name)
    return data


def _too_large(limit: int) -> str:
    return (
        f"larger than {limit:,} bytes, the most the skill takes in one request; split it "
        "into smaller files"
    )


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


__all__ = ["MAX_FILE_BYTES", "FileRefused", "read_limited"]
