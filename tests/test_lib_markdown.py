import pytest
from lxml import html

from crawler.lib.deephtml import flatten_deep_html, tree_depth
from crawler.lib.hashing import sha256_hex
from crawler.lib.maincontent import select_main_content
from crawler.lib.mdnodes import page_title
from crawler.lib.pagetext import CONVERTER_VERSION, LEGACY_CONVERTER, converter_id, page_markdown
from tests.convert import html_bytes_to_markdown

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
    assert select_main_content(tree).root.get("id") == "content"
    many = html.fromstring("<html><body><article><p>a</p></article><article><p>b</p></article></body></html>")
    assert select_main_content(many).root.tag == "body"  # a listing of articles: the whole body
    assert page_markdown(many)[0] == "a\n\nb"


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


def test_text_a_list_holds_beside_its_items_is_written():
    # recall first (converter 3): a list's text outside its items is text a reader reads;
    # an existing cache keeps its stored text until the page changes (CONVERTER_UPGRADE)
    page = "<html><body><main><h1>T</h1><p>Intro.</p><ul><div>One</div><div>Two</div></ul></main></body></html>"
    assert md(page) == "# T\n\nIntro.\n\nOne\nTwo"
    page = "<html><body><main><ul>Intro text<li>a</li>between<li>b</li><div>extra block</div></ul></main></body></html>"
    assert md(page) == "Intro text\n- a\nbetween\n- b\nextra block"


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
        page_markdown(root, "https://d.example/", links="urls")[0]
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


# -- what documentation frameworks render ------------------------------------------

CODE = "def f(x):\n    if x:\n\n        return 1"


def docusaurus_code(lines_html):
    return (
        '<main><div class="language-python codeBlockContainer_Ckt0 theme-code-block">'
        '<div class="codeBlockContent_biex"><pre tabindex="0" class="prism-code language-python codeBlock_bY9V">'
        f'<code class="codeBlockLines_e6Vv">{lines_html}</code></pre>'
        '<div class="buttonGroup__atx"><button type="button" aria-label="Copy code to clipboard" class="clean-btn">'
        '<span class="copyButtonIcons_eSgA">Copy</span></button></div></div></div></main>'
    )


def token_lines(code):
    return "".join(
        f'<span class="token-line" style="color:#F8F8F2"><span class="token plain">{line}</span><br></span>'
        if line
        else '<span class="token-line"><span class="token plain" style="display:inline-block"></span><br></span>'
        for line in code.split("\n")
    )


def test_prism_code_keeps_its_lines_and_indentation_in_either_markup():
    expected = f"```python\n{CODE}\n```"
    per_line = md(docusaurus_code(token_lines(CODE)))
    with_br = md(docusaurus_code(CODE.replace("\n", "<br>")))
    as_blocks = md(docusaurus_code("".join(f'<span style="display: block">{line}</span>' for line in CODE.split("\n"))))
    assert per_line == with_br == as_blocks == expected
    reindented = md(docusaurus_code(token_lines(CODE.replace("    ", "  "))))
    assert reindented != per_line


def test_code_line_number_gutters_stay_out():
    mkdocs_table = (
        '<main><div class="language-python highlight"><table class="highlighttable"><tr>'
        '<td class="linenos"><div class="linenodiv"><pre><span></span><span class="normal">1</span>\n'
        '<span class="normal">2</span></pre></div></td><td class="code"><div><pre><span></span>'
        "<code>a = 1\nb = 2\n</code></pre></div></td></tr></table></div></main>"
    )
    sphinx_inline = (
        '<main><div class="highlight-python notranslate"><div class="highlight"><pre><span></span>'
        '<span class="linenos">1</span>a = 1\n<span class="linenos">2</span>b = 2\n</pre></div></div></main>'
    )
    prism_rows = (
        '<main><pre class="line-numbers language-python"><code class="language-python">a = 1\nb = 2'
        '<span aria-hidden="true" class="line-numbers-rows"><span></span><span></span></span></code></pre></main>'
    )
    vitepress = (
        '<main><div class="language-python vp-adaptive-theme line-numbers-mode">'
        '<button title="Copy Code" class="copy"></button><span class="lang">python</span>'
        '<pre class="shiki vp-code"><code><span class="line"><span>a = 1</span></span>\n'
        '<span class="line"><span>b = 2</span></span></code></pre>'
        '<div class="line-numbers-wrapper" aria-hidden="true"><span class="line-number">1</span><br>'
        '<span class="line-number">2</span><br></div></div></main>'
    )
    for page in (mkdocs_table, sphinx_inline, prism_rows, vitepress):
        assert md(page) == "```python\na = 1\nb = 2\n```", page


