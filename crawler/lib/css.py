"""What a page's stylesheets hide: the simple ``display: none`` rules a reader never sees past.

Hidden text (Doxygen's code tooltips, a ``.hidden`` class) is no text a reader sees.
Only what is certain is taken, because dropped text is never hashed:

- a rule hides when it sets ``display: none`` (or ``visibility: hidden``) on a simple
  compound selector (``div.ttc``, ``.hidden``, ``#popup``) or a descendant of them;
  other combinators, attributes and pseudo-classes are conditional and hide nothing;
- rules inside ``@media`` hide nothing, but for ``@media screen`` and ``@media all``;
- a class, id or tag that any rule shows again (``.collapse.in``, ``:hover``) is a
  state a reader can reach: no rule naming it hides, nor hides an element carrying it.

Several stylesheets merge as one; results are memoised by the CSS text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin

if TYPE_CHECKING:
    from lxml.etree import _Element

COMMENT_RE = re.compile(r"/\*.*?\*/", re.DOTALL)
#: a quoted string (``content: "{"``), emptied before the blocks are read
STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
#: pseudo-classes, pseudo-elements and attribute selectors of a compound
PSEUDO_RE = re.compile(r"(?<!\\)::?[-\w]+(?:\([^)]*\))?|\[[^\]]*\]")
#: a class or an id of a compound, with its escaped characters (``.md\\:block``)
ESCAPED_CLASS_RE = re.compile(r"\.((?:[-\w]|\\.)+)")
ESCAPED_ID_RE = re.compile(r"#((?:[-\w]|\\.)+)")
#: at-rules nested deeper than this are passed over
MAX_NESTING = 16
#: one simple compound selector: a tag name, classes and at most one id, nothing else
COMPOUND_RE = re.compile(r"^(?P<tag>[a-zA-Z][a-zA-Z0-9-]*)?(?P<rest>(?:[.#][-\w]+)+)?$")
PART_RE = re.compile(r"[.#][-\w]+")
HIDES_RE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!\s*important\s*)?(?:;|$)", re.I)
SHOWS_RE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*(?!none\b)[a-z-]+|visibility\s*:\s*visible)", re.I)
#: the names a selector mentions (to find what a rule shows again)
NAME_RE = re.compile(r"([.#])((?:[-\w]|\\.)+)")
#: media queries that apply to every screen
SCREEN_MEDIA_RE = re.compile(r"^@media\s+(?:only\s+)?(?:screen|all)\s*$", re.I)


@dataclass(frozen=True)
class Compound:
    """A simple compound selector: ``tag`` (or ``""``: any), the classes it needs, its id;
    ``within``: the compounds of a descendant selector before it, nearest first
    (``.fields .caption``: the caption of a list of fields)."""

    tag: str
    classes: frozenset[str]
    ident: str
    within: tuple[Compound, ...] = ()

    def matches(self, tag: str, classes: frozenset[str], ident: str) -> bool:
        return (not self.tag or self.tag == tag) and self.classes <= classes and (not self.ident or self.ident == ident)

    def matches_above(self, node: _Element) -> bool:
        """Whether ``node``'s ancestors hold the compounds of ``within``, in their order."""
        ancestors = node.iterancestors()
        for compound in self.within:
            for ancestor in ancestors:
                get = ancestor.attrib.get
                classes = get("class")
                tokens = frozenset(classes.split()) if classes else frozenset()
                if compound.matches(ancestor.tag, tokens, get("id") or ""):
                    break
            else:
                return False
        return True


