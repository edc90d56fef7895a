"""Text a bot controls (its stderr, its fault details, its name, its exceptions) made safe to
store (pure; no Django).

PostgreSQL refuses U+0000 in ``text`` and in ``jsonb``, and a surrogate code point (U+D800 to
U+DFFF, what ``surrogateescape`` decoding leaves behind) cannot be encoded as UTF-8: either
would make the write fail (a result lost, a version stuck in ``validating``) or, on SQLite,
be stored and break every page that shows it. Both become U+FFFD, the replacement character;
a surrogate pair that was split into two code points is joined back into its character.

>>> clean_text("ok\\x00\\ud800 fine")
'ok\\ufffd\\ufffd fine'
>>> clean_text("\\ud83d\\ude00")  # a pair: the character it encodes
'😀'
>>> clean_json({"bot\\x00": ["a\\udcff", 1, None, {"k": ("x\\x00",)}]})
{'bot\\ufffd': ['a\\ufffd', 1, None, {'k': ['x\\ufffd']}]}
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def clean_text(value: str) -> str:
    """``value`` with U+0000 and unpaired surrogates replaced by U+FFFD (pairs joined)."""
    if _UNSAFE.search(value) is None:
        return value  # the usual case: nothing to copy
    # UTF-16 round trip: a high+low pair becomes its character, a lone half U+FFFD.
    joined = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\x00", REPLACEMENT)


def clean_json(value: Any) -> Any:
    """A JSON-like value with :func:`clean_text` applied to every string, keys included
    (tuples become lists, as JSON would make them)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value
