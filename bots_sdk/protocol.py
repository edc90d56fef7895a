"""The referee ↔ bot line protocol: one JSON object per line, UTF-8, over the bot's stdin and
stdout (see docs/protocol.md). Bots write anything else to stderr.

>>> encode({"type": "ready", "name": "low"})
b'{"type":"ready","name":"low"}\\n'
>>> decode(b'{"type": "action", "id": 3, "action": "QS"}\\n')["action"]
'QS'
>>> decode(b"nonsense")
Traceback (most recent call last):
...
bots_sdk.protocol.ProtocolError: not a JSON object: 'nonsense'
"""

from __future__ import annotations

import json
from typing import Any

#: Protocol version, sent in ``hello``.
VERSION = 1
#: The longest line either side accepts, in bytes (a view of a 7-player hand is ~3 kB).
MAX_LINE = 64 * 1024


class ProtocolError(ValueError):
    """A line that is not a well-formed protocol message."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line as a message; :class:`ProtocolError` if it is not a JSON object."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"line longer than {MAX_LINE} bytes")
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError(f"not a JSON object: {line[:80].decode(errors='replace')!r}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(
            f"not a JSON object with a 'type': {line[:80].decode(errors='replace')!r}"
        )
    return message
