"""The API's JSON renderer: DRF's, except that a text the client sent back in an error message
(a lone surrogate in a rules spec, say) can never make the answer a 500."""

from __future__ import annotations

from typing import Any

from rest_framework import renderers

from arena.text import clean_json


class JSONRenderer(renderers.JSONRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:  # a surrogate: not UTF-8; U+FFFD stands in for it
            return super().render(clean_json(data), accepted_media_type, renderer_context)
