"""The text the extractor reads of a page: its main content selected, then written as
markdown, and the identity of the converter that made it.

:func:`page_markdown` is the converter: :func:`crawler.lib.maincontent.select_main_content`
chooses what of the page is its text, :func:`crawler.lib.markdown.write_markdown`
writes it; both ask :mod:`crawler.lib.nodes` what a reader sees. Its identity
(:func:`converter_id`) names its version and link mode: what the cache compares to
tell a page changed by the converter from a page changed by its site.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lib.css import NO_RULES, HiddenRules
from crawler.lib.maincontent import Selection, select_main_content
from crawler.lib.markdown import DEFAULT_LINKS, check_links, write_markdown
from crawler.lib.nodes import Visibility

if TYPE_CHECKING:
    from lxml.etree import _Element

#: the converter's version: raised whenever a change of the selection or the writer
#: changes the markdown of some page (what each version changed: docs/benchmarks.md)
CONVERTER_VERSION = "13"
#: the converter of caches older than converter ids (their records have none)
LEGACY_CONVERTER = "markdown/1;links=urls"


def converter_id(links: str = DEFAULT_LINKS, *, site_stylesheets: bool = True) -> str:
    """The identity of the markdown :func:`page_markdown` writes with these options:
    what a page record keeps, so a new converter is told from a page that changed.
    ``site_stylesheets``: whether the caller passes the rules of the page's linked
    stylesheets as ``site_rules`` (without them, only the page's own ``<style>`` hides).

    >>> converter_id("urls"), converter_id(site_stylesheets=False)
    ('markdown/13;links=urls', 'markdown/13;links=text;site_css=off')
    """
    return f"markdown/{CONVERTER_VERSION};links={check_links(links)}" + ("" if site_stylesheets else ";site_css=off")


def page_markdown(
    root: _Element, base_url: str = "", *, links: str = DEFAULT_LINKS, site_rules: HiddenRules = NO_RULES
) -> tuple[str, Selection]:
    """Markdown of the main content of the page whose tree is ``root``, and how that
    content was found (which rule chose it, whether the audit widened it);
    ``links``: ``"text"`` or ``"urls"``; ``site_rules``: what the page's linked
    stylesheets hide (:func:`crawler.lib.css.hidden_rules`), besides its own ``<style>``.

    >>> from lxml import html
    >>> tree = html.fromstring(
    ...     "<html><body><nav>Home</nav><main><h1>Title</h1><p>Some <b>bold</b>"
    ...     " text.<script>x=1</script></p><ul><li>one</li><li>two</li></ul></main>"
    ...     "<footer>(c) ACME</footer></body></html>")
    >>> markdown, selection = page_markdown(tree)
    >>> print(markdown)
    # Title
    <BLANKLINE>
    Some **bold** text.
    <BLANKLINE>
    - one
    - two
    >>> selection.root.tag
    'main'
    """
    visibility = Visibility.of(root, site_rules)
    selection = select_main_content(root, visibility)
    markdown = write_markdown(
        selection.root,
        base_url,
        links=check_links(links),
        skip=selection.skip,
        before=selection.before,
        visibility=visibility,
    )
    return markdown, selection
