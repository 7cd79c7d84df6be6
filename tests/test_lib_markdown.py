import pytest
from lxml import html

from crawler.lib.hashing import sha256_hex
from crawler.lib.markdown import (
    CONVERTER_VERSION,
    LEGACY_CONVERTER,
    converter_id,
    flatten_deep_html,
    html_bytes_to_markdown,
    html_to_markdown,
    main_content_root,
    page_title,
    tree_depth,
)

ARTICLE = "<h1>Install</h1><p>Run <code>pip install x</code>, then read <a href='/usage/'>usage</a>.</p>"


def page(article, *, nonce="n1", csrf="c1", stamp="1", tip="1", css="v1", extra=""):
    return f"""<!DOCTYPE html><html><head><title>Install - Docs</title>
    <meta name="csrf-token" content="{csrf}"><script nonce="{nonce}">var t={stamp};</script>
    <link rel="stylesheet" href="/app.css?v={css}"><style>.x{{color:red}}</style></head>
    <body><header><a href="/">Docs</a><form><input type="hidden" name="csrf" value="{csrf}"></form></header>
    <nav><a href="/a">A</a></nav><main>{article}<!-- generated at {stamp} -->
    <img src="/img/diagram.png?cb={css}" alt="Diagram">{extra}</main>
    <aside>Tip {tip}</aside><footer>(c) Example {stamp}</footer></body></html>"""


def md(source, base="https://docs.example.com/install/", links="urls"):
    """The markdown of ``source``, links as ``[text](url)`` unless ``links="text"``."""
    return html_bytes_to_markdown(source, base, links=links)


def test_per_request_noise_does_not_change_the_markdown():
    a = md(page(ARTICLE))
    b = md(page(ARTICLE, nonce="n2", csrf="c2", stamp="2", tip="2", css="v2"))
    assert a == b
    assert "Tip" not in a and "Example" not in a and "csrf" not in a and "var t" not in a
    assert "![Diagram](https://docs.example.com/img/diagram.png)" in a


def test_article_text_changes_do_change_it():
    assert sha256_hex(md(page(ARTICLE))) != sha256_hex(md(page(ARTICLE.replace("pip", "pipx"))))


def test_links_are_absolute_as_a_reader_follows_them():
    assert "[usage](https://docs.example.com/usage/)" in md(page(ARTICLE))
    out = md(
        "<main><p><a href='#top'>top</a> <a href='javascript:void(0)'>js</a> <a href='mailto:a@b.c'>mail</a></p></main>"
    )
    assert out == "top js [mail](mailto:a@b.c)"


def test_hidden_elements_are_dropped():
    out = md(
        "<main><p>shown</p><p hidden>h1</p><div aria-hidden='true'>h2</div>"
        "<div style='display: none'>h3</div><p style='visibility:hidden'>h4</p></main>"
    )
    assert out == "shown"


def test_main_content_selection():
    tree = html.fromstring("<html><body><div id='content'><p>c</p></div><div>other</div></body></html>")
    assert main_content_root(tree).get("id") == "content"
    many = html.fromstring("<html><body><article><p>a</p></article><article><p>b</p></article></body></html>")
    assert main_content_root(many).tag == "body"  # a listing of articles: the whole body
    assert html_to_markdown(many) == "a\n\nb"


def test_header_inside_article_is_kept_page_header_is_not():
    out = md(
        "<body><header>Site name</header><article><header><h1>Title</h1></header><p>Text</p>"
        "<footer>Was this helpful?</footer></article></body>"
    )
    assert out == "# Title\n\nText"


def test_block_structure():
    out = md("""<main><h2>Steps</h2><ol><li>First<ul><li>detail</li></ul></li><li>Second</li></ol>
    <pre class="language-python"><code>def f():\n\n    return 1</code></pre>
    <blockquote><p>Note one</p><p>Note two</p></blockquote>
    <table><tr><th>Name</th><th>Value</th></tr><tr><td>a|b</td><td>1</td></tr></table>
    <dl><dt>Term</dt><dd>Definition</dd></dl><hr><p>Line<br>break <em>em</em> <strong>strong</strong></p></main>""")
    assert out == "\n\n".join(
        [
            "## Steps",
            "1. First\n  - detail\n2. Second",
            "```python\ndef f():\n\n    return 1\n```",
            "> Note one\n>\n> Note two",
            "| Name | Value |\n| --- | --- |\n| a\\|b | 1 |",
            "**Term**",
            "Definition",
            "---",
            "Line break *em* **strong**",
        ]
    )


def test_table_without_header_row_gets_an_empty_one():
    assert md("<main><table><tr><td>a</td><td>b</td></tr></table></main>") == "|  |  |\n| --- | --- |\n| a | b |"