def test_doxygen_fragment_is_a_code_block_without_line_numbers():
    page = (
        '<main><div class="fragment"><div class="line"><a id="l00001" name="l00001"></a>'
        '<span class="lineno">    1</span><span class="keywordtype">int</span> main() {</div>\n'
        '<div class="line"><a id="l00002" name="l00002"></a><span class="lineno">    2</span>'
        '    <span class="keywordflow">return</span> 0;</div>\n'
        '<div class="line"><a id="l00003" name="l00003"></a><span class="lineno">    3</span>}</div>\n'
        "</div></main>"
    )
    assert md(page) == "```\nint main() {\n    return 0;\n}\n```"


def test_code_language_from_sphinx_wrapper_and_data_attributes():
    sphinx = (
        '<main><div class="highlight-console notranslate"><div class="highlight"><pre><span></span>$ ls</pre>'
        "</div></div></main>"
    )
    hugo = (
        '<main><div class="highlight"><pre class="chroma"><code class="language-go" data-lang="go">x := 1</code></pre>'
        "</div></main>"
    )
    default = (
        '<main><div class="highlight-default notranslate"><div class="highlight"><pre>x = 1</pre></div></div></main>'
    )
    assert md(sphinx) == "```console\n$ ls\n```"
    assert md(hugo) == "```go\nx := 1\n```"
    assert md(default) == "```\nx = 1\n```"


def test_code_language_from_a_lang_attribute_of_the_code_but_not_the_page_s_language():
    # GitHub writes <pre lang="shell">: the fence says shell, as it does for class="language-shell"
    assert md('<main><pre lang="shell">ls -l</pre></main>') == "```shell\nls -l\n```"
    assert md('<main><pre><code lang="rust">fn main() {}</code></pre></main>') == "```rust\nfn main() {}\n```"
    by_class = md('<main><pre class="language-shell">ls -l</pre></main>')
    assert by_class == md('<main><pre lang="shell">ls -l</pre></main>')
    # a natural language is no code's, on the block or around it
    assert md('<main><pre lang="en-US">ls -l</pre></main>') == "```\nls -l\n```"
    assert md('<html lang="de"><body><main lang="de"><pre lang="de">ls -l</pre></main></body></html>') == (
        "```\nls -l\n```"
    )


DOCUSAURUS_TABS = """<main><div class="tabs-container tabList__CuJ">
<ul role="tablist" aria-orientation="horizontal" class="tabs">
<li role="tab" tabindex="0" aria-selected="true" class="tabs__item tabItem_LNqP tabs__item--active">npm</li>
<li role="tab" tabindex="-1" aria-selected="false" class="tabs__item tabItem_LNqP">Yarn</li></ul>
<div class="margin-top--md"><div role="tabpanel" class="tabItem_Ymn6"><p>Run npm install.</p></div>
<div role="tabpanel" class="tabItem_Ymn6" hidden=""><p>Run yarn add.</p></div></div></div>
<p hidden>Hidden chrome.</p></main>"""


def test_docusaurus_tabs_write_every_panel_under_its_label():
    assert md(DOCUSAURUS_TABS) == "**npm**\n\nRun npm install.\n\n**Yarn**\n\nRun yarn add."


def test_an_edit_in_a_hidden_tab_changes_the_markdown():
    assert md(DOCUSAURUS_TABS.replace("yarn add", "yarn install")) != md(DOCUSAURUS_TABS)