@dataclass(frozen=True)
class HiddenRules:
    """The elements a set of stylesheets hides, by class and by id; ``shown``: the
    classes and ids (``.name``, ``#name``) any of its rules shows again, which hide
    nothing in a stylesheet merged with these."""

    by_class: dict[str, tuple[Compound, ...]] = field(default_factory=dict)
    by_id: dict[str, tuple[Compound, ...]] = field(default_factory=dict)
    by_tag: dict[str, tuple[Compound, ...]] = field(default_factory=dict)
    shown: frozenset[str] = frozenset()
    #: the elements some rule shows again (the last compound of its selector, without
    #: its pseudo-classes): an element one of them selects is seen
    showing: tuple[Compound, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.by_class or self.by_id or self.by_tag)

    def hides(self, node: _Element) -> bool:
        """Whether these rules hide ``node`` itself.

        >>> from lxml import html
        >>> rules = hidden_rules("div.ttc { position: absolute; display: none }")
        >>> tip, span = html.fromstring('<div class="ttc x">tip</div>'), html.fromstring('<span class="ttc">')
        >>> rules.hides(tip), rules.hides(span)
        (True, False)
        """
        tag = node.tag
        if not isinstance(tag, str):
            return False
        get = node.attrib.get
        classes = get("class")
        ident = get("id") or ""
        tokens = frozenset(classes.split()) if classes else frozenset()
        candidates: list[Compound] = []
        for token in tokens:
            candidates.extend(self.by_class.get(token, ()))
        if ident:
            candidates.extend(self.by_id.get(ident, ()))
        candidates.extend(self.by_tag.get(tag, ()))
        if not any(rule.matches(tag, tokens, ident) and rule.matches_above(node) for rule in candidates):
            return False
        # a state some rule shows again (``section.active``, ``md:block``, ``#intro``)
        # may be this element's: then it is seen
        return not any(rule.matches(tag, tokens, ident) and rule.matches_above(node) for rule in self.showing)

    def merged(self, other: HiddenRules) -> HiddenRules:
        """These rules and ``other``'s, as one stylesheet of both: what either shows
        again hides nothing.

        >>> framework = hidden_rules(".collapse { display: none } .modal { display: none }")
        >>> theme = hidden_rules(".collapse.show { display: block }")
        >>> sorted(framework.merged(theme).by_class), sorted(theme.merged(framework).by_class)
        (['modal'], ['modal'])
        """
        if not other and not other.shown:
            return self
        if not self and not self.shown:
            return other
        return _build([*self._all(), *other._all()], self.shown | other.shown, self.showing + other.showing)

    def _all(self) -> Iterator[Compound]:
        seen: set[Compound] = set()
        for table in (self.by_class, self.by_id, self.by_tag):
            for rules in table.values():
                for rule in rules:
                    if rule not in seen:
                        seen.add(rule)
                        yield rule


NO_RULES = HiddenRules()


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """The top-level ``(prelude, body)`` pairs of ``css`` (comments removed): a rule's
    selectors and declarations, or an at-rule and its nested rules."""
    depth = 0
    start = 0
    prelude = ""
    body_start = 0
    for match in re.finditer(r"[{};]", css):
        char = match.group()
        if char == "{":
            if depth == 0:
                prelude = css[start : match.start()].strip()
                body_start = match.end()
            depth += 1
        elif char == "}":
            if depth == 0:  # a stray brace: start again after it
                start = match.end()
                continue
            depth -= 1
            if depth == 0:
                yield prelude, css[body_start : match.start()]
                start = match.end()
        elif depth == 0:  # an at-rule without a block (@import, @charset)
            start = match.end()


def _compound(selector: str) -> Compound | None:
    """``selector`` as a simple compound selector, or a descendant selector of such
    compounds (``.fields .caption``), or ``None`` when it is anything else.

    >>> _compound("div.ttc"), _compound(".a > .b"), _compound("a:hover")
    (Compound(tag='div', classes=frozenset({'ttc'}), ident='', within=()), None, None)
    >>> found = _compound("#description  .caption")
    >>> sorted(found.classes), [c.ident for c in found.within]
    (['caption'], ['description'])
    """
    parts = selector.split()
    if not parts:
        return None
    compounds = [_simple(part, last=index == len(parts) - 1) for index, part in enumerate(parts)]
    if any(compound is None for compound in compounds):
        return None
    *above, last = compounds
    assert last is not None
    return Compound(last.tag, last.classes, last.ident, tuple(c for c in reversed(above) if c is not None))


def _simple(selector: str, *, last: bool = True) -> Compound | None:
    """One simple compound selector, or ``None``; the page's root elements only above
    another (a page hidden whole until a script shows it is never taken)."""
    match = COMPOUND_RE.match(selector)
    if match is None:
        return None
    classes: set[str] = set()
    ident = ""
    for part in PART_RE.findall(match.group("rest") or ""):
        if part[0] == ".":
            classes.add(part[1:])
        elif ident:
            return None
        else:
            ident = part[1:]
    tag = (match.group("tag") or "").lower()
    if last and tag in ("html", "body", "main", "head"):
        return None
    return Compound(tag, frozenset(classes), ident)


