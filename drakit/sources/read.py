"""Paths, directories, stdin and pipes into bounded UTF-8 text: the only place drakit reads input.

Every read is chunked and capped (``MAX_INPUT_BYTES``), so a ``/dev/zero``, an endless pipe or a
FIFO with a writer that never stops costs at most the cap in memory, never a hang on the size.
A FIFO is opened without blocking, so one with no writer reads as empty instead of waiting.
Named paths that cannot be read are errors; entries met while walking a directory (symlink
loops, dangling links, unreadable files, sockets) are reported as notes and skipped, because
one bad entry in a manifest folder should not hide the rest.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from drakit.errors import DrakitError

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Each file (and stdin) above 64 MiB is refused: a 5,000-node x 8-GPU inventory is about
32 MiB of YAML, so anything much larger is a mistake that would only burn memory."""

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Text:
    """One input's decoded text and the name it is reported under (``-`` for stdin)."""

    name: str
    text: str


@dataclass(frozen=True)
class Inputs:
    """What a set of paths read as: the texts in order, errors, and notes about skipped entries."""

    texts: tuple[Text, ...] = ()
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class _Collect:
    texts: list[Text] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ReadError(DrakitError):
    """One input that cannot be read; the message is the one line the user sees."""


ProgressFn = Callable[[str, int], None]


