"""The API's pages (a module of its own: DRF imports it while it loads its views)."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import exceptions, pagination
from rest_framework.request import Request


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF's pages, with a malformed ``?page=`` a 400 saying so (a page past the end stays
    DRF's 404)."""

    def get_page_number(self, request: Request, paginator: Any) -> Any:
        value = request.query_params.get(self.page_query_param)
        if value not in (None, "", "last") and not re.fullmatch(r"[1-9][0-9]{0,8}", value):
            raise exceptions.ValidationError(
                {self.page_query_param: "must be a page number: a whole number from 1, or last"}
            )
        return super().get_page_number(request, paginator)