def test_sphinx_tabs_labels_are_buttons_found_by_id():
    page = """<main><div class="sphinx-tabs docutils container">
<div aria-label="Tabbed content" class="closeable" role="tablist">
<button aria-controls="panel-0-0-0" aria-selected="true" class="sphinx-tabs-tab" id="tab-0-0-0"
 role="tab">Linux</button>
<button aria-controls="panel-0-0-1" aria-selected="false" class="sphinx-tabs-tab" id="tab-0-0-1"
 role="tab">Windows</button>
</div><div aria-labelledby="tab-0-0-0" class="sphinx-tabs-panel" id="panel-0-0-0" role="tabpanel"><p>Use bash.</p></div>
<div aria-labelledby="tab-0-0-1" class="sphinx-tabs-panel" hidden="true" id="panel-0-0-1" role="tabpanel">
<div class="highlight-doscon notranslate"><div class="highlight"><pre>C:\\&gt; dir</pre></div></div></div></div>
</main>"""
    assert md(page) == "**Linux**\n\nUse bash.\n\n**Windows**\n\n```doscon\nC:\\> dir\n```"


def test_radio_tab_sets_of_sphinx_design_mkdocs_and_vitepress():
    sphinx_design = """<main><div class="sd-tab-set docutils">
<input checked="checked" id="sd-tab-item-0" name="sd-tab-set-0" type="radio">
<label class="sd-tab-label" for="sd-tab-item-0">Python</label><div class="sd-tab-content docutils"><p>Import it.</p>
</div>
<input id="sd-tab-item-1" name="sd-tab-set-0" type="radio">
<label class="sd-tab-label" for="sd-tab-item-1">Rust</label><div class="sd-tab-content docutils"><p>Use it.</p></div>
</div></main>"""
    mkdocs = """<main><div class="tabbed-set tabbed-alternate" data-tabs="1:2">
<input checked="checked" id="__tabbed_1_1" name="__tabbed_1" type="radio">
<input id="__tabbed_1_2" name="__tabbed_1" type="radio">
<div class="tabbed-labels"><label for="__tabbed_1_1">Python</label><label for="__tabbed_1_2">Rust</label></div>
<div class="tabbed-content"><div class="tabbed-block"><p>Import it.</p></div><div class="tabbed-block"><p>Use it.</p>
</div></div>
</div></main>"""
    vitepress = """<main><div class="vp-code-group vp-adaptive-theme"><div class="tabs">
<input type="radio" name="group-1" id="tab-1" checked><label data-title="Python" for="tab-1">Python</label>
<input type="radio" name="group-1" id="tab-2"><label data-title="Rust" for="tab-2">Rust</label></div>
<div class="blocks"><div class="language-py vp-adaptive-theme active"><button title="Copy Code" class="copy"></button>
<span class="lang">py</span><pre class="shiki"><code><span class="line">Import it.</span></code></pre></div>
<div class="language-rs vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">rs</span>
<pre class="shiki"><code><span class="line">Use it.</span></code></pre></div></div></div></main>"""
    assert md(sphinx_design) == md(mkdocs) == "**Python**\n\nImport it.\n\n**Rust**\n\nUse it."
    assert md(vitepress) == "**Python**\n\n```py\nImport it.\n```\n\n**Rust**\n\n```rs\nUse it.\n```"


def test_code_in_a_list_item_stays_a_code_block():
    page = """<main><ol><li><p>Install:</p><div class="highlight-bash notranslate"><div class="highlight">
<pre><span></span>pip install x
# then check
x --version
</pre></div></div><p>It prints the version.</p></li><li>Done.</li></ol></main>"""
    assert md(page) == "\n\n".join(
        ["1. Install:", "```bash\npip install x\n# then check\nx --version\n```", "   It prints the version.\n2. Done."]
    )


