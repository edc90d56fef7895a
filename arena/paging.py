"""Pages of long lists whose cost is what they show, not what is stored: the count is exact up
to :data:`COUNT_CAP` rows (past it, the list says "more than"), and the pages go on past the
count, a page asking for one row more than it shows to know whether another follows."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.core.paginator import EmptyPage, Page, Paginator

#: Rows counted at most: counting a million matches to print "page 1 of 20,000" costs more
#: than the page itself.
COUNT_CAP = 1000


class CappedPage(Page):
    """A page that knows whether another follows from the row it read past its end."""

    def __init__(self, object_list: Any, number: int, paginator: Paginator, more: bool) -> None:
        super().__init__(object_list, number, paginator)
        self.more = more

    def has_next(self) -> bool:
        return self.more


class CappedPaginator(Paginator):
    """A Django paginator whose ``count`` stops at :data:`COUNT_CAP` (``capped`` says it did)
    and whose pages go on past it.

    >>> pages = CappedPaginator(list(range(2500)), 1000)
    >>> pages.count, pages.capped, pages.num_pages
    (1000, True, 1)
    >>> page = pages.page(3)
    >>> (page[0], len(page), page.has_next()), pages.page(2).has_next()
    ((2000, 500, False), True)
    >>> pages.page(4)
    Traceback (most recent call last):
    ...
    django.core.paginator.EmptyPage: That page contains no results
    """

    cap = COUNT_CAP

    @cached_property
    def _counted(self) -> int:
        head = self.object_list[: self.cap + 1]
        return head.count() if hasattr(head, "count") and not isinstance(head, list) else len(head)

    @cached_property
    def count(self) -> int:  # type: ignore[override]
        return min(self._counted, self.cap)

    @property
    def capped(self) -> bool:
        return self._counted > self.cap

    def validate_number(self, number: Any) -> int:
        if not self.capped:
            return int(super().validate_number(number))
        try:  # past the count: any page from 1 (an empty one is the end)
            return max(1, int(number))
        except (TypeError, ValueError):
            return int(super().validate_number(number))

    def page(self, number: Any) -> CappedPage:
        """The page ``number``; past the end, :class:`EmptyPage`, as any paginator's (the
        API's 404; a page of the site shows the last counted page instead)."""
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page + 1])
        if not rows and number > 1:
            raise EmptyPage("That page contains no results")
        return CappedPage(rows[: self.per_page], number, self, len(rows) > self.per_page)
