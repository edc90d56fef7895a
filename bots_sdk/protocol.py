"""The referee ↔ bot line protocol: one JSON object per line, UTF-8, over the bot's stdin and
stdout (see docs/protocol.md). Bots write anything else to stderr.

Every line either side reads goes through :func:`decode`, which refuses, before parsing, what
could hurt the reader: a line over :data:`MAX_LINE` bytes, nesting deeper than
:data:`MAX_DEPTH`, bytes that are not UTF-8; and, while parsing, ``NaN``/``Infinity``, a
repeated key, a number too long to be a number. The referee then reads a bot's line as one of
the three messages a bot may send (:func:`decode_reply`): :class:`Ready`, :class:`Action`,
:class:`Error`, each with its fields' types checked. Anything else is a :class:`ProtocolError`.

>>> encode({"type": "ready", "name": "low"})
b'{"type":"ready","name":"low"}\\n'
>>> decode(b'{"type": "action", "id": 3, "action": "QS"}\\n')["action"]
'QS'
>>> decode_reply(b'{"type": "action", "id": 3, "action": ["2C", "3C", "4C"]}\\n')
Action(id=3, action=['2C', '3C', '4C'])
>>> decode(b"nonsense")
Traceback (most recent call last):
...
bots_sdk.protocol.ProtocolError: not a JSON object: 'nonsense'
>>> decode_reply(b'{"type": "action", "id": [3], "action": "QS"}')
Traceback (most recent call last):
...
bots_sdk.protocol.ProtocolError: 'action': 'id' must be an integer, not a list
>>> decode(b"[" * 20_000 + b"]" * 20_000)
Traceback (most recent call last):
...
bots_sdk.protocol.ProtocolError: nested deeper than 16 levels
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

#: Protocol version, sent in ``hello``.
VERSION = 1
#: The longest line either side accepts, in bytes (a view of a 7-player hand is ~3 kB).
MAX_LINE = 64 * 1024
#: The deepest nesting of arrays and objects either side accepts (an ``act`` with its view
#: nests 6 deep; a bot's reply 2). Checked before parsing: the parser recurses per level.
MAX_DEPTH = 16
#: The most digits a number may have (a seed is 20; Python refuses to convert past 4,300).
MAX_DIGITS = 32
#: The longest name a bot may announce in ``ready``, in characters.
MAX_NAME = 64
#: The most items of an ``action`` list (a pass; no hand holds more than a deck).
MAX_ACTION_ITEMS = 52
#: The longest text of an ``action`` or an action's item (a card is 2, ``subtract`` 8).
MAX_ACTION_CHARS = 16
#: Bot-supplied text (an error's detail, a fault's) is cut to this many characters.
MAX_TEXT = 200
#: The classes a bot may give up with in an ``error`` message.
ERROR_CLASSES = ("crash", "memory", "protocol")

#: The decision a referee asks for at each engine phase (``Phase.value``): ``none`` at the end
#: of a hand or a game, when a bot is told, not asked.
PHASE_DECISIONS = {
    "pass": "pass",
    "play": "play",
    "declare_trump": "trump",
    "moon_choice": "moon",
    "hand_over": "none",
    "game_over": "none",
}
#: The :class:`bots_sdk.Bot` method that answers each decision.
DECISION_METHODS = {
    "pass": "pass_cards",
    "play": "play",
    "trump": "declare_trump",
    "moon": "choose_moon",
}

_UNPRINTABLE = re.compile("[\x00\ud800-\udfff]")
_STRUCTURE = re.compile(rb'["\\[\]{}]')


def clean_text(text: str, limit: int | None = MAX_TEXT) -> str:
    """``text`` safe to store and show: NUL and lone surrogates (which no UTF-8 encoder
    accepts) replaced by U+FFFD, and cut to ``limit`` characters (None: no cut).

    >>> clean_text("bad\\x00byte \\udc80")
    'bad\\ufffdbyte \\ufffd'
    >>> clean_text("x" * 500, limit=8)
    'xxxxxxx…'
    """
    text = _UNPRINTABLE.sub("\ufffd", text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def as_sent(answer: Any) -> str | list[str]:
    """A bot's answer in the shape the protocol carries, as the bot's host sends it: a list
    of texts for a list (or tuple), a text for anything else (a Card prints as its text), each
    cut to the protocol's bounds. What it then means is the rules' to judge.

    >>> as_sent(("2C", "QS")), as_sent(7), as_sent("x" * 40)
    (['2C', 'QS'], '7', 'xxxxxxxxxxxxxxxx')
    """
    if isinstance(answer, (list, tuple)):
        return [str(card)[:MAX_ACTION_CHARS] for card in answer[:MAX_ACTION_ITEMS]]
    return str(answer)[:MAX_ACTION_CHARS]


class ProtocolError(ValueError):
    """A line that is not a well-formed protocol message. ``public`` says what was wrong in
    the referee's words; ``quote`` is what the line itself said, if it was quoted (the
    bot's words: only its owner reads them). ``str()`` is both.

    >>> exc = ProtocolError("not a JSON object", "'my hand: AS KS'")
    >>> str(exc), exc.public, exc.quote
    ("not a JSON object: 'my hand: AS KS'", 'not a JSON object', "'my hand: AS KS'")
    """

    def __init__(self, public: str, quote: str = "") -> None:
        super().__init__(f"{public}: {quote}" if quote else public)
        self.public = public
        self.quote = quote


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line (text that UTF-8 cannot hold, a lone surrogate, is escaped)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _snippet(line: bytes) -> str:
    return repr(clean_text(line[:80].decode(errors="replace")))


def nested_deeper_than(line: bytes, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` deep, brackets inside strings aside.
    A loop over the structural bytes only: it cannot recurse, whatever the line (the
    platform's request bodies are checked by it too: arena/api/parsers.py).

    >>> nested_deeper_than(b'[[{"a": "[[[["}]]', 3), nested_deeper_than(b"[" * 5, 4)
    (False, True)
    """
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    depth = 0
    in_string = False
    escaped = -1  # the index of a byte escaped by a backslash
    for match in _STRUCTURE.finditer(line):
        at = match.start()
        if at == escaped:
            continue
        byte = line[at]
        if in_string:
            if byte == 0x5C:  # backslash
                escaped = at + 1
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif byte in b"]}":
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not a JSON number")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ProtocolError(f"a number with more than {MAX_DIGITS} digits")
    return int(text)