def test_ordered_lists_keep_their_numbers():
    assert md("<main><ol start='3'><li>c</li><li>d</li></ol></main>") == "3. c\n4. d"
    assert md("<main><ol reversed><li>b</li><li>a</li></ol></main>") == "2. b\n1. a"
    assert md("<main><ol><li>a</li><li value='10'>j</li><li>k</li></ol></main>") == "1. a\n10. j\n11. k"
    assert md("<main><ol start='x'><li>a</li></ol></main>") == "1. a"


def test_permalink_anchors_and_glyphs_leave_headings():
    page = """<main><h1>Install<a class="headerlink" href="#install" title="Link to this heading">¶</a></h1>
<h2 id="usage">Usage<a class="headerlink" href="#usage" title="Permanent link">#</a></h2>
<h2 id="api" tabindex="-1">API <a class="header-anchor" href="#api" aria-label="Permalink to “API”">​</a></h2>
<h2 class="anchor anchorWithStickyNavbar_LWe7" id="faq">FAQ<a href="#faq" class="hash-link"
 aria-label="Direct link to FAQ">\u200b</a></h2>
<h3 id="x"><a href="#x"><i class="fa">\uf0c1</i></a> Icons</h3><p>See <a href="#usage">usage</a>.</p></main>"""
    assert md(page) == "# Install\n\n## Usage\n\n## API\n\n## FAQ\n\n### Icons\n\nSee usage."
    title = html.fromstring('<html><body><h1>Install\u200b<a class="hash-link" href="#i">#</a></h1></body></html>')
    assert page_title(title) == "Install"


def test_a_title_above_the_content_opens_the_markdown():
    page = """<html><body><header><h1 class="logo">Site</h1></header>
<div class="td-title-band"><h1 class="td-title">Sync policies<a class="anchor" href="#top">#</a></h1>
<p class="lead">How changes are applied.</p></div>
<nav><h1>Menu</h1></nav><main><p>Body text.</p></main><footer><h1>Footer</h1></footer></body></html>"""
    assert md(page) == "# Sync policies\n\nHow changes are applied.\n\nBody text."
    inside = "<html><body><h1>Above</h1><main><h1>Inside</h1><p>Body.</p></main></body></html>"
    assert md(inside) == "# Inside\n\nBody."
    hidden = "<html><body><h1 hidden>Hidden</h1><main><p>Body.</p></main></body></html>"
    assert md(hidden) == "Body."


def test_doxygen_search_widget_and_generated_footer_stay_out():
    def page(stamp):
        return f"""<html><body><div id="top"><div id="titlearea"><table><tr><td>libx 1.0</td></tr></table></div>
<div id="main-nav"><ul class="sm sm-dox" id="main-menu"><li><a href="index.html">Main Page</a></li></ul></div>
<div id="MSearchBox" class="MSearchBoxInactive"><span class="left"><input type="text" id="MSearchField" value="">
</span></div>
<div id="MSearchSelectWindow"><a class="SelectItem" href="javascript:void(0)">
<span class="SelectionMark">&#160;</span>All</a></div>
<div id="MSearchResultsWindow"><div id="MSearchResults"><div class="SRStatus" id="Loading">Loading...</div></div>
</div></div>
<div class="header"><div class="headertitle"><div class="title">ringbuf.h File Reference</div></div></div>
<div class="contents"><p>A ring buffer.</p></div>
<div id="nav-path" class="navpath"><ul><li class="navelem"><a href="dir_1.html">src</a></li>
<li class="footer">Generated on {stamp} for libx by <a href="https://www.doxygen.org/index.html">
<img class="footer" src="doxygen.svg" alt="doxygen"></a> 1.9.8</li></ul></div>
<hr class="footer"><address class="footer"><small>Generated on {stamp} for libx by doxygen</small></address></body>
</html>"""

    assert md(page("Tue Mar 5 2024")) == md(page("Wed Mar 6 2024")) == "# ringbuf.h File Reference\n\nA ring buffer."


