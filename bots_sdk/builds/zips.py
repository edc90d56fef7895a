"""A bot's zip read as hostile, one way for everyone who reads one: the platform checking an
upload (:func:`arena.uploads.check_upload`) and the referee unpacking the code it was sent
(:func:`bots_sdk.builds.build.unpack`). Each refusal is a :class:`ZipRefused` with a ``code``
and its values, which each reader words its own way (the platform in the person's language).

>>> import io, zipfile
>>> buffer = io.BytesIO()
>>> with zipfile.ZipFile(buffer, "w") as z:
...     z.writestr("bot/bot.py", "print(1)")
...     z.writestr("../evil.py", "x")
>>> [str(path) for _, path, _ in members(buffer.getvalue())]
Traceback (most recent call last):
...
bots_sdk.builds.zips.ZipRefused: the zip entry '../evil.py' points outside the archive
"""

from __future__ import annotations

import io
import lzma
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import PurePosixPath

#: The most files, and bytes unpacked, a bot's code may hold (as an upload).
MAX_FILES = 100
MAX_UNPACKED = 8 * 1024 * 1024
#: Folders deep, and characters long, a member's path may be.
MAX_DEPTH = 16
MAX_PATH = 255

#: What reading a zip may raise on a hostile one.
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,  # an unsupported compression or encryption
    RuntimeError,  # an encrypted member without a password
    EOFError,
    OSError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
)

#: Each refusal's words in English, by code (``%(name)s`` style, with the refusal's values).
MESSAGES = {
    "unreadable": "the code is not a readable zip archive",
    "entries": "the zip holds %(count)s entries; the limit is %(limit)s",
    "outside": "the zip entry %(name)s points outside the archive",
    "link": "the zip entry %(name)s is a link; links are refused",
    "deep": "the zip entry %(name)s… is too deep or too long a path; the limits are "
    "%(depth)s folders and %(length)s characters",
    "twice": "the zip holds %(name)s twice",
    "entry": "the zip entry %(name)s cannot be read (%(why)s)",
    "size": "the zip unpacks to more than %(limit)s bytes",
}


class ZipRefused(ValueError):
    """Why a zip is refused: ``code`` (a key of :data:`MESSAGES`) and its ``values``."""

    def __init__(self, code: str, **values: object) -> None:
        super().__init__(MESSAGES[code] % values)
        self.code = code
        self.values = values


def members(code: bytes) -> Iterator[tuple[zipfile.ZipInfo, PurePosixPath, bytes]]:
    """Each member of the zip ``code`` in order: its entry, its path (``/`` separated) and its
    bytes (b"" for a folder), checked before it is given: a readable archive of at most
    :data:`MAX_FILES` entries, no absolute path and no ``..``, no link, no path deeper than
    :data:`MAX_DEPTH` or longer than :data:`MAX_PATH`, no name twice, and at most
    :data:`MAX_UNPACKED` bytes unpacked in all (nothing is inflated past that). Raises
    :class:`ZipRefused` at the first fault."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(code))
        entries = archive.infolist()
    except ZIP_ERRORS:
        raise ZipRefused("unreadable") from None
    if len(entries) > MAX_FILES:
        raise ZipRefused("entries", count=len(entries), limit=MAX_FILES)
    total = 0
    names: set[str] = set()
    for entry in entries:
        name = entry.filename
        path = PurePosixPath(name.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or name.startswith("/"):
            raise ZipRefused("outside", name=repr(name))
        if stat.S_ISLNK(entry.external_attr >> 16):
            raise ZipRefused("link", name=repr(name))
        if len(name) > MAX_PATH or len(path.parts) > MAX_DEPTH:
            raise ZipRefused("deep", name=repr(name[:40]), depth=MAX_DEPTH, length=MAX_PATH)
        if name in names:
            raise ZipRefused("twice", name=repr(name))
        names.add(name)
        try:
            with archive.open(entry) as handle:
                content = handle.read(MAX_UNPACKED - total + 1)  # never inflate past the cap
        except ZIP_ERRORS as exc:
            raise ZipRefused("entry", name=repr(name), why=type(exc).__name__) from None
        total += len(content)
        if total > MAX_UNPACKED:
            raise ZipRefused("size", limit=MAX_UNPACKED)
        yield entry, path, content
