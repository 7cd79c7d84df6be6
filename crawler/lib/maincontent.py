"""Where a page's main content is, with or without semantic markup: its container.

Recall first: text that is dropped is never hashed, so a block leaves only on evidence.
One walk measures every element (:mod:`crawler.lib.pagewalk`), chrome is decided by
evidence (:mod:`crawler.lib.chrome`), and this module chooses the container: the
**scored root** (the deepest element holding most of the content weight, widened to the
siblings that continue it: :mod:`crawler.lib.siblings`), or a **semantic container**
(``<main>``, ``role=main``, ``<article>``, ``#content``...) when it agrees with it;
joined to the page's title block (:mod:`crawler.lib.titles`); **audited**: when it
leaves out more than ``AUDIT_CHARS`` and ``AUDIT_SHARE`` of what it selected, it is
widened, and ``Selection.widened`` says so on the crawl's first run. What the rules
propose to leave out of it is decided in one place (:mod:`crawler.lib.keepout`); the
ways around the page inside it leave by their shape (:mod:`crawler.lib.innernav`: a
letter bar at its start, a closed drawer repeating it). Pure functions over an lxml
tree, never modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from crawler.lib.blockfilter import dropped, is_documentation, is_generated_documentation
from crawler.lib.innernav import inner_navigation
from crawler.lib.keepout import contents_before, dangling, kept_out, named_like_chrome
from crawler.lib.nodes import Visibility, body_of, is_ancestor, text_of
from crawler.lib.sections import holds_text, link_targets, visible_words
from crawler.lib.siblings import with_siblings
from crawler.lib.titles import join_title, title_block, title_outside

if TYPE_CHECKING:
    from lxml.etree import _Element

from crawler.lib.chrome import beside_core, decide_chrome, teaser_stacks
from crawler.lib.pagewalk import (
    CONTENT,
    EMPTY,
    INLINE_TAGS,
    SMALL_CHARS,
    VISIBLE,
    Texts,
    kept_chars,
    measure_body,
    prose_chars,
    unlabelled_chars,
)

#: an element holding this share of the page's content weight is the scored root
MAJORITY = 0.7
#: the audit: the selection is widened when it leaves out more content weight than
#: this many characters and this share of what it selected
AUDIT_CHARS = 150
AUDIT_SHARE = 0.25


@dataclass(frozen=True)
class Selection:
    """The main content of a page: write the elements of ``before`` (a title block
    above it), then ``root``, leaving out the elements in ``skip``. ``rule`` names what
    chose the main content (``main``, ``role-main``, ``hint``, ``article``, ``id``,
    ``scored``, ``body``; the root may be an ancestor of what it chose, joined to the
    page's title block, with the rest in ``skip``). ``widened``: the audit found that
    the choice left out ``left_out`` characters of the page's content weight, and took
    an ancestor that holds them instead. ``left_out``: what the final selection leaves
    out of it (characters of visible text outside links and chrome). ``learned``: the
    blocks the learned step left out (:mod:`crawler.lib.blockfilter`; also in ``skip``).
    ``named_out``: the words of the blocks left out of the content container for what
    their class or id names (the audit's figure: no heading of the outline, no
    prose of their own)."""

    root: _Element
    skip: frozenset[_Element] = field(default_factory=frozenset)
    rule: str = "body"
    widened: bool = False
    left_out: int = 0
    before: tuple[_Element, ...] = ()
    learned: int = 0
    named_out: int = 0


#: the order in which semantic hints are tried
RULE_ORDER = ("main", "role-main", "hint", "article", "id")


def _descend(body: _Element, texts: Texts, needed: float) -> _Element:
    """The deepest element holding at least ``needed`` content characters."""
    node = body
    while True:
        best = None
        for child in node:
            text = texts.get(child)
            if text is not None and text[CONTENT] >= needed:
                best = child
                break  # at most one child holds a majority
        if best is None or best.tag in INLINE_TAGS:  # a <font> holding the text is not a container
            return node
        node = best


def _own_story(candidates: list[tuple[str, _Element]], texts: Texts, root: _Element) -> _Element | None:
    """Of several ``<article>`` each holding its own ``<h1>`` (the next stories an
    endless-scroll page appends to its own), the page's: the one whose ``<h1>`` the
    page's ``<title>`` names, else the first."""
    stories = [
        node
        for rule, node in candidates
        if rule == "article" and texts.get(node, EMPTY)[CONTENT] and node.find(".//h1") is not None
    ]
    if len(stories) < 2:
        return None
    chosen = set(stories)
    if any(ancestor in chosen for story in stories for ancestor in story.iterancestors()):
        return None  # stories inside stories: not a stack of them
    title = " ".join(" ".join(node.itertext()) for node in root.getroottree().getroot().iter("title")).lower()
    for story in stories:
        heading = next(story.iter("h1"))
        words = " ".join(text_of(heading).split()).lower()
        if words and words in " ".join(title.split()):
            return story
    return stories[0]


def select_main_content(root: _Element, visibility: Visibility | None = None) -> Selection:
    """The main content of the page whose tree holds ``root``, chosen by the rules
    (:func:`select_by_rules`), less the blocks the learned step says are not the page's
    text (:func:`crawler.lib.blockfilter.dropped`); ``visibility`` says what a reader
    sees of it (:meth:`crawler.lib.nodes.Visibility.of`; by default everything but what
    the page's attributes hide).

    >>> from lxml import html
    >>> page = html.fromstring("<html><body><main><h1>Title</h1><p>Words.</p></main></body></html>")
    >>> selection = select_main_content(page)
    >>> selection.root.tag, selection.learned
    ('main', 0)
    """
    visibility = visibility if visibility is not None else Visibility()
    selection = select_by_rules(root, visibility)
    learned = dropped(selection.root, selection.skip, visibility)
    if learned:  # (no block holding text of the document: see crawler.lib.sections)
        targets = link_targets(selection.root)
        learned = [block for block in learned if not holds_text(block, visibility, targets)]
    if not learned:
        return selection
    return replace(selection, skip=selection.skip | frozenset(learned), learned=len(learned))


def select_by_rules(root: _Element, visibility: Visibility | None = None) -> Selection:
    """The main content of the page whose tree holds ``root``, as the rules choose it;
    ``visibility`` as in :func:`select_main_content`.

    >>> from lxml import html
    >>> page = html.fromstring(
    ...     "<html><body><main></main><div class='wrap'><div class='story'><h1>Title</h1>"
    ...     "<p>" + "Words of the story. " * 20 + "</p></div>"
    ...     "<div class='related'><a href='/a'>Another story</a></div></div></body></html>")
    >>> selection = select_by_rules(page)
    >>> selection.root.get("class"), selection.rule, selection.widened
    ('story', 'hint', False)
    """
    body = body_of(root)
    visibility = visibility if visibility is not None else Visibility()  # (its wrappers are this page's)
    measured = measure_body(body, visibility)
    chrome, named = decide_chrome(body, measured)
    texts = measured.texts
    page = texts.get(body, EMPTY)
    # (asked by the steps below: once a page)
    page_root = body.getroottree().getroot()
    # (a documentation tool's page, or any page with code blocks; a tool's, asked once)
    generated = is_generated_documentation(page_root)
    documentation = generated or is_documentation(page_root)
    targets = link_targets(body)
    skip_candidates = set(chrome)
    candidates = [
        (rule, node)
        for rule, node in measured.candidates
        if not any(ancestor in skip_candidates for ancestor in node.iterancestors())
    ]
    if page[CONTENT] < SMALL_CHARS and SMALL_CHARS <= prose_chars(page) > page[CONTENT] / 0.15:
        # what is not chrome is a trifle beside the prose that is (a forum thread's posts
        # named "comment", an author's text in a box named "author"): the whole body, or
        # the page would send nothing. When that prose is a thread's posts, the links to
        # other pages its shape says are chrome (a rail of "similar topics") still go.
        thread = [node for node in chrome if measured.hinted.get(node) == "comment"]
        shaped: list[_Element] = []
        if SMALL_CHARS <= sum(prose_chars(texts[n]) for n in thread) > page[CONTENT] / 0.15:
            shaped = [
                node
                for node in chrome
                # unhinted chrome (shaped as a rail) or hinted "related" (or under such a heading)
                if node not in named and measured.hinted.get(node, "related") == "related"
            ]
        return _finish(
            body,
            "body",
            texts,
            shaped,
            page,
            visibility,
            widened=bool(chrome),
            named=named,
            documentation=documentation,
            generated=generated,
            targets=targets,
        )
    story = _own_story(candidates, texts, body)
    if story is not None:
        return _finish(
            story,
            "article",
            texts,
            chrome + measured.furniture,
            page,
            visibility,
            named=named,
            related=measured.related,
            furniture=measured.furniture,
            documentation=documentation,
            generated=generated,
            targets=targets,
        )
    scored = _descend(body, texts, MAJORITY * page[CONTENT]) if page[CONTENT] else body
    scored_text = texts.get(scored, EMPTY)
    articles = sum(1 for rule, _node in candidates if rule == "article")
    skipped = chrome + measured.furniture
    headings = [h1 for h1 in body.iter("h1") if texts.get(h1, EMPTY)[CONTENT]]
    title = headings[0] if len(headings) == 1 else None
    for rule in RULE_ORDER:
        for candidate_rule, candidate in candidates:
            if candidate_rule != rule:
                continue
            text = texts.get(candidate, EMPTY)
            if candidate is scored or is_ancestor(candidate, scored):
                # what it adds is not chrome: the rest of the page's main text, at most as
                # much again (a bare #main or #content id may wrap the whole layout: less)
                share = 0.25 if rule == "id" and not documentation else 1.0
                agrees = kept_chars(text) - kept_chars(scored_text) <= share * kept_chars(scored_text) + 200
            elif is_ancestor(scored, candidate):
                agrees = text[CONTENT] > 0.5 * scored_text[CONTENT]
            else:
                agrees = False
            if not agrees and page[CONTENT] < SMALL_CHARS:
                # too little prose to judge by (a page of links: an index, a table of
                # contents): the page's own markup
                agrees = bool(kept_chars(text)) and (rule != "article" or articles == 1)
            if not agrees and rule in ("main", "role-main") and kept_chars(text):
                # the page's declared main content, short or mostly links: it stands when
                # it holds the page's title, or leaves out no more than the audit allows
                agrees = (title is not None and is_ancestor(candidate, title)) or not _audit_fails(
                    unlabelled_chars(page) - unlabelled_chars(text), text[CONTENT]
                )
            if agrees:
                core = scored if scored is not candidate and is_ancestor(candidate, scored) else None
                return _finish(
                    candidate,
                    rule,
                    texts,
                    skipped,
                    page,
                    visibility,
                    core=core,
                    named=named,
                    hinted=measured.hinted,
                    related=measured.related,
                    furniture=measured.furniture,
                    documentation=documentation,
                    generated=generated,
                    targets=targets,
                )
    if page[CONTENT] < SMALL_CHARS:  # too little prose to score by, and no markup: all but chrome
        return _finish(
            body,
            "body",
            texts,
            skipped,
            page,
            visibility,
            named=named,
            related=measured.related,
            furniture=measured.furniture,
            documentation=documentation,
            generated=generated,
            targets=targets,
        )
    node, left_out = with_siblings(scored, body, texts, targets, measured.hinted, documentation=documentation)
    return _finish(
        node,
        "scored" if node is not body else "body",
        texts,
        skipped,
        page,
        visibility,
        left_out,
        named=named,
        furniture=measured.furniture,
        documentation=documentation,
        generated=generated,
        targets=targets,
    )


#: what chrome by its name alone may hold of the selection's text before the audit writes it
NAMED_CHARS = 600
NAMED_SHARE = 0.5
#: the same for a stack of teasers beside the article (API docs repeat their items too)
SHAPED_SHARE = 0.25


def _audit_fails(left_out: int, selected: int) -> bool:
    """Whether a selection that leaves out ``left_out`` characters of content weight
    and keeps ``selected`` left out too much (see the module's docstring).

    >>> _audit_fails(100, 0), _audit_fails(500, 3000), _audit_fails(500, 1000)
    (False, False, True)
    """
    return left_out > AUDIT_CHARS and left_out > AUDIT_SHARE * selected


def _finish(
    node: _Element,
    rule: str,
    texts: Texts,
    skipped: list[_Element],
    page: Sequence[int],
    visibility: Visibility,
    left_out: list[_Element] | None = None,
    *,
    widened: bool = False,
    core: _Element | None = None,
    named: set[_Element] | None = None,
    hinted: dict[_Element, str] | None = None,
    related: Sequence[_Element] = (),
    furniture: Sequence[_Element] = (),
    documentation: bool,
    generated: bool,
    targets: frozenset[str],
) -> Selection:
    """The selection of ``node`` with the chrome inside it and the siblings in
    ``left_out`` left out, joined to its title block, audited: widened to an ancestor
    when it leaves out too much of the page's content weight. ``documentation``: the
    page is documentation (:func:`crawler.lib.blockfilter.is_documentation`);
    ``targets``: the ids its links point at (:func:`crawler.lib.sections.link_targets`)."""
    body = body_of(node)
    text = texts.get(node, EMPTY)
    selected = text[CONTENT] - sum(texts.get(n, EMPTY)[CONTENT] for n in left_out or ())
    missed = (
        unlabelled_chars(page)
        - unlabelled_chars(text)
        + sum(unlabelled_chars(texts.get(n, EMPTY)) for n in left_out or ())
    )
    chosen = node
    if _audit_fails(missed, selected) and node is not body:
        widened = True
        left_out = None
        for ancestor in node.iterancestors():
            node = ancestor
            text = texts.get(node, EMPTY)
            selected, missed = text[CONTENT], unlabelled_chars(page) - unlabelled_chars(text)
            if node is body or not _audit_fails(missed, selected):
                break
    # the siblings that did not continue the scored root are inside the chosen container:
    # only the evidence of keepout.kept_out takes them out. What the title's join leaves out
    # (before the title, after an article) is outside the container: never written back
    not_continuing = set(left_out or ())
    outside: set[_Element] = set()
    skip = set(not_continuing)
    skip.update(chrome for chrome in skipped if is_ancestor(node, chrome))
    rails: set[_Element] = set()  # (rails by their shape beside the core, unnamed)
    if core is not None and not widened:
        around, beside, shaped = beside_core(node, core, texts, hinted)
        skip.update(around, beside, shaped)
        named = (named or set()) | set(beside)
        rails.update(around, shaped)
    else:
        shaped = []
    if widened and chosen is not node:
        # the audit widened what was chosen: the stacks of teasers beside it still go
        stacks = [n for n in teaser_stacks(node, core if core is not None else chosen, texts) if n not in skip]
    else:
        stacks = [] if widened else [n for n in teaser_stacks(node, core, texts) if n not in skip]
    skip.update(stacks)
    title = title_block(node, body, texts)
    if title is not None:
        # on a page of documentation what follows the text in the title's container is the
        # container's (a Note box, a second table): only what a rule proposes of it may leave.
        # On other pages it is what follows an article (comments, more stories): it leaves.
        after: list[_Element] = []
        joined = join_title(node, title, outside, after if documentation else None)
        skip.update(outside)
        if documentation:
            # (a block there without a word, an empty footnotes box's rule, says nothing)
            skip.update(block for block in after if not texts.get(block, EMPTY)[VISIBLE])
            skip.update(chrome for chrome in skipped if is_ancestor(joined, chrome) and not is_ancestor(node, chrome))
        # the furniture (known by its words) of the title block and of what lies between it
        # and the text: a byline's date, a credit under the lead picture ("Filed under", "Foto: ...")
        skip.update(
            line
            for line in furniture
            if is_ancestor(joined, line)
            and not is_ancestor(node, line)
            and line.tag not in ("h1", "a")  # (a link standing alone there is the title's: "Locales")
            and next(line.iter("h1"), None) is None
        )
        node = joined
    # chrome by its name, or by the shape of teasers, may not hold much of what the page
    # says: past the audit's bounds it is written, and the selection counts as widened
    selected = texts.get(node, EMPTY)[CONTENT]
    for group, share in ((named or set(), NAMED_SHARE), (set(shaped), SHAPED_SHARE), (set(stacks), SHAPED_SHARE)):
        dropped = [n for n in skip if n in group]
        if dropped and sum(prose_chars(texts.get(n, EMPTY)) for n in dropped) > max(NAMED_CHARS, share * selected):
            skip.difference_update(dropped)
            widened = True
    skip = {n for n in skip if not any(a in skip for a in n.iterancestors())}
    skip = outside | set(
        kept_out(
            node,
            skip - outside,
            texts,
            visibility,
            furniture,
            documentation,
            targets,
            generated=generated,
            beside=not_continuing,
            rails=rails,
        )
    )
    skip.update(dangling(related, node, skip, texts))
    before = tuple(title_outside(node, skip, visibility))
    if generated:
        before += tuple(contents_before(node, skip))  # (a tool's: Node's, outside its container, is not)
    missed = _missed(node, skip, before, texts, page)
    if _audit_fails(missed, texts.get(node, EMPTY)[CONTENT]):
        # what the last steps left out (furniture, lines beside the title, ...) is more
        # than the audit allows of text nothing names as chrome: written back
        skip = {n for n in skip if not unlabelled_chars(texts.get(n, EMPTY))}
        widened = True
        missed = _missed(node, skip, before, texts, page)
    # (after the audit: what repeats the page or names nothing is not text it misses)
    skip.update(inner_navigation(node, skip))
    named_out = sum(visible_words(n, visibility) for n in skip if n not in outside and named_like_chrome(n))
    return Selection(
        node, frozenset(skip), rule=rule, widened=widened, left_out=missed, before=before, named_out=named_out
    )


def _missed(
    node: _Element, skip: set[_Element], before: tuple[_Element, ...], texts: Texts, page: Sequence[int]
) -> int:
    """What of the page's content weight that nothing names as chrome the selection of
    ``node`` (without ``skip``, after ``before``) leaves out."""
    written = unlabelled_chars(texts.get(node, EMPTY)) - sum(unlabelled_chars(texts.get(n, EMPTY)) for n in skip)
    return max(0, unlabelled_chars(page) - written - sum(unlabelled_chars(texts.get(n, EMPTY)) for n in before))