def _limit_text(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


def decode_utf8(name: str, data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped, as Go's YAML reader does)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ReadError(f"{name}: not UTF-8 text (a UTF-16 byte-order mark at byte 0): convert the file to UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReadError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_stream(name: str, stream: IO[bytes] | IO[str], limit: int = MAX_INPUT_BYTES,
                progress: ProgressFn | None = None) -> str:
    """Read a stream in chunks up to ``limit`` bytes; text streams are read through their buffer."""
    raw: Any = getattr(stream, "buffer", stream)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            chunk = raw.read(_CHUNK)
            if not chunk:
                break
            if isinstance(chunk, str):  # a text stream without a buffer (StringIO in tests)
                chunk = chunk.encode("utf-8", "surrogatepass")
            size += len(chunk)
            if size > limit:
                raise ReadError(f"{name}: input is larger than the {_limit_text(limit)} limit")
            chunks.append(chunk)
            if progress is not None:
                progress(name, size)
    except (OSError, ValueError) as e:  # ValueError: I/O on a closed file
        raise ReadError(f"{name}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return decode_utf8(name, b"".join(chunks))


def read_stdin(stdin: IO[Any] | None, limit: int = MAX_INPUT_BYTES, progress: ProgressFn | None = None) -> str:
    """Standard input (or the stream given instead); a closed stdin is an error, not a hang."""
    stream = sys.stdin if stdin is None else stdin
    if stream is None or getattr(stream, "closed", False):
        raise ReadError("-: standard input is closed: pipe the manifests in or give -f FILE")
    return read_stream("-", stream, limit, progress)


def _os_message(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if e.errno == errno.ENOENT:
        return "no such file or directory"
    return (e.strerror or str(e)).lower()


def read_path(path: str, limit: int = MAX_INPUT_BYTES, progress: ProgressFn | None = None) -> str:
    """One named file, FIFO or character device, read in bounded chunks."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ReadError(f"{path}: {_os_message(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ReadError(f"{path}: is a directory, not a file")
    if stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise ReadError(f"{path}: file is {st.st_size / (1024 * 1024):.0f} MiB, larger than the {_limit_text(limit)} limit")
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISFIFO(st.st_mode):
        flags |= os.O_NONBLOCK  # a FIFO without a writer must not block the open
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise ReadError(f"{path}: {_os_message(e)}") from None
    if flags & os.O_NONBLOCK:
        os.set_blocking(fd, True)  # with no writer a read now returns end of file at once
    with os.fdopen(fd, "rb", buffering=0) as fh:
        return read_stream(path, fh, limit, progress)


def _walk(root: str, suffixes: tuple[str, ...], out: _Collect) -> list[str]:
    """Regular files below ``root`` with a manifest suffix, sorted; bad entries become notes."""
    found: list[str] = []
    seen_dirs: set[tuple[int, int]] = set()

    def visit(directory: str) -> None:
        try:
            st = os.stat(directory)
            if (st.st_dev, st.st_ino) in seen_dirs:
                out.notes.append(f"{directory}: directory already visited (a symbolic link loop); skipped")
                return
            seen_dirs.add((st.st_dev, st.st_ino))
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as e:
            out.notes.append(f"{directory}: {_os_message(e)}; skipped")
            return
        for entry in entries:
            try:
                st = os.stat(entry.path)
            except OSError as e:
                out.notes.append(f"{entry.path}: {_os_message(e)}; skipped")
                continue
            if stat.S_ISDIR(st.st_mode):
                visit(entry.path)
            elif not entry.name.lower().endswith(suffixes):
                continue
            elif stat.S_ISREG(st.st_mode):
                found.append(entry.path)
            else:
                out.notes.append(f"{entry.path}: not a regular file; skipped")

    visit(root)
    return found


def expand(paths: Sequence[str], suffixes: tuple[str, ...], out: _Collect) -> Iterator[str]:
    """Named paths in order, directories expanded; ``-`` stands for stdin."""
    for p in paths:
        if p == "-":
            yield p
            continue
        try:
            is_dir = stat.S_ISDIR(os.stat(p).st_mode)
        except OSError as e:
            out.errors.append(f"{p}: {_os_message(e)}")
            continue
        if not is_dir:
            yield p
            continue
        found = _walk(p, suffixes, out)
        if not found:
            out.errors.append(f"{p}: directory contains no manifests ({', '.join('*' + s for s in suffixes)})")
        yield from found


def read_inputs(
    paths: Sequence[str],
    *,
    stdin: IO[Any] | None = None,
    suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    limit: int = MAX_INPUT_BYTES,
    progress: ProgressFn | None = None,
) -> Inputs:
    """Every path's text; a failed input is an error line, never an exception.

    ``-`` is read once even when named twice (the second read would see nothing).
    """
    out = _Collect()
    stdin_read = False
    for source in expand(paths, suffixes, out):
        try:
            if source == "-":
                if stdin_read:
                    out.errors.append("-: standard input given more than once")
                    continue
                stdin_read = True
                text = read_stdin(stdin, limit, progress)
            else:
                text = read_path(source, limit, progress)
        except ReadError as e:
            out.errors.append(str(e))
            continue
        out.texts.append(Text(source, text))
    return Inputs(tuple(out.texts), tuple(out.errors), tuple(out.notes))


def read_one(path: str, *, stdin: IO[Any] | None = None, limit: int = MAX_INPUT_BYTES) -> str:
    """One file (or ``-``) as text; raises :class:`ReadError` with the one-line message."""
    if path == "-":
        return read_stdin(stdin, limit)
    return read_path(path, limit)


def read_head(path: str, limit: int = MAX_INPUT_BYTES) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of a file another process wrote, and whether more followed.

    For a run's metrics channel: its writer is the workload, so a runaway size or a bad byte
    must cost the lines it spoiled, not the ones already written; decoding is the caller's.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
    except OSError as e:
        raise ReadError(f"{path}: {_os_message(e)}") from None
    os.set_blocking(fd, True)  # O_NONBLOCK only kept the open of a writerless FIFO from hanging
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise ReadError(f"{path}: is a directory, not a file")
    chunks: list[bytes] = []
    size = 0
    try:
        with os.fdopen(fd, "rb", buffering=0) as fh:
            while size <= limit and (chunk := fh.read(min(_CHUNK, limit + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
    except OSError as e:
        raise ReadError(f"{path}: cannot read: {_os_message(e)}") from None
    data = b"".join(chunks)
    return data[:limit], len(data) > limit
