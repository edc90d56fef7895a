"""Template helpers for the two languages: numbers in Persian digits on Persian pages.

>>> from django.utils import translation
>>> with translation.override("fa"):
...     digits(1555), digits("12.5"), digits(None)
('۱۵۵۵', '۱۲٫۵', '')
>>> digits(1555)
'1555'
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import get_language

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