def test_malformed_and_empty_input():
    assert md("") == ""
    assert md("   ") == ""
    out = md(b"<html><body><main><h1>Broken<p>Unclosed <b>bold<div>deep \xff text</main></table>")
    assert "Broken" in out and "deep" in out
    deep = "<div>" * 3000 + "bottom" + "</div>" * 3000
    assert isinstance(md(f"<html><body>{deep}</body></html>"), str)  # no RecursionError


def test_code_fence_inside_code_uses_a_longer_fence():
    out = md("<main><pre><code>```\nnested\n```</code></pre></main>")
    assert out.startswith("````\n") and out.endswith("\n````")


def test_page_title():
    assert page_title(html.fromstring("<html><head><title> A  title </title></head></html>")) == "A title"
    assert page_title(html.fromstring("<html><body><h1>H</h1></body></html>")) == "H"
    assert page_title(html.fromstring("<html><body><p>x</p></body></html>")) == ""


def test_ipv6_and_broken_links_never_lose_the_page():
    html = b'<main><p><a href="http://[::1]:8080/x/">local</a> and <a href="http://[::1">bad</a> text</p></main>'
    out = html_bytes_to_markdown(html, "http://a.com/", links="urls")
    assert out == "[local](http://[::1]:8080/x/) and bad text"


def test_deeply_nested_text_is_kept_as_plain_text():
    # past MAX_DEPTH (400) the text used to be dropped without a word
    deep = "<div>" * 600 + "<p>Deep <b>text</b> here<script>x=1</script></p>" + "</div>" * 600
    out = md(f"<html><body><main><h1>T</h1>{deep}<p>After the divs.</p></main></body></html>")
    assert out == "# T\n\nDeep text here\n\nAfter the divs."
    lists = "<ul><li>item" * 1200 + "</li></ul>" * 1200  # no RecursionError either
    assert md(f"<html><body><main>{lists}</main></body></html>").count("item") == 1200  # not one lost


def test_a_list_without_items_stays_as_it_was():
    # text beside (or instead of) <li>s was never written: writing it now would change
    # the input of every page that has such a list, and re-extract it
    page = "<html><body><main><h1>T</h1><p>Intro.</p><ul><div>One</div><div>Two</div></ul></main></body></html>"
    assert md(page) == "# T\n\nIntro."


def test_deep_text_keeps_its_words_apart():
    deep = "<div>" * 450 + "<p>one</p><p>two</p>three" + "</div>" * 450
    assert md(f"<html><body><main>{deep}</main></body></html>") == "one two three"


def test_flatten_deep_html_keeps_what_libxml2_would_cut():
    deep = "<div>" * 100_000 + "<p>Deep text <a href='/deep'>link</a></p>" + "</div>" * 100_000
    source = f"<html><body><main><h1>T</h1>{deep}<p>After the divs.</p></main></body></html>"
    parser = html.HTMLParser(huge_tree=True)
    assert "After" not in html.document_fromstring(source, parser=parser).text_content()  # libxml2 stops at 2048
    root = html.document_fromstring(flatten_deep_html(source), parser=parser)
    assert tree_depth(root) < 300
    assert (
        html_to_markdown(root, "https://d.example/", links="urls")
        == "# T\n\nDeep text [link](https://d.example/deep)\n\nAfter the divs."
    )


LINKS = (
    "<main><p>See <a href='../not-synchronized-vfs/'>the VFS</a>, <a href='#top'>top</a>,"
    " <a href='/usage/#step-2'>step 2</a>, <a href='/install/#x'>here</a>,"
    " <a href='/faq/?utm_source=x&amp;q=1#a'>FAQ</a>"
    " <img src='/d.png?v=3' alt='Diagram'></p></main>"
)


def test_urls_mode_keeps_the_link_a_reader_follows():
    # trailing slash and fragment kept, only tracking parameters dropped; a place on
    # this page is its text
    assert md(LINKS) == (
        "See [the VFS](https://docs.example.com/not-synchronized-vfs/), top,"
        " [step 2](https://docs.example.com/usage/#step-2), here, [FAQ](https://docs.example.com/faq/?q=1#a)"
        " ![Diagram](https://docs.example.com/d.png)"
    )


def test_text_mode_writes_link_text_and_image_alt_only():
    assert md(LINKS, links="text") == "See the VFS, top, step 2, here, FAQ Diagram"
    assert html_bytes_to_markdown(LINKS) == md(LINKS, links="text")  # the default


def test_converter_id_names_version_and_link_mode():
    assert converter_id() == f"markdown/{CONVERTER_VERSION};links=text"
    assert converter_id("urls") != converter_id("text") != LEGACY_CONVERTER
    with pytest.raises(ValueError, match="MARKDOWN_LINKS must be one of text, urls, got 'all'"):
        converter_id("all")
