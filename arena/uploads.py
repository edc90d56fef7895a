"""Checking an uploaded bot before anything is stored (pure; no Django).

A ``.py`` file (UTF-8, valid Python) or a ``.zip`` with ``bot.py`` at its root: capped in size,
in entries and in uncompressed size (a zip bomb is refused without being inflated past the
cap), with no absolute paths, no ``..``, no links.

>>> check_upload("bot.py", b"x = 1\\n")
'py'
>>> check_upload("bot.exe", b"MZ")
Traceback (most recent call last):
...
arena.uploads.UploadError: upload a .py file or a .zip with bot.py at its root, not 'bot.exe'
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import PurePosixPath
from typing import BinaryIO

MAX_UPLOAD = 1024 * 1024  # bytes, as uploaded
MAX_ENTRIES = 100
MAX_UNCOMPRESSED = 8 * 1024 * 1024


class UploadError(ValueError):
    """The upload is refused; the message says why and what to send instead."""


def read_upload(file: BinaryIO) -> bytes:
    """An uploaded file's bytes, never more than one past the limit (enough to refuse it).

    >>> len(read_upload(io.BytesIO(bytes(MAX_UPLOAD + 50)))) == MAX_UPLOAD + 1
    True
    """
    return file.read(MAX_UPLOAD + 1)


def _check_source(name: str, data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(f"{name} is not UTF-8 text") from None
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise UploadError(f"{name}: syntax error on line {exc.lineno}: {exc.msg}") from None


def check_upload(filename: str, data: bytes) -> str:
    """``"py"`` or ``"zip"`` for an acceptable upload; :class:`UploadError` otherwise."""
    if not data:
        raise UploadError("the file is empty")
    if len(data) > MAX_UPLOAD:
        raise UploadError(f"the file is {len(data)} bytes; the limit is {MAX_UPLOAD}")
    lower = filename.lower()
    if lower.endswith(".py"):
        _check_source(filename, data)
        return "py"
    if not lower.endswith(".zip"):
        raise UploadError(f"upload a .py file or a .zip with bot.py at its root, not {filename!r}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise UploadError(f"{filename} is not a readable zip archive") from None
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:
        raise UploadError(f"the zip holds {len(entries)} entries; the limit is {MAX_ENTRIES}")
    total = 0
    names = set()
    for entry in entries:
        path = PurePosixPath(entry.filename.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or entry.filename.startswith("/"):
            raise UploadError(f"the zip entry {entry.filename!r} points outside the archive")
        if stat.S_ISLNK(entry.external_attr >> 16):
            raise UploadError(f"the zip entry {entry.filename!r} is a link; links are refused")
        remaining = MAX_UNCOMPRESSED - total
        with archive.open(entry) as handle:
            content = handle.read(remaining + 1)  # never inflate past the cap
        total += len(content)
        if total > MAX_UNCOMPRESSED:
            raise UploadError(f"the zip unpacks to more than {MAX_UNCOMPRESSED} bytes")
        if entry.filename.endswith(".py"):
            _check_source(entry.filename, content)
        names.add(entry.filename)
    if "bot.py" not in names:
        raise UploadError("the zip has no bot.py at its root")
    return "zip"