def test_doxygen_prototypes_and_member_tables():
    page = """<main><h2 class="memtitle"><span class="permalink"><a href="#a1">&#9670;&#160;</a></span>rb_new()</h2>
<div class="memitem"><div class="memproto"><table class="memname"><tr><td class="memname">rb_t * rb_new </td><td>(</td>
<td class="paramtype">size_t&#160;</td><td class="paramname"><em>capacity</em></td><td>)</td><td></td></tr></table>
</div></div>
<table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader"><a id="func-members">
</a>Functions</h2></td></tr>
<tr class="memitem:a1"><td class="memItemLeft">rb_t *&#160;</td>
<td class="memItemRight">rb_new (size_t capacity)</td></tr>
<tr class="separator:a1"><td class="memSeparator" colspan="2">&#160;</td></tr></table></main>"""
    assert (
        md(page) == "## rb_new()\n\n```\nrb_t * rb_new (size_t capacity)\n```\n\n## Functions\n\n"
        "|  |  |\n| --- | --- |\n| rb_t \\* | rb_new (size_t capacity) |"
    )


def test_a_form_keeps_its_text_not_its_controls():
    page = """<main><form action="/subscribe"><fieldset><legend>Your details</legend>
<p class="help">We never share your address.</p><label for="e">Email</label><input id="e" name="e" value="me@x.org">
<select><option>Weekly</option></select><textarea>draft</textarea><button>Send</button></fieldset></form>
<form role="search"><input type="search" name="q" placeholder="Search"></form><search><label>Find</label><input>
</search></main>"""
    assert md(page) == "**Your details**\n\nWe never share your address.\n\nEmail"


def test_admonitions_are_labelled_quotes():
    mkdocs = (
        '<main><div class="admonition note"><p class="admonition-title">Note</p><p>Keys are paths.</p></div></main>'
    )
    docusaurus = (
        '<main><div class="theme-admonition theme-admonition-note admonition_xJq3 alert alert--secondary">'
        '<div class="admonitionHeading_Gvgb"><span class="admonitionIcon_Rf37"><svg><path d="M0"/></svg></span>'
        "Note</div>"
        '<div class="admonitionContent_BuS1"><p>Keys are paths.</p></div></div></main>'
    )
    details = '<main><details class="note"><summary>Note</summary><p>Keys are paths.</p></details></main>'
    untitled = '<main><div class="alert alert-warning" role="alert"><p>Keys are paths.</p></div></main>'
    assert md(mkdocs) == md(docusaurus) == md(details) == "> **Note**\n>\n> Keys are paths."
    assert md(untitled) == "> **Warning**\n>\n> Keys are paths."


def test_definition_lists_and_tables_keep_their_parts():
    page = """<main><dl class="py function"><dt class="sig sig-object py" id="f">
<span class="sig-name descname">f</span>
<span class="sig-paren">(</span><em class="sig-param">x</em><span class="sig-paren">)</span>
<a class="headerlink" href="#f" title="Link to this definition">¶</a></dt><dd><p>Does f.</p></dd></dl>
<table><caption><span class="caption-text">Options</span><a class="headerlink" href="#t">¶</a></caption>
<thead><tr><th>Name</th><th>Default</th></tr></thead><tbody><tr><td>a</td><td><table><tr><td>nested</td></tr></table>
</td></tr>
<tr><td>b</td><td>2</td></tr></tbody></table></main>"""
    assert md(page) == (
        "**f (x)**\n\nDoes f.\n\nOptions\n\n| Name | Default |\n| --- | --- |\n| a | nested |\n| b | 2 |"
    )


def test_emphasis_keeps_the_spaces_between_words():
    page = "<main><p>(<em>str</em><em> </em><em>or</em><em> </em><em>Decimal</em>) and <b>bold </b>text</p></main>"
    assert md(page) == "(*str* *or* *Decimal*) and **bold** text"


def test_tabs_in_a_list_item_keep_their_labels_and_code():
    tabs = DOCUSAURUS_TABS.replace("<main>", "").replace("<p hidden>Hidden chrome.</p></main>", "")
    tabs = tabs.replace("<p>Run npm install.</p>", "<pre>npm install</pre>").replace(
        "<p>Run yarn add.</p>", "<pre>yarn add</pre>"
    )
    assert md(f"<main><ol><li>Install it:{tabs}</li></ol></main>") == "\n\n".join(
        ["1. Install it: **npm**", "```\nnpm install\n```", "   **Yarn**", "```\nyarn add\n```"]
    )


