"""What an id is, everywhere: a row's id in a page's path or query, the API's, ``bidel``'s
arguments. One to 18 ASCII digits, the first not 0 (within a signed 64-bit column). Not
``str.isdigit``: ``²`` and ``٣`` are digits to it, and ``int("²")`` raises."""

from __future__ import annotations

import re

#: An id as a regular expression (for a URL pattern or a validator).
ID_PATTERN = r"[1-9][0-9]{0,17}"
_ID = re.compile(rf"\A{ID_PATTERN}\Z")


def parse_id(text: object) -> int | None:
    """``text`` as an id, or None when it is not one.

    >>> parse_id("42"), parse_id("²"), parse_id("٣"), parse_id("042"), parse_id("1" * 19)
    (42, None, None, None, None)
    >>> parse_id(" 7"), parse_id("+7"), parse_id("7\\n"), parse_id(None), parse_id(7)
    (None, None, None, None, None)
    """
    if isinstance(text, str) and _ID.match(text):
        return int(text)
    return None
