"""One parser policy for every API view (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]`` is
:data:`PARSER_CLASSES`; a view that sets its own parsers sets these): a bad body is a 4xx in
the API's error shape, never a 500, whatever its media type. (The API speaks English: these
messages are not translated.)

- JSON (:func:`decode_json`, for any JSON the platform takes from a client): at most
  :data:`MAX_JSON_BYTES` (413 past it), UTF-8, nested at most :data:`MAX_JSON_DEPTH` deep
  (checked before parsing: the standard decoder recurses once per level, and a body of ``[``
  100,000 deep raised RecursionError through DRF's parser), no ``NaN``/``Infinity``, no
  number too large for a float or too long for an int (400).
- Forms: the same byte bound (an API form carries a few short fields), and Django's field
  count (``DATA_UPLOAD_MAX_NUMBER_FIELDS``) as a 400, not an HTML page.
- Multipart: Django's parser under the upload handlers of ``FILE_UPLOAD_HANDLERS`` (the upload
  cap of :mod:`arena.uploads`); whatever it refuses is a 400.

The whole request body is capped before Django reads it, by the server
(``hearts_platform/body_limit.py``, ``REQUEST_BODY_MAX_BYTES``): these are the bounds within
it.

>>> decode_json(b'{"seats": ["low", 2], "rules": {"preset": "standard"}}')
{'seats': ['low', 2], 'rules': {'preset': 'standard'}}
>>> decode_json(b"[" * 20_000 + b"]" * 20_000)
Traceback (most recent call last):
...
arena.api.parsers.BodyError: the JSON nests deeper than 16 levels
>>> decode_json(b'{"hands": 1e999}')
Traceback (most recent call last):
...
arena.api.parsers.BodyError: the JSON is not valid: 1e999 is too large a number
"""

from __future__ import annotations

import codecs
import json
import math
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import QueryDict
from django.http.multipartparser import MultiPartParserError
from rest_framework import exceptions, parsers, status

from bots_sdk.protocol import MAX_DEPTH, nested_deeper_than

#: Bytes of a JSON (or form) body to the API: the largest the serializers take is a
#: tournament of 64 bots, some 5 KB; a bot's description is at most 2,000 characters.
MAX_JSON_BYTES = 64 * 1024
#: Levels of arrays and objects a JSON body may nest: a challenge's ``rules`` object nests 2
#: deep; the same bound as the bots' protocol lines (bots_sdk/protocol.py).
MAX_JSON_DEPTH = MAX_DEPTH


class BodyError(ValueError):
    """A body refused before any view saw it; the message says which bound or rule."""


class BodyTooLarge(BodyError):
    """A body past its byte bound."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BodyError(f"the JSON is not valid: {text[:40]} is too large a number")
    return value


def _no_constant(name: str) -> Any:
    raise BodyError(f"the JSON is not valid: {name} is not a JSON number")


def decode_json(
    data: bytes | str, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """``data`` (UTF-8 bytes, or text) as JSON within the bounds; :class:`BodyError` (with
    :class:`BodyTooLarge` for the size) otherwise. It raises nothing else, whatever ``data``.

    >>> decode_json(b"x" * 70_000)
    Traceback (most recent call last):
    ...
    arena.api.parsers.BodyTooLarge: the body is more than 65536 bytes; the limit is 65536 bytes
    >>> decode_json(b'"caf\\xe9"')
    Traceback (most recent call last):
    ...
    arena.api.parsers.BodyError: the body is not UTF-8 (byte 4)
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")  # a lone surrogate fails as UTF-8 below
    if len(data) > max_bytes:
        raise BodyTooLarge(_too_large(max_bytes))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"the body is not UTF-8 (byte {exc.start})") from None
    if nested_deeper_than(data, max_depth):
        raise BodyError(f"the JSON nests deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except BodyError:
        raise
    except (ValueError, RecursionError) as exc:  # ValueError: also an int of 4,300+ digits
        raise BodyError(f"the JSON is not valid: {exc}") from None


def _too_large(limit: int) -> str:
    return f"the body is more than {limit} bytes; the limit is {limit} bytes"


class PayloadTooLarge(exceptions.APIException):
    """413 in the API's error shape."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the request body is too large"
    default_code = "too_large"


def body_refusal(exc: Exception) -> exceptions.APIException | None:
    """The API's answer to Django's own refusals of a body, which DRF meets outside the
    parsers (it reads ``request.body`` for the JSON and form parsers, and Django refuses one
    past ``DATA_UPLOAD_MAX_MEMORY_SIZE``): 413 for the size, 400 for too many fields or files;
    None for any other exception (the API's exception handler asks).

    >>> body_refusal(RequestDataTooBig("too big")).status_code, body_refusal(KeyError("x"))
    (413, None)
    """
    if isinstance(exc, RequestDataTooBig):
        return PayloadTooLarge(_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or MAX_JSON_BYTES))
    if isinstance(exc, (TooManyFieldsSent, TooManyFilesSent)):
        return exceptions.ParseError(str(exc))
    return None


def _read(stream: Any, limit: int) -> bytes:
    """At most ``limit`` bytes and one more (so that more is known), never the whole stream."""
    if stream is None:
        return b""
    try:
        return bytes(stream.read(limit + 1))
    except (OSError, SuspiciousOperation) as exc:  # a client gone, or Django's own bounds
        raise exceptions.ParseError(str(exc)) from None


def _utf8_only(parser_context: dict[str, Any] | None) -> None:
    """JSON is UTF-8 (RFC 8259); a body naming another charset is refused, not transcoded
    (a codec such as ``bz2_codec`` would inflate it past every bound)."""
    encoding = (parser_context or {}).get("encoding") or "utf-8"
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    if not utf8:
        raise exceptions.ParseError(f"JSON is read as UTF-8 only, not {encoding[:40]!r}")


class JSONParser(parsers.JSONParser):
    """JSON within :func:`decode_json`'s bounds: 413 past the size, 400 for anything else."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        _utf8_only(parser_context)
        try:
            return decode_json(_read(stream, MAX_JSON_BYTES))
        except BodyTooLarge as exc:
            raise PayloadTooLarge(str(exc)) from None
        except BodyError as exc:
            raise exceptions.ParseError(str(exc)) from None


class FormParser(parsers.FormParser):
    """A URL-encoded form within :data:`MAX_JSON_BYTES` and Django's field count."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = _read(stream, MAX_JSON_BYTES)
        if len(data) > MAX_JSON_BYTES:
            raise PayloadTooLarge(_too_large(MAX_JSON_BYTES))
        encoding = parsers.get_encoding(parser_context or {})
        try:
            return QueryDict(data, encoding=encoding)
        except (SuspiciousOperation, ValueError) as exc:  # too many fields; a bad charset
            raise exceptions.ParseError(str(exc)) from None


class MultiPartParser(parsers.MultiPartParser):
    """Django's multipart parser; what it refuses (a broken body, too many fields or files,
    an upload past the cap: :class:`arena.uploads.UploadTooLarge`) is a 400."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except exceptions.APIException:
            raise  # (DRF's own: a MultiPartParserError, arena.uploads.UploadTooLarge among them)
        except SuspiciousOperation as exc:
            refused = body_refusal(exc)
            raise refused or exceptions.ParseError(str(exc)) from None
        except (MultiPartParserError, OSError, ValueError) as exc:
            raise exceptions.ParseError(f"Multipart form parse error - {exc}") from None


#: The policy: what every API view parses with.
PARSER_CLASSES = [JSONParser, FormParser, MultiPartParser]