def test_a_header_inside_main_is_the_page_title():
    page = """<body><header id="site-header"><a href="/">Parcelhub</a></header><main><header>
<nav aria-label="Breadcrumb"><ol><li><a href="/api">API reference</a></li></ol></nav><h1>Webhooks</h1>
<p>Get notified when a parcel changes status.</p></header><p>Parcelhub calls your endpoint.</p></main></body>"""
    assert md(page) == "# Webhooks\n\nGet notified when a parcel changes status.\n\nParcelhub calls your endpoint."


def test_form_captions_inside_inline_markup_stay_words_apart():
    page = """<main><product-form><form action="/cart/add"><fieldset><legend>Colour</legend>
<input type="radio" id="s" name="c" value="Steel" checked><label for="s">Brushed steel</label><input type="radio"
 id="b" name="c" value="Black"><label for="b">Matt black</label></fieldset><button>Add to cart</button></form>
</product-form><div id="respond" class="comment-respond"><form id="commentform" class="comment-form">
<p class="comment-notes">Your email address will not be published.</p><label>Comment</label><textarea></textarea>
</form></div></main>"""
    assert md(page) == "**Colour**\n\nBrushed steel Matt black"  # (a custom element holds blocks)


STARLIGHT = """<main><div class="sl-markdown-content">
<div class="sl-heading-wrapper level-h2"><h2 id="setup">Set up</h2><a class="sl-anchor-link" href="#setup">
<span aria-hidden="true" class="sl-anchor-icon"><svg></svg></span><span class="sr-only">Section titled “Set up”</span>
</a></div>
<aside aria-label="Note" class="starlight-aside starlight-aside--note"><p class="starlight-aside__title">Note</p>
<div class="starlight-aside__content"><p>Node 20 or later.</p></div></aside>
<starlight-tabs data-sync-key="pkg"><div class="tablist-wrapper not-content"><ul role="tablist">
<li role="presentation"><a role="tab" href="#tab-panel-0" id="tab-0" aria-selected="true">npm</a></li>
<li role="presentation"><a role="tab" href="#tab-panel-1" id="tab-1" aria-selected="false">pnpm</a></li></ul></div>
<div id="tab-panel-0" aria-labelledby="tab-0" role="tabpanel"><div class="expressive-code"><figure class="frame">
<figcaption class="header"><span class="title"></span><span class="sr-only">Terminal window</span></figcaption>
<pre data-language="sh"><code><div class="ec-line"><div class="code">npm install pollen</div></div></code></pre>
</figure></div></div>
<div id="tab-panel-1" aria-labelledby="tab-1" role="tabpanel" hidden><div class="expressive-code"><figure class="frame">
<pre data-language="sh"><code><div class="ec-line"><div class="code">pnpm add pollen</div></div></code></pre>
</figure></div></div></starlight-tabs>
<aside class="right-sidebar"><p>On this page</p></aside></div></main>"""


def test_starlight_asides_tabs_and_screen_reader_text():
    """Starlight (Astro): an <aside> that is a note is the page's text (a sidebar
    <aside> is not), tabs live in a custom element, "Section titled" and "Terminal
    window" are for screen readers only."""
    assert md(STARLIGHT) == (
        "## Set up\n\n> **Note**\n>\n> Node 20 or later.\n\n"
        "**npm**\n\n```sh\nnpm install pollen\n```\n\n**pnpm**\n\n```sh\npnpm add pollen\n```"
    )