def _real(text: str) -> float:
    if len(text) > 2 * MAX_DIGITS:
        raise ProtocolError(f"a number written with more than {2 * MAX_DIGITS} characters")
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError("too large a number", text)
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ProtocolError("a key appears twice", repr(clean_text(key, 40)))
        result[key] = value
    return result


def decode(line: bytes) -> dict[str, Any]:
    """One line as a message (a JSON object with a string ``type``), within the limits of
    the module docstring; :class:`ProtocolError` otherwise. Never raises anything else."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"line longer than {MAX_LINE} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"not UTF-8 (byte {exc.start})", _snippet(line)) from None
    if nested_deeper_than(line, MAX_DEPTH):
        raise ProtocolError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(
            text,
            parse_constant=_no_constant,
            parse_int=_integer,
            parse_float=_real,
            object_pairs_hook=_object,
        )
    except ProtocolError:
        raise
    except (ValueError, RecursionError):
        raise ProtocolError("not a JSON object", _snippet(line)) from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("not a JSON object with a 'type'", _snippet(line))
    return message


def decode_trusted(line: bytes) -> dict[str, Any]:
    """A line from the referee, as a bot's host reads it: by ``json`` alone. :func:`decode`'s
    guards (depth, digits, repeated keys) protect the referee from what a bot writes; the
    host's input is the referee's own, and they would cost every decision of every bot some
    70 µs of its clock. :class:`ProtocolError` if it is not a message.

    >>> decode_trusted(b'{"type": "bye"}')
    {'type': 'bye'}
    """
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("not a JSON object", _snippet(line)) from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("not a JSON object with a 'type'", _snippet(line))
    return message


def _kind_of(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _text(message: dict[str, Any], key: str, limit: int | None = None) -> str:
    value = message.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{message['type']!r}: {key!r} must be a string, not {_kind_of(value)}")
    if limit is not None and len(value) > limit:
        raise ProtocolError(f"{message['type']!r}: {key!r} longer than {limit} characters")
    return value


@dataclass(frozen=True)
class Ready:
    """``ready``: the bot is loaded; ``name`` is what it calls itself (cleaned)."""

    TYPE: ClassVar[str] = "ready"
    name: str

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Ready:
        return cls(clean_text(_text(message, "name", MAX_NAME), None))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "name": self.name}


@dataclass(frozen=True)
class Action:
    """``action``: the answer to the ``act`` numbered ``id``, a card, a suit letter, a moon
    choice, or a list of cards (a pass). Only the shape is checked here; the rules judge it."""

    TYPE: ClassVar[str] = "action"
    id: int
    action: str | list[str]

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Action:
        number = message.get("id")
        if not isinstance(number, int) or isinstance(number, bool):
            raise ProtocolError(f"'action': 'id' must be an integer, not {_kind_of(number)}")
        action = message.get("action")
        if isinstance(action, list):
            if len(action) > MAX_ACTION_ITEMS:
                raise ProtocolError(f"'action': more than {MAX_ACTION_ITEMS} items")
            for item in action:
                if not isinstance(item, str):
                    raise ProtocolError(f"'action': items must be strings, not {_kind_of(item)}")
                if len(item) > MAX_ACTION_CHARS:
                    raise ProtocolError(
                        f"'action': an item longer than {MAX_ACTION_CHARS} characters"
                    )
            return cls(number, list(action))
        return cls(number, _text(message, "action", MAX_ACTION_CHARS))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "id": self.id, "action": self.action}


@dataclass(frozen=True)
class Error:
    """``error``: the bot gives up; ``kind`` (the message's ``class``) is one of
    :data:`ERROR_CLASSES`, ``detail`` its explanation (cleaned, cut to :data:`MAX_TEXT`)."""

    TYPE: ClassVar[str] = "error"
    kind: str
    detail: str = ""

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Error:
        kind = _text(message, "class")
        if kind not in ERROR_CLASSES:
            raise ProtocolError(
                f"'error': 'class' must be one of {', '.join(ERROR_CLASSES)}",
                repr(clean_text(kind, 40)),
            )
        detail = _text(message, "detail") if "detail" in message else ""
        return cls(kind, clean_text(detail))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "class": self.kind, "detail": self.detail}


#: What a bot may send.
Reply = Ready | Action | Error
_REPLIES: dict[str, type[Ready] | type[Action] | type[Error]] = {
    cls.TYPE: cls for cls in (Ready, Action, Error)
}


def decode_reply(line: bytes) -> Reply:
    """A bot's line as the message it must be (fields typed, text cleaned, other keys
    ignored); :class:`ProtocolError` otherwise. Never raises anything else."""
    message = decode(line)
    cls = _REPLIES.get(message["type"])
    if cls is None:
        raise ProtocolError(
            "a bot sends 'ready', 'action' or 'error'", repr(clean_text(message["type"], 40))
        )
    return cls.from_dict(message)


def bot_seed(seed: int, game: int, seat: int) -> int:
    """The seed of a bot's RNG: a pure function of the match seed, game and seat.

    >>> bot_seed(1, 0, 2) == bot_seed(1, 0, 2) != bot_seed(1, 0, 3)
    True
    """
    digest = hashlib.sha256(f"bidel-bot/1:{seed}:{game}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
