"""The pages a crawl asked for, each with the shallowest depth it was asked for at."""

from __future__ import annotations

import hashlib

from crawler.lib.keyset import FixedKeyValues


def _digest(url: str) -> bytes:
    return hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class RequestedPages:
    """URL -> the shallowest depth a request for it was made at, for every page the
    spider asked for. Each URL is held as a 16-byte digest with its depth
    (:class:`FixedKeyValues`: about 20 bytes a page, not about 150 for the URL and a
    dict's entry), and the URLs met lately in a dict in front of them, so a site's
    navigation, the same links on every page, is found at a dict's speed.

    >>> requested = RequestedPages()
    >>> requested.note("http://a/x", 3); requested.note("http://a/x", 5); requested.note("http://a/y", 1)
    >>> requested.depth("http://a/x"), requested["http://a/y"], "http://a/z" in requested, len(requested)
    (3, 1, False, 2)
    """

    #: URLs kept as strings (met lately); past this many, the dict starts again
    RECENT = 1 << 14

    def __init__(self) -> None:
        self._recent: dict[str, int] = {}
        self._all = FixedKeyValues(16)

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, url: str) -> bool:
        return self.depth(url) is not None

    def __getitem__(self, url: str) -> int:
        if (depth := self.depth(url)) is None:
            raise KeyError(url)
        return depth

    def get(self, url: str, default: int) -> int:
        depth = self.depth(url)
        return default if depth is None else depth

    def depth(self, url: str) -> int | None:
        """The shallowest depth ``url`` was requested at; ``None``: never requested."""
        depth = self._recent.get(url)
        if depth is None:
            depth = self._all.get(_digest(url))
            if depth is None:
                return None
            self._remember(url, depth)
        return depth

    def note(self, url: str, depth: int) -> None:
        """A request for ``url`` made at ``depth`` (kept if shallower than any before)."""
        before = self.depth(url)
        if before is None or depth < before:
            self._all.set(_digest(url), depth)
            self._remember(url, depth)

    def clear(self) -> None:
        self._recent.clear()
        self._all = FixedKeyValues(16)

    def _remember(self, url: str, depth: int) -> None:
        if len(self._recent) >= self.RECENT:
            self._recent.clear()
        self._recent[url] = depth