def test_deep_inline_markup_and_bodies_without_elements_never_raise():
    """Inline markup costs three frames a level: past MAX_INLINE_DEPTH it is plain text
    (330 nested <b><i> raised RecursionError); a body with no element has no text."""
    import sys

    nested = "<b><i>" * 400 + "deep" + "</i></b>" * 400
    body = f"<html><body><main><p>{nested} after</p></main></body></html>"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default, whatever the test runner set
    try:
        out = html_bytes_to_markdown(body)
    finally:
        sys.setrecursionlimit(limit)
    assert "deep" in out and out.endswith(" after")
    assert [html_bytes_to_markdown(b) for b in ("<!-- a comment -->", "<!DOCTYPE html>", "<?xml version='1.0'?>")] == [
        "",
        "",
        "",
    ]


def test_custom_elements_holding_text_stay_inline_and_hidden_notes_stay_out():
    page = (
        "<main><div>Released on <relative-time>Jan 3</relative-time> by the team.</div>"
        "<p>Learn <a href='#opts'>more</a> about options.</p>"
        "<aside class='starlight-aside' hidden><p>A hidden note.</p></aside></main>"
    )
    assert md(page) == "Released on Jan 3 by the team.\n\nLearn more about options."


def test_badges_in_a_prototype_are_words_apart():
    # Doxygen's labels after a member's prototype: no space between them in the markup,
    # boxes of their own on the screen ("inlineconstexprnoexcept" is no word of the page)
    prototype = (
        '<div class="memproto"><table class="mlabels"><tr><td class="mlabels-left">'
        '<table class="memname"><tr><td class="memname">int std::lcm</td><td>(</td>'
        '<td class="paramtype">int&#160;</td><td class="paramname"><em>m</em></td><td>)</td></tr></table></td>'
        '<td class="mlabels-right"><span class="mlabels"><span class="mlabel">inline</span>'
        '<span class="mlabel">constexpr</span><span class="mlabel">noexcept</span></span></td></tr></table></div>'
    )
    out = md(f"<html><body><main><h1>lcm</h1>{prototype}<p>Least common multiple.</p></main></body></html>")
    assert "int std::lcm (int m) inline constexpr noexcept" in out


def test_the_spaces_at_a_link_s_ends_stay_outside_it():
    # (rustdoc: "-&gt; <a class='primitive'>&amp;mut </a>T" is "-> &mut T", not "-> &mutT")
    page = (
        "<html><body><main><h1>T</h1><h4>fn f(&amp;mut self) -&gt; <a href='/r'>&amp;mut </a>T</h4>"
        "</main></body></html>"
    )
    assert "fn f(&mut self) -> &mut T" in md(page, links="text")
    assert "-> [&mut](https://docs.example.com/r) T" in md(page)


def test_a_number_starting_a_line_stays_a_word_and_a_code_listing_beside_its_line_numbers_is_code():
    # Sphinx's numbered table of contents; GTK-Doc's listing_frame: the gutter and the code in two cells
    toc = (
        "<ul><li><a href='intro.html'>1. Introduction</a><ul><li><a href='n.html'>1.1. Notation</a></li></ul></li></ul>"
    )
    out = md(f"<main><h1>Reference</h1>{toc}<p>2) Second, a paragraph.</p></main>", links="text")
    assert "- 1\\. Introduction\n  - 1.1. Notation" in out
    assert "2\\) Second, a paragraph." in out
    listing = (
        "<table class='listing_frame'><tbody><tr><td class='listing_lines'><pre>1\n2</pre></td>"
        "<td class='listing_code'><pre class='programlisting'>set_state (path, flag);\nx | y;</pre></td>"
        "</tr></tbody></table>"
    )
    out = md(f"<main><h1>Paths</h1><h4>Setting a flag</h4>{listing}</main>")
    assert "```\nset_state (path, flag);\nx | y;\n```" in out and "| 1" not in out
    # a table of two rows is a table, whatever its first column holds
    out = md(
        "<main><h1>T</h1><table><tr><td>1</td><td><pre>a</pre></td></tr><tr><td>2</td><td>b</td></tr></table></main>"
    )
    assert "| 2 | b |" in out


