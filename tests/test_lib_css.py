from lxml import html

from crawler.lib.css import NO_RULES, hidden_rules, stylesheet_links
from crawler.lib.nodes import Visibility

DOXYGEN_CSS = """
div.fragment { padding: 4px; margin: 4px 8px 4px 2px; background-color: #FBFCFD; }
div.line { font-family: monospace, fixed; min-height: 13px; line-height: 1.0; }
/* @group Code Colorization */
span.keyword { color: #008000 }
div.ttc { position: absolute; display: none; }
#powerTip { cursor: default; display: none; position: absolute; z-index: 2147483647; }
@media print { #top { display: none; } }
"""


def test_a_doxygen_stylesheet_hides_its_tooltips_and_nothing_else():
    rules = hidden_rules(DOXYGEN_CSS)
    assert sorted(rules.by_class) == ["ttc"] and sorted(rules.by_id) == ["powerTip"]
    page = html.fromstring(
        '<div class="fragment"><div class="line">int x;</div><div class="ttc" id="a">tip</div></div>'
    )
    hidden = [node.text for node in page.iter("div") if Visibility(rules).hidden(node)]
    assert hidden == ["tip"]


def test_what_one_stylesheet_shows_again_another_does_not_hide():
    framework = hidden_rules(".collapse { display: none } .tip { display: none }")
    theme = hidden_rules(".collapse.in { display: block } p { color: red }")
    assert sorted(framework.by_class) == ["collapse", "tip"] and not theme and theme.shown == {".collapse", ".in"}
    for merged in (framework.merged(theme), theme.merged(framework), NO_RULES.merged(framework).merged(theme)):
        assert sorted(merged.by_class) == ["tip"]
    assert framework.merged(NO_RULES) is framework and NO_RULES.merged(framework) is framework


def test_a_page_s_own_style_showing_what_a_site_stylesheet_hides_is_seen():
    site = hidden_rules("div.ttc { display: none }")
    page = html.fromstring(
        '<html><head><style>.ttc:hover { display: block }</style></head><body><div class="ttc">tip</div></body></html>'
    )
    assert not Visibility.of(page, site).hidden(page.find(".//div"))
    plain = html.fromstring('<html><body><div class="ttc">tip</div></body></html>')
    assert Visibility.of(plain, site).hidden(plain.find(".//div"))


def test_stylesheet_links_resolve_against_the_base_each_once():
    links = "".join(f'<link rel="stylesheet" href="s{n}.css">' for n in range(3))
    page = html.fromstring(f'<html><head><base href="https://cdn.example.org/v2/">{links}</head></html>')
    found = stylesheet_links(page, "https://cdn.example.org/v2/")
    assert found == [f"https://cdn.example.org/v2/s{n}.css" for n in range(3)]
    twice = html.fromstring('<html><head><link rel="stylesheet" href="a.css"><link rel="stylesheet" href="a.css#x">')
    assert stylesheet_links(twice, "https://example.org/") == ["https://example.org/a.css"]
    disabled = html.fromstring('<html><head><link rel="stylesheet" href="a.css" disabled></head></html>')
    assert stylesheet_links(disabled, "https://example.org/") == []


def test_a_descendant_rule_hides_only_in_its_place_and_a_rule_showing_elsewhere_does_not_undo_it():
    # Haddock's linuwial.css: captions hidden in a list of fields and in the description,
    # shown in the package header; a dropdown shown on hover is a state a reader reaches
    rules = hidden_rules(
        ".fields .caption { display: none } #description .caption { display: none }"
        " #package-header .caption { display: inline-block } .menu .sub { display: none }"
        " .menu li:hover .sub { display: block }"
    )
    page = html.fromstring(
        "<div><div id='package-header'><span class='caption'>pkg-1.0</span></div>"
        "<div id='description'><p class='caption'>Description</p></div><div class='subs fields'>"
        "<p class='caption'>Fields</p></div><p class='caption'>Constructors</p>"
        "<ul class='menu'><li><ul class='sub'><li>Item</li></ul></li></ul></div>"
    )
    visibility = Visibility(rules)
    hidden = [" ".join(node.text_content().split()) for node in page.iter() if visibility.hidden(node)]
    assert hidden == ["Description", "Fields"]
