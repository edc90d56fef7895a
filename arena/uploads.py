"""Checking an uploaded bot before anything is stored (pure; no Django).

A ``.py`` file (UTF-8, valid Python) or a ``.zip`` with ``bot.py`` at its root, or with a
manifest (``bidel.toml`` or ``bot.json``, :mod:`bots_sdk.builds.languages`) naming the bot's
language (a bot in another language is then built in the sandbox by its validation): capped in size,
in entries and in uncompressed size (a zip bomb is refused without being inflated past the
cap), with no absolute paths, no ``..``, no links, no member too deep or too long to unpack.

The syntax of every Python file is checked by a child interpreter under a memory and a CPU
limit: a source written to exhaust the parser (``"(" * 100000``, a million chained ``+1``)
costs that child, never the web server, and is refused with a reason like any other.

>>> check_upload("bot.py", b"x = 1\\n")
'py'
>>> check_upload("bot.exe", b"MZ")
Traceback (most recent call last):
...
arena.uploads.UploadError: upload a .py file or a .zip with bot.py at its root, not 'bot.exe'
>>> import io, zipfile
>>> buffer = io.BytesIO()
>>> with zipfile.ZipFile(buffer, "w") as z:
...     z.writestr("bidel.toml", 'language = "rust"')
...     z.writestr("src/main.rs", "fn main() {}")
>>> check_upload("my_bot.zip", buffer.getvalue())
'zip'
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, BinaryIO

from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext, gettext_noop

from bots_sdk.builds.build import MAX_PACKED
from bots_sdk.builds.languages import MANIFESTS, PYTHON, ManifestError, read_manifest, zip_root
from bots_sdk.builds.zips import MAX_FILES, MAX_UNPACKED, ZipRefused, members

#: What a version's code may weigh as uploaded, hold, and unpack to: the SDK's caps, which
#: ``bidel pack`` and the runner's unpacking hold too (one definition, bots_sdk.builds.build).
MAX_UPLOAD = MAX_PACKED
MAX_ENTRIES = MAX_FILES
MAX_UNCOMPRESSED = MAX_UNPACKED
#: Bytes of one Python file: as much as a whole ``.py`` upload may be.
MAX_SOURCE = MAX_UPLOAD
#: The syntax checker's limits: address space (bytes) and CPU seconds. A hostile 1 MiB source
#: makes ``compile`` build a ~400 MB tree; this stops it at the cap.
CHECK_MEMORY = 512 * 1024 * 1024
CHECK_SECONDS = 10


#: Run by ``python -I -S``: the sources come as JSON on stdin; the first problem goes to
#: stdout as JSON (nothing when all compile).
_CHECKER = f"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({CHECK_MEMORY}, {CHECK_MEMORY}))
resource.setrlimit(resource.RLIMIT_CPU, ({CHECK_SECONDS}, {CHECK_SECONDS}))
for name, text in json.load(sys.stdin):
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        print(json.dumps({{"name": name, "line": exc.lineno, "msg": exc.msg}}))
        break
    except (RecursionError, MemoryError) as exc:
        print(json.dumps({{"name": name, "nested": type(exc).__name__}}))
        break
    except ValueError as exc:
        print(json.dumps({{"name": name, "msg": str(exc)}}))
        break
"""


class UploadError(ValueError):
    """The upload is refused; the message says why and what to send instead."""


def _say(message: str, **values: Any) -> str:
    """``message`` in the request's language (the pages'; the API's is English), filled in."""
    return gettext(message) % values if values else gettext(message)


def read_upload(file: BinaryIO) -> bytes:
    """An uploaded file's bytes, never more than one past the limit (enough to refuse it).

    >>> import io
    >>> len(read_upload(io.BytesIO(bytes(MAX_UPLOAD + 50)))) == MAX_UPLOAD + 1
    True
    """
    return file.read(MAX_UPLOAD + 1)


def _decoded(name: str, data: bytes) -> str:
    if len(data) > MAX_SOURCE:
        raise UploadError(
            _say(
                "%(name)s is %(size)s bytes of Python; the limit is %(limit)s",
                name=name,
                size=len(data),
                limit=MAX_SOURCE,
            )
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(_say("%(name)s is not UTF-8 text", name=name)) from None


def check_sources(sources: list[tuple[str, str]]) -> None:
    """Compile every ``(name, text)`` in a child interpreter with limits; the first that does
    not compile is refused, saying why.

    >>> check_sources([("bot.py", "x = (" * 1000 + "1" + ")" * 1000)])
    Traceback (most recent call last):
    ...
    arena.uploads.UploadError: bot.py: syntax error on line 1: too many nested parentheses
    >>> check_sources([("bot.py", "x = 1" + " + 1" * 300_000)])
    Traceback (most recent call last):
    ...
    arena.uploads.UploadError: bot.py is nested too deeply to compile (RecursionError)
    """
    if not sources:
        return
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHECKER],
            input=json.dumps(sources),
            capture_output=True,
            text=True,
            timeout=CHECK_SECONDS * 2,
            env={},
        )
    except subprocess.TimeoutExpired:
        raise UploadError(
            _say("the code took more than %(seconds)s s to check", seconds=CHECK_SECONDS * 2)
        ) from None
    if done.returncode != 0:  # killed at a limit (CPU, memory) before it could say why
        raise UploadError(_say("the code is too large or too deeply nested to check"))
    if not done.stdout.strip():
        return
    problem = json.loads(done.stdout)
    name = problem["name"]
    if "nested" in problem:
        raise UploadError(
            _say(
                "%(name)s is nested too deeply to compile (%(why)s)",
                name=name,
                why=problem["nested"],
            )
        )
    if problem.get("line"):
        raise UploadError(
            _say(
                "%(name)s: syntax error on line %(line)s: %(why)s",
                name=name,
                line=problem["line"],
                why=problem["msg"],
            )
        )
    raise UploadError(f"{name}: {problem['msg']}")


