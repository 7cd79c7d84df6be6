from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.site import Site, docs_site

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def site() -> Iterator[Site]:
    """The standard documentation site, with ETags and per-request noise."""
    served = docs_site().start()
    yield served
    served.stop()


@pytest.fixture
def make_site() -> Iterator:
    """Factory for sites with other validators: ``make_site("last-modified")``."""
    started: list[Site] = []

    def factory(validators: str = "etag", noise: bool = True) -> Site:
        served = docs_site(validators, noise).start()
        started.append(served)
        return served

    yield factory
    for served in started:
        served.stop()
