"""Bounded reads of user-named files (config, lexicon, speaker, script, manifest).

Why: a path on the command line can name anything. A FIFO blocks ``open()`` and ``read()``
forever, ``/dev/zero`` or ``/dev/urandom`` never end, and a huge file read whole eats memory
before any size check runs. So a file is opened non-blocking, must be a regular file by
``fstat`` of the open descriptor (no race with a swap after a check), its size is checked
before reading, and at most ``limit + 1`` bytes are read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .errors import InputFileError

KB, MB = 1024, 1024 * 1024

#: Default caps per kind of file (bytes).
LIMITS = {
    "config": 1 * MB,
    "lexicon": 64 * MB,
    "speaker": 16 * MB,
    "script": 512 * MB,
    "manifest": 1024 * MB,
    "text": 256 * MB,
}


def _kind_of(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a plain file"


def read_bounded(path: str | os.PathLike[str], what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (``what``: "config", "lexicon", ...), at most
    ``limit`` of them (default :data:`LIMITS`); :class:`InputFileError` otherwise."""
    cap = limit if limit is not None else LIMITS.get(what, 64 * MB)
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputFileError(f"{what} file {p} does not exist") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {what} file {p}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(
                f"cannot read {what} file {p}: it is not a regular file ({_kind_of(st)})"
            )
        if st.st_size > cap:
            raise InputFileError(
                f"{what} file {p} is too large ({st.st_size} bytes; the limit is {cap})"
            )
        chunks, total = [], 0
        while total <= cap:
            block = os.read(fd, min(1 << 20, cap + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
        if total > cap:
            raise InputFileError(f"{what} file {p} is too large (it grew past {cap} bytes)")
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(f"cannot read {what} file {p}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def check_regular(path: str | os.PathLike[str], what: str, limit: int | None = None) -> int:
    """Size of ``path`` after checking it is a regular file under ``limit`` (no read)."""
    cap = limit if limit is not None else LIMITS.get(what, 64 * MB)
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputFileError(f"{what} file {p} does not exist") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {what} file {p}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(
            f"cannot read {what} file {p}: it is not a regular file ({_kind_of(st)})"
        )
    if st.st_size > cap:
        raise InputFileError(f"{what} file {p} is too large ({st.st_size} bytes; limit {cap})")
    return st.st_size


def read_stream_bounded(stream: BinaryIO, what: str, limit: int | None = None) -> bytes:
    """At most ``limit`` bytes of a binary stream (stdin), else :class:`InputFileError`."""
    cap = limit if limit is not None else LIMITS.get(what, 256 * MB)
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise InputFileError(f"{what} on stdin is too large (more than {cap} bytes)")
    return data
