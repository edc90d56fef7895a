"""Template helpers for the two languages: numbers in Persian digits on Persian pages,
indexes counted from 1 as people count them, and a version's label.

>>> from django.utils import translation
>>> with translation.override("fa"):
...     digits(1555), digits("12.5"), digits(None), one_based(0), version(12)
('۱۵۵۵', '۱۲٫۵', '', '۱', 'نسخهٔ ۱۲')
>>> digits(1555), one_based(0), one_based(None), version(12)
('1555', '1', '', 'v12')
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import get_language, gettext

register = template.Library()

_PERSIAN = str.maketrans("0123456789.", "۰۱۲۳۴۵۶۷۸۹٫")


@register.filter
def digits(value: Any) -> str:
    """``value`` as text, its digits Persian when the page is Persian (numbers only: card
    names, ids in links and code stay as they are, since they are not passed through it)."""
    if value is None:
        return ""
    text = str(value)
    return text.translate(_PERSIAN) if (get_language() or "").startswith("fa") else text


@register.filter
def one_based(index: int | None) -> str:
    """A 0-based index (a seat, a hand, a place, a table: what the models, the records and the
    API store) as a person counts it, from 1, in the page's digits."""
    return "" if index is None else digits(index + 1)


@register.filter
def version(number: int) -> str:
    """A bot version's label: "v3"; in Persian the word, "نسخهٔ ۳", since a Latin v before
    Persian digits reads as one more digit (v۱ as ۷۱)."""
    return gettext("v%(number)s") % {"number": digits(number)}


@register.filter
def edge(seat: Any) -> str:
    """How many fewer points a match's seat took than its cards were worth
    (``expected - score``: above 0, it played better than its luck), signed, to a tenth.

    >>> from types import SimpleNamespace
    >>> edge(SimpleNamespace(expected=8.25, score=5)), edge(SimpleNamespace(expected=2.0, score=6))
    ('+3.2', '−4.0')
    """
    value = round(float(seat.expected) - float(seat.score), 1)
    return f"+{value:.1f}" if value > 0 else f"−{abs(value):.1f}" if value < 0 else "0.0"
