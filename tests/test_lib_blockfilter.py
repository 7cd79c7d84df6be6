"""crawler.lib.blockfilter: the learned step of the selection, on article pages only."""

import json
from pathlib import Path
from string import Template

import pytest
from lxml import html

from crawler.lib import blockfilter
from crawler.lib.maincontent import select_by_rules, select_main_content
from crawler.lib.nodes import Visibility
from tests.convert import html_bytes_to_markdown
from tests.test_e2e_real_markup import MOUSE

FIXTURE = Path(__file__).parent / "fixtures" / "real-markup" / "news_counter.html"
PARAGRAPHS = MOUSE  # the article of the end-to-end test's page
OG_ARTICLE = '<meta property="og:type" content="article">'


def counter_page(head=OG_ARTICLE, extra=""):
    text = Template(FIXTURE.read_text()).substitute(count="9", paragraphs="".join(f"<p>{p}</p>" for p in PARAGRAPHS))
    return text.replace(OG_ARTICLE, head).replace("</div></div>", extra + "</div></div>").encode()


def test_the_model_file_is_the_one_its_features_need():
    model = json.loads(blockfilter.MODEL_FILE.read_text())
    assert tuple(model["features"]) == blockfilter.FEATURES
    assert len(model["weights"]) == len(blockfilter.FEATURES) == len(blockfilter.WEIGHTS)
    assert 0.5 <= blockfilter.THRESHOLD < 1 and 0 < blockfilter.MAX_SHARE <= 0.5
    assert "dev part" in model["fitted_on"]  # never the test part


def test_a_counter_after_an_article_goes_on_a_page_that_says_it_is_an_article():
    out = html_bytes_to_markdown(counter_page(), "https://blog.example/maus.html")
    assert all(p in out for p in PARAGRAPHS) and "Wer Fragen hat" in out
    assert "Gratis-Artikel" not in out
    selection = select_main_content(html.fromstring(counter_page()))
    assert selection.learned == 1


@pytest.mark.parametrize(
    "head",
    [
        "",  # says nothing: a landing page, a price list, a form are left to the rules
        '<meta property="og:type" content="website">',
        OG_ARTICLE + '<meta name="generator" content="Sphinx 7.2">',  # documentation
    ],
)
def test_the_step_leaves_other_pages_alone(head):
    out = html_bytes_to_markdown(counter_page(head), "https://blog.example/maus.html")
    assert "Noch 9 Gratis-Artikel diesen Monat." in out


def test_code_makes_a_page_documentation():
    out = html_bytes_to_markdown(counter_page(extra="<pre>make install</pre>"), "https://blog.example/maus.html")
    assert "Gratis-Artikel" in out


@pytest.mark.parametrize(
    "json_ld",
    [
        '{"@type": "NewsArticle", "headline": "x"}',
        '{"@context": "https://schema.org", "@type": ["BlogPosting"]}',
        '{"@type":"Article"}',
    ],
)
def test_json_ld_says_article(json_ld):
    page = f'<html><head><script type="application/ld+json">{json_ld}</script></head><body></body></html>'
    assert blockfilter.is_article(html.fromstring(page))


def test_json_ld_of_another_kind_does_not():
    page = '<html><head><script type="application/ld+json">{"@type": "Product"}</script></head></html>'
    assert not blockfilter.is_article(html.fromstring(page))


def blocks_of(body):
    root = html.fromstring(f"<html><head>{OG_ARTICLE}</head><body><main>{body}</main></body></html>")
    visibility = Visibility.of(root)
    selection = select_by_rules(root, visibility)
    return blockfilter.judged_blocks(selection.root, selection.skip, visibility)


def test_the_title_a_caption_and_a_form_are_never_the_models():
    prose = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    blocks = blocks_of(
        f"<h1>Die Maus wird 50</h1>{prose}<figure><img src='m.jpg'><figcaption>Die erste Maus, 1968."
        f"</figcaption></figure><form><p>Ihre E-Mail-Adresse</p></form>{prose}"
    )
    texts = {b.text_content(): b for b in blocks}
    chosen = blockfilter.choose(blocks, [0.99 if b.tag != "p" or b.getparent().tag == "form" else 0.0 for b in blocks])
    assert texts["Die Maus wird 50"] not in chosen
    assert texts["Die erste Maus, 1968."] not in chosen
    assert texts["Ihre E-Mail-Adresse"] not in chosen


def test_a_heading_goes_only_with_its_section():
    prose = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    blocks = blocks_of(f"<h1>T</h1>{prose}<h2>Mehr</h2><p>Eins.</p><p>Zwei.</p><h2>Zuletzt</h2><p>Drei.</p>")
    scores = [0.99 if b.text_content() in ("Mehr", "Eins.", "Zuletzt", "Drei.") else 0.0 for b in blocks]
    chosen = {b.text_content() for b in blockfilter.choose(blocks, scores)}
    assert chosen == {"Eins.", "Zuletzt", "Drei."}  # "Mehr" stays: "Zwei." of its section stays


def test_nothing_goes_when_the_model_would_take_most_of_the_page():
    prose = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    blocks = blocks_of(f"<h1>T</h1>{prose}")
    assert blockfilter.choose(blocks, [0.99] * len(blocks)) == []


def test_a_score_is_a_probability_and_the_same_every_time():
    rows = blockfilter.features(blocks_of("<h1>T</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)))
    first = [blockfilter.score(row) for row in rows]
    assert first == [blockfilter.score(row) for row in rows]
    assert all(0.0 <= s <= 1.0 for s in first)