def _walk(css: str, screen: bool, depth: int = 0) -> Iterator[tuple[str, str, bool]]:
    """Every rule of ``css`` as ``(selectors, declarations, applies)``: ``applies`` is
    false inside conditional at-rules; at-rules nested deeper than ``MAX_NESTING`` are
    passed over."""
    for prelude, body in _blocks(css):
        if prelude.startswith("@"):
            nested = prelude.lower().startswith(("@media", "@supports", "@layer", "@container", "@document"))
            if nested and depth < MAX_NESTING:
                unconditional = bool(SCREEN_MEDIA_RE.match(prelude)) or prelude.lower().startswith("@layer")
                yield from _walk(body, screen and unconditional, depth + 1)
            continue
        yield prelude, body, screen


def _showing(selectors: str) -> Iterator[Compound]:
    r"""The elements a rule that shows selects: the last compound of each of its
    selectors, unescaped, without pseudo-classes and attributes; with the compounds above
    it when the selector is a plain descendant selector (``#package-header .caption``).

    >>> [(c.tag, sorted(c.classes)) for c in _showing("section.active, .md\\:block, ul > li:hover")]
    [('section', ['active']), ('', ['md:block']), ('li', [])]
    >>> [c.ident for c in next(_showing("#package-header .caption")).within]
    ['package-header']
    """
    for selector in selectors.split(","):
        parts = re.split(r"(?<!\\)[\s>+~]+", selector.strip())
        last = PSEUDO_RE.sub("", parts[-1])
        tag = re.match(r"[a-zA-Z][-\w]*", last)
        classes = frozenset(name.replace("\\", "") for name in ESCAPED_CLASS_RE.findall(last))
        idents = [name.replace("\\", "") for name in ESCAPED_ID_RE.findall(last)]
        if tag or classes or idents:
            descendant = _compound(selector) if len(parts) > 1 else None
            within = descendant.within if descendant is not None else ()
            yield Compound(tag.group().lower() if tag else "", classes, idents[0] if idents else "", within)


def _covers(showing: Compound, hiding: Compound) -> bool:
    """Whether a rule showing ``showing`` may show what the descendant rule hiding
    ``hiding`` hides: it selects the same element, in the same places or anywhere."""
    if not (showing.classes <= hiding.classes and showing.ident in ("", hiding.ident)):
        return False
    if showing.tag not in ("", hiding.tag):
        return False
    names = {name for compound in hiding.within for name in (*compound.classes, compound.ident) if name}
    return all(name in names for compound in showing.within for name in (*compound.classes, compound.ident) if name)


def _names(selectors: str) -> set[str]:
    r"""The classes (``.name``) and ids (``#name``) a list of selectors mentions,
    unescaped.

    >>> sorted(_names(".md\\:block, section.active > p, #intro"))
    ['#intro', '.active', '.md:block']
    """
    return {kind + name.replace("\\", "") for kind, name in NAME_RE.findall(selectors)}


def _build(hiding: Iterable[Compound], shown: Iterable[str], showing: tuple[Compound, ...] = ()) -> HiddenRules:
    shown_names = set(shown)
    by_class: dict[str, list[Compound]] = {}
    by_id: dict[str, list[Compound]] = {}
    by_tag: dict[str, list[Compound]] = {}
    for rule in hiding:
        if rule.within:  # (a descendant rule: shown again only by a rule that may select the same)
            if any(_covers(shows, rule) for shows in showing):
                continue
        elif ({"." + name for name in rule.classes} | ({"#" + rule.ident} if rule.ident else set())) & shown_names:
            continue
        if rule.classes:
            by_class.setdefault(min(rule.classes), []).append(rule)
        elif rule.ident:
            by_id.setdefault(rule.ident, []).append(rule)
        elif rule.tag:
            by_tag.setdefault(rule.tag, []).append(rule)
    return HiddenRules(
        {k: tuple(v) for k, v in by_class.items()},
        {k: tuple(v) for k, v in by_id.items()},
        {k: tuple(v) for k, v in by_tag.items()},
        frozenset(shown_names),
        tuple(dict.fromkeys(showing)),
    )


