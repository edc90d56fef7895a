"""The guides of ``docs/`` as web pages (``/docs/<name>/``, listed at ``/docs/``): Markdown
rendered by markdown-it-py (CommonMark and tables, raw HTML off), each heading with the id
GitHub gives it (so ``protocol.md#conformance-bidel-check`` lands on its section), mentions of
another guide (``docs/protocol.md``, with or without a ``#section``) turned into links to its
page.

>>> "<h1" in render("bots") and 'href="/docs/protocol/"' in render("bots")
True
>>> 'href="/docs/protocol/#conformance-bidel-check"' in render("languages")
True
>>> 'id="conformance-bidel-check"' in render("protocol")
True
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.utils.translation import gettext_lazy
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin

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
#: What each guide is for, one line under its title in the index (``/docs/``).
SUMMARIES: dict[str, Any] = {
    "bots": gettext_lazy("Your first bot in Python, trying it locally, and uploading it."),
    "protocol": gettext_lazy("The messages between the referee and a bot, for any language."),
    "languages": gettext_lazy("The kits for bots written in other languages than Python."),
    "learning": gettext_lazy("Training a bot: the engine as a learning environment."),
    "engine": gettext_lazy("The rules, their presets and options, and the game records."),
    "security": gettext_lazy("The sandbox and what it stops a hostile bot from doing."),
    "operations": gettext_lazy("Running Bidel: the services, runner hosts, backups."),
    "architecture": gettext_lazy("How Bidel is built: the page a newcomer reads first."),
}
_FILE_TO_PAGE = {file: name for name, (_, file) in GUIDES.items()}
_MENTION = re.compile(r"(?:docs/)?\b(" + "|".join(map(re.escape, _FILE_TO_PAGE)) + r")\b")


def _link_mentions(html: str) -> str:
    """``docs/x.md`` in running text or as a link target becomes a link to x's page."""
    html = re.sub(
        r'href="(?:\.?/)?(?:docs/)?([a-z]+\.md)(#[^"]*)?"',
        lambda m: (
            f'href="/docs/{_FILE_TO_PAGE[m[1]]}/{m[2] or ""}"' if m[1] in _FILE_TO_PAGE else m[0]
        ),
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
    parser = (
        MarkdownIt("commonmark", {"html": False})
        .enable("table")
        .use(anchors_plugin, min_level=1, max_level=6)
    )
    return _link_mentions(parser.render(path.read_text(encoding="utf-8")))


def render(name: str) -> str:
    """The HTML of guide ``name`` (KeyError when there is no such guide)."""
    path = DOCS_DIR / GUIDES[name][1]
    return _render(path, path.stat().st_mtime)