def test_a_list_whose_items_are_sections_is_written_as_sections():
    # Javadoc 17: ul.summary-list > li > section > h2, the summary's table and the details
    article = (
        "<h1>Interface Resolver</h1><ul class='summary-list'><li><section class='method-summary'>"
        "<h2>Method Summary</h2><div class='summary-table'><div>Object</div><div>resolve(QName name)</div></div>"
        "</section></li><li><section class='details'><h2>Method Details</h2><ul class='member-list'><li>"
        "<section class='detail'><h3>resolve</h3><p>Find a variable.</p></section></li></ul></section></li></ul>"
    )
    out = md(f"<main>{article}</main>")
    assert "\n## Method Summary\n" in out and "\n### resolve\n\nFind a variable." in out
    assert "- " not in out


def test_tabs_that_all_show_one_panel_are_filters_not_labels_and_a_stability_badge_is_a_word_apart():
    # Javadoc's summary table: "All Methods", "Static Methods" buttons filter one panel
    tabs = (
        "<div role='tablist'><button role='tab' aria-controls='t.tabpanel'>All Methods</button>"
        "<button role='tab' aria-controls='t.tabpanel'>Static Methods</button></div>"
        "<div id='t.tabpanel' role='tabpanel'><p>int getTransparency()</p></div>"
    )
    out = md(f"<main><h1>Transparency</h1><h2>Method Summary</h2>{tabs}</main>")
    assert "All Methods" not in out and "Static Methods" not in out and "int getTransparency()" in out
    # code tabs each showing a panel of their own keep their labels
    code = (
        "<div role='tablist'><button role='tab' aria-controls='p1'>Python</button>"
        "<button role='tab' aria-controls='p2'>Shell</button></div>"
        "<div id='p1' role='tabpanel'><pre>import x</pre></div><div id='p2' role='tabpanel'><pre>x --run</pre></div>"
    )
    out = md(f"<main><h1>Install</h1>{code}</main>")
    assert "**Python**" in out and "**Shell**" in out
    # rustdoc: <a>DirEntryExt2</a><span class="stab unstable">Experimental</span>
    out = md(
        "<main><h1>Traits</h1><p><a href='t.html'>DirEntryExt2</a>"
        "<span class='stab unstable'>Experimental</span></p></main>"
    )
    assert "DirEntryExt2](https://docs.example.com/install/t.html) Experimental" in out


def test_a_star_the_page_wrote_is_escaped_and_a_code_span_s_end_spaces_stay_outside_it():
    # Haddock's complexity notes; DocBook's <code>PREPARE </code><em><code>id</code></em>
    out = md("<main><h1>Map</h1><p>O(m*log(n/m + 1)), m &lt;= n*2</p></main>")
    assert "O(m\\*log(n/m + 1)), m <= n\\*2" in out
    out = md("<main><h1>Commands</h1><p><code>EXEC SQL PREPARE TRANSACTION </code><em><code>id</code></em></p></main>")
    assert "`EXEC SQL PREPARE TRANSACTION` *`id`*" in out
    # a backtick the page wrote opens no code span (SQLAlchemy's "the``CREATE INDEX``", AsciiDoc's
    # "its 'min_update_index` to ... files' <code>min_update_index</code>")
    out = md("<main><h1>Notes</h1><p>before, the``CREATE INDEX`` DDL; its &#8216;x` to the <code>y</code></p></main>")
    assert "before, the\\`\\`CREATE INDEX\\`\\` DDL; its \u2018x\\` to the `y`" in out


def test_text_after_a_nested_list_follows_it():
    # Sphinx's "What's New": "Deprecate the following functions: <ul>...</ul> Use the new API."
    out = md(
        "<main><h1>Deprecated</h1><ul><li>Deprecate these functions:<ul><li><code>PySys_AddXOption()</code></li>"
        "<li><code>PySys_SetArgvEx()</code></li></ul>Use the new API instead.</li><li>Next</li></ul></main>",
        links="text",
    )
    assert (
        "- Deprecate these functions:\n  - `PySys_AddXOption()`\n  - `PySys_SetArgvEx()`\n"
        "  Use the new API instead.\n- Next" in out
    )