@lru_cache(maxsize=256)
def hidden_rules(css: str) -> HiddenRules:
    """The simple rules of ``css`` that hide what they select (see the module's docstring),
    memoised by the text: for a page's own ``<style>``, which a site repeats on every page.

    >>> rules = hidden_rules('''
    ...   /* Doxygen */ div.ttc { position: absolute; display: none; }
    ...   .collapse { display: none } .collapse.in { display: block }
    ...   @media print { .noprint { display: none } }
    ...   .tabs > .tab { display: none } #popup { visibility: hidden }''')
    >>> sorted(rules.by_class), sorted(rules.by_id)
    (['ttc'], ['popup'])
    """
    return parse_hidden_rules(css)


def parse_hidden_rules(css: str) -> HiddenRules:
    """:func:`hidden_rules`, not memoised: for a stylesheet read once (a site's linked
    stylesheet, up to megabytes, whose rules the caller keeps).

    >>> sorted(parse_hidden_rules("#powerTip { display: none }").by_id)
    ['powerTip']
    """
    if "display" not in css and "visibility" not in css:
        return NO_RULES
    css = STRING_RE.sub('""', COMMENT_RE.sub(" ", css))  # (a brace in a string is no block)
    hiding: list[Compound] = []
    shown: set[str] = set()
    showing: list[Compound] = []
    for selectors, declarations, applies in _walk(css, True):
        if SHOWS_RE.search(declarations):
            shown |= _names(selectors)
            showing.extend(_showing(selectors))
        if applies and HIDES_RE.search(declarations):
            for selector in selectors.split(","):
                compound = _compound(selector)
                if compound is not None:
                    hiding.append(compound)
    return _build(hiding, shown, tuple(showing))


def page_rules(root: _Element) -> HiddenRules:
    """The rules of the page's own ``<style>`` elements.

    >>> from lxml import html
    >>> page = html.fromstring("<html><head><style>.tip{display:none}</style></head><body></body></html>")
    >>> sorted(page_rules(page).by_class)
    ['tip']
    """
    top = root.getroottree().getroot()
    texts = [
        style.text
        for style in top.iter("style")
        if style.text
        and style.get("media", "all") in ("all", "screen")
        and not any(parent.tag in ("template", "noscript") for parent in style.iterancestors())
    ]
    if not texts:
        return NO_RULES
    return hidden_rules("\n".join(texts))


def stylesheet_links(root: _Element, base_url: str) -> list[str]:
    """The absolute URLs (no fragment, each once, in document order) of the stylesheets
    the page holding ``root`` links that apply on a screen (no ``media``, or ``all`` or
    ``screen`` unconditionally; not alternate, not disabled), resolved against ``base_url``.

    >>> from lxml import html
    >>> page = html.fromstring(
    ...     '<html><head><link rel="stylesheet" href="doxygen.css"><link rel="Stylesheet" href="/a.css#x">'
    ...     '<link rel="stylesheet" href="p.css" media="print"><link rel="alternate stylesheet" href="dark.css">'
    ...     '<link rel="stylesheet" href="w.css" media="screen and (min-width: 900px)">'
    ...     '<link rel="stylesheet" href="s.css" media="screen, print"><link rel="icon" href="i.png"></head></html>')
    >>> stylesheet_links(page, "https://example.org/api/file.html")
    ['https://example.org/api/doxygen.css', 'https://example.org/a.css', 'https://example.org/api/s.css']
    """
    urls: list[str] = []
    for link in root.getroottree().getroot().iter("link"):
        rel = (link.get("rel") or "").lower().split()
        href = (link.get("href") or "").strip()
        if "stylesheet" not in rel or "alternate" in rel or not href or link.get("disabled") is not None:
            continue
        if not _screen_media(link.get("media") or ""):
            continue
        url = urldefrag(urljoin(base_url, href))[0]
        if url not in urls:
            urls.append(url)
    return urls


def _screen_media(media: str) -> bool:
    """Whether a ``media`` attribute's list applies on every screen.

    >>> _screen_media(""), _screen_media("Screen, print"), _screen_media("only screen and (max-width: 600px)")
    (True, True, False)
    """
    queries = [query.strip().lower() for query in media.split(",")]
    return not media.strip() or any(query in ("all", "screen", "only screen") for query in queries)
