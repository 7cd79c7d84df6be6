"""The docs spider's ``max_pages`` budget: the page requests it may have out, and the
links held back until pages that came to nothing leave room for them."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class PageBudget:
    """``max_pages`` bounds the page downloads: a page request is made only while the pages
    recorded plus the page requests still out are fewer. Links past it are held; at idle,
    those the pages that came to nothing (a 404, a failure) left room for are released, so
    failed pages do not shrink the crawl. ``None``: no bound.

    >>> budget = PageBudget(1)
    >>> budget.admit("http://a/", 0), budget.admit("http://a/x", 1, "http://a/")
    (True, False)
    >>> budget.came_to_nothing(); budget.idle(); budget.waiting()
    True
    >>> [(url, budget.admit(url, depth, linking)) for url, depth, linking in budget.release()]
    [('http://a/x', True)]
    >>> budget.counted(); budget.spent(), budget.waiting()
    (True, False)
    """

    def __init__(self, max_pages: int | None, count_held: Callable[[int], None] = lambda change: None) -> None:
        self.max_pages = max_pages
        self.count_held = count_held
        #: the pages recorded (items)
        self.pages = 0
        #: page requests made and not yet counted in ``pages``
        self.page_requests = 0
        #: the URLs of the pages requested (each counts once)
        self.made: set[str] = set()
        #: URL -> depth of the pages not requested, in the order found (and the page
        #: that linked it first, given to its request when it is made)
        #: (an OrderedDict: the first taken out in O(1); a dict's first key after many
        #: taken from its front is found past their empty slots, 5 s for 80,000 links)
        self.held: OrderedDict[str, tuple[int, str | None]] = OrderedDict()

    def spent(self) -> bool:
        """Whether ``max_pages`` pages were recorded."""
        return self.max_pages is not None and self.pages >= self.max_pages

    def admit(self, url: str, depth: int, linking: str | None = None) -> bool:
        """Whether the page ``url``, found at ``depth``, may be requested now: then its
        request is out until it comes to a page or to nothing. Else it is held (at the
        shallowest depth found, with the first page that linked it)."""
        if self.max_pages is None or url in self.made:
            return True
        if self.pages + self.page_requests >= self.max_pages:
            if url not in self.held:
                self.count_held(1)
            was_depth, was_linking = self.held.get(url, (depth, None))
            self.held[url] = (min(depth, was_depth), was_linking or linking)
            return False
        self.made.add(url)
        self.page_requests += 1
        if self.held.pop(url, None) is not None:  # held before, found again with room
            self.count_held(-1)
        return True

    def counted(self) -> None:
        """A page request became a page (an item)."""
        self.pages += 1
        self.page_requests = max(0, self.page_requests - 1)

    def came_to_nothing(self) -> None:
        """A page request failed (a 404, an error): it is out no more."""
        self.page_requests = max(0, self.page_requests - 1)

    def sent(self, count: int) -> None:
        """``count`` page requests made without :meth:`admit` (each comes to a page or to nothing)."""
        self.page_requests += count

    def idle(self) -> None:
        """Nothing is in flight: no page request is out any more."""
        self.page_requests = 0

    def waiting(self) -> bool:
        """Whether links are held while fewer than ``max_pages`` pages were recorded."""
        return self.max_pages is not None and bool(self.held) and self.pages < self.max_pages

    def release(self) -> Iterator[tuple[str, int, str | None]]:
        """The links held (URL, depth, linking page), in the order found, while the
        pages recorded plus the page requests out are fewer than ``max_pages``: each is
        held no more, and is to be requested (through :meth:`admit`) before the next
        is asked for, so that the room left counts it."""
        while self.held and self.max_pages is not None and self.pages + self.page_requests < self.max_pages:
            url, (depth, linking) = self.held.popitem(last=False)
            self.count_held(-1)
            yield url, depth, linking
