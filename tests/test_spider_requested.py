from crawler.spiders.requested import RequestedPages


def test_the_shallowest_depth_is_kept_past_the_recent_urls():
    requested = RequestedPages()
    requested.RECENT = 4
    urls = [f"https://docs.example.com/p/{n}" for n in range(50)]
    for n, url in enumerate(urls):
        requested.note(url, 2 + n % 3)
    for url in urls[::2]:
        requested.note(url, 1)  # found again, shallower
        requested.note(url, 9)  # and deeper: kept at 1
    assert len(requested) == 50 and len(requested._recent) <= 4
    assert [requested.depth(url) for url in urls] == [1 if n % 2 == 0 else 2 + n % 3 for n in range(50)]
    assert requested.get("https://docs.example.com/other", 7) == 7
    assert "https://docs.example.com/other" not in requested
    requested.clear()
    assert urls[0] not in requested and len(requested) == 0
