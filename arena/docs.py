"""The guides of ``docs/`` as web pages (``/docs/<name>/``): Markdown rendered by
markdown-it-py (CommonMark and tables, raw HTML off), mentions of another guide
(``docs/protocol.md``) turned into links to its page.

>>> "<h1>" in render("bots") and 'href="/docs/protocol/"' in render("bots")
True
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.utils.translation import gettext_lazy
from markdown_it import MarkdownIt

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"
#: The guides served, by page name: what a bot author and an operator read.
GUIDES: dict[str, tuple[Any, str]] = {
    "bots": (gettext_lazy("Writing a bot"), "bots.md"),
    "protocol": (gettext_lazy("The bot protocol"), "protocol.md"),
    "languages": (gettext_lazy("Bots in other languages"), "languages.md"),
    "learning": (gettext_lazy("Learning environments"), "learning.md"),
    "engine": (gettext_lazy("The engine and its rules"), "engine.md"),
    "security": (gettext_lazy("Security: what stops a hostile bot"), "security.md"),
    "operations": (gettext_lazy("Operations"), "operations.md"),
    "architecture": (gettext_lazy("Architecture"), "architecture.md"),
}
_FILE_TO_PAGE = {file: name for name, (_, file) in GUIDES.items()}
_MENTION = re.compile(r"(?:docs/)?\b(" + "|".join(map(re.escape, _FILE_TO_PAGE)) + r")\b")


def _link_mentions(html: str) -> str:
    """``docs/x.md`` in running text or as a link target becomes a link to x's page."""
    html = re.sub(
        r'href="(?:\.?/)?(?:docs/)?([a-z]+\.md)"',
        lambda m: f'href="/docs/{_FILE_TO_PAGE[m[1]]}/"' if m[1] in _FILE_TO_PAGE else m[0],
        html,
    )

    def inline(match: re.Match[str]) -> str:
        text = match[0]
        if text.startswith("<"):  # inside a tag or a link already
            return text
        return _MENTION.sub(lambda m: f'<a href="/docs/{_FILE_TO_PAGE[m[1]]}/">{m[0]}</a>', text)

    # only text outside tags and outside <a>…</a>
    return re.sub(r"<a\b.*?</a>|<[^>]+>|[^<]+", inline, html, flags=re.S)


@lru_cache(maxsize=len(GUIDES))
def _render(path: Path, mtime: float) -> str:
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    return _link_mentions(parser.render(path.read_text(encoding="utf-8")))


def render(name: str) -> str:
    """The HTML of guide ``name`` (KeyError when there is no such guide)."""
    path = DOCS_DIR / GUIDES[name][1]
    return _render(path, path.stat().st_mtime)