#: The words of each zip refusal (:mod:`bots_sdk.builds.zips`), in the person's language.
_REFUSALS = {
    "unreadable": gettext_noop("%(name)s is not a readable zip archive"),
    "entries": gettext_noop("the zip holds %(count)s entries; the limit is %(limit)s"),
    "outside": gettext_noop("the zip entry %(name)s points outside the archive"),
    "link": gettext_noop("the zip entry %(name)s is a link; links are refused"),
    "deep": gettext_noop(
        "the zip entry %(name)s… is too deep or too long a path; the limits are "
        "%(depth)s folders and %(length)s characters"
    ),
    "twice": gettext_noop("the zip holds %(name)s twice"),
    "entry": gettext_noop("the zip entry %(name)s cannot be read (%(why)s)"),
    "size": gettext_noop("the zip unpacks to more than %(limit)s bytes"),
}


def check_upload(filename: str, data: bytes) -> str:
    """``"py"`` or ``"zip"`` for an acceptable upload; :class:`UploadError` otherwise."""
    if not data:
        raise UploadError(_say("the file is empty"))
    if len(data) > MAX_UPLOAD:
        raise UploadError(
            _say(
                "the file is %(size)s bytes; the limit is %(limit)s",
                size=len(data),
                limit=MAX_UPLOAD,
            )
        )
    lower = filename.lower()
    if lower.endswith(".py"):
        check_sources([(filename, _decoded(filename, data))])
        return "py"
    if not lower.endswith(".zip"):
        raise UploadError(
            _say(
                "upload a .py file or a .zip with bot.py at its root, not %(name)s",
                name=repr(filename),
            )
        )
    names = set()
    sources = []
    manifests: dict[str, bytes] = {}
    try:
        for entry, path, content in members(data):
            if entry.filename.endswith(".py"):
                sources.append((entry.filename, _decoded(entry.filename, content)))
            if path.name in MANIFESTS:
                manifests[entry.filename] = content
            names.add(entry.filename)
    except ZipRefused as exc:
        values = {**exc.values, "name": repr(filename)} if exc.code == "unreadable" else exc.values
        raise UploadError(_say(_REFUSALS[exc.code], **values)) from None
    root = zip_root(list(names))
    found = {name: manifests[root + name] for name in MANIFESTS if root + name in manifests}
    try:
        manifest = read_manifest(found) or PYTHON
    except ManifestError as exc:
        raise UploadError(str(exc)) from None
    if manifest.compiled:
        return "zip"  # its build, in the sandbox, is its check (the validation's log)
    if "bot.py" not in names:
        raise UploadError(_say("the zip has no bot.py at its root"))
    check_sources(sources)
    return "zip"


#: A multipart request may carry the upload and this much besides (boundaries, other fields).
MULTIPART_SLACK = 64 * 1024


class UploadTooLarge(MultiPartParserError, RequestDataTooBig):
    """A request body past the upload limit: refused while it streams in, before it is stored
    (a 400 from the API, whose parser knows MultiPartParserError, and from the pages, as
    Django answers any SuspiciousOperation)."""


class CappedUploadHandler(FileUploadHandler):
    """First of ``FILE_UPLOAD_HANDLERS``: stops a multipart body past :data:`MAX_UPLOAD` (and
    :data:`MULTIPART_SLACK`) at once — by its declared length, or counting what arrives —
    rather than let Django stream gigabytes to a temporary file that the upload check would
    then refuse."""

    def handle_raw_input(
        self, input_data: Any, META: Any, content_length: int, boundary: Any, encoding: Any = None
    ) -> None:
        if content_length > MAX_UPLOAD + MULTIPART_SLACK:
            raise UploadTooLarge(_too_large(content_length))
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received = getattr(self, "received", 0) + len(raw_data)
        if self.received > MAX_UPLOAD:
            raise UploadTooLarge(_too_large(self.received, at_least=True))
        return raw_data  # the next handler stores it

    def file_complete(self, file_size: int) -> None:
        return None


def _too_large(size: int, at_least: bool = False) -> str:
    return (
        f"the upload is {'more than ' if at_least else ''}{size} bytes; the limit is "
        f"{MAX_UPLOAD} bytes of code"
    )
