"""The API's pages (a module of its own: DRF imports it while it loads its views)."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import exceptions, pagination
from rest_framework.request import Request
from rest_framework.response import Response

from arena.paging import COUNT_CAP, CappedPaginator


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


class CappedPagination(PageNumberPagination):
    """Pages of a list that may hold millions (matches): ``count`` is exact up to
    :data:`arena.paging.COUNT_CAP` rows and ``count_capped`` says when there are more; the
    pages go on past it (``next`` until the last)."""

    django_paginator_class = CappedPaginator

    def get_paginated_response(self, data: Any) -> Response:
        response = super().get_paginated_response(data)
        response.data["count_capped"] = bool(self.page.paginator.capped)
        return response

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)
        paged["properties"]["count"]["description"] = (
            f"rows, counted up to {COUNT_CAP} (see count_capped)"
        )
        paged["properties"]["count_capped"] = {
            "type": "boolean",
            "description": f"more than {COUNT_CAP} rows: count stops there; the pages go on",
        }
        return paged
