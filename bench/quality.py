"""Scoring of extracted text against hand-checked gold: word 4-gram shingles.

Pure functions, no I/O. A text is reduced to its tokens (``\\w+``, lower-cased):
markdown syntax (``#``, ``|``, ``*``, backquotes) is not a word and does not count,
the words of a URL do. The tokens give a set of 4-gram shingles; precision is the
share of the output's shingles found in the gold, recall the share of the gold's
shingles found in the output. Shingles (rather than a bag of words) reward words in
the right order: a navigation menu that repeats the headings of the page does not pass
for content, and lines of code run together (``install foonpm start``) do not match.
A text of fewer than four tokens is compared word by word (unigrams).

Shingles do not see line breaks, so code is also scored by line: the share of the gold's
code lines (inside fences) found as a line of the output, however indented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOKEN_RE = re.compile(r"\w+")
FENCE_RE = re.compile(r"^\s*(```|~~~)")
SHINGLE = 4


@dataclass(frozen=True)
class Score:
    """How an output compares to the gold of one page."""

    precision: float
    recall: float
    f1: float
    #: words in the output / words in the gold (1.0: as long as the gold)
    words_ratio: float
    output_words: int
    gold_words: int


def tokens(text: str) -> list[str]:
    """The words of ``text``, lower-cased; markdown syntax is not a word.

    >>> tokens("## Install `fastqueue[toml]`: see https://x.org/a-b")
    ['install', 'fastqueue', 'toml', 'see', 'https', 'x', 'org', 'a', 'b']
    >>> tokens("administrable_role_\u200bauthorizations")
    ['administrable_role_authorizations']
    """
    return TOKEN_RE.findall(text.lower().replace("\u200b", ""))  # (a zero-width space breaks no word)


def shingles(words: list[str], size: int = SHINGLE) -> set[tuple[str, ...]]:
    """The set of runs of ``size`` consecutive words; a text shorter than ``size``
    words gives its words (unigrams) instead.

    >>> sorted(shingles(["a", "b", "c", "d", "e"], 4))
    [('a', 'b', 'c', 'd'), ('b', 'c', 'd', 'e')]
    >>> sorted(shingles(["a", "b"], 4))
    [('a',), ('b',)]
    >>> shingles([], 4)
    set()
    """
    if len(words) < size:
        return {(word,) for word in words}
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def f1_of(precision: float, recall: float) -> float:
    """The harmonic mean of ``precision`` and ``recall`` (0 when both are 0).

    >>> f1_of(0.5, 1.0)
    0.6666666666666666
    >>> f1_of(0.0, 0.0)
    0.0
    """
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def score(output: str, gold: str) -> Score:
    """Compare ``output`` to ``gold``. If either has fewer than four words, both are
    compared as unigrams. An empty output scores 0 (recall 0, precision 0).

    >>> s = score("# Title\\n\\none two three four five six", "Title one two three four")
    >>> s.precision, s.recall, s.words_ratio
    (0.5, 1.0, 1.4)
    >>> score("", "some gold text here").f1
    0.0
    >>> score("hello world", "Hello, world!").f1
    1.0
    """
    out_words, gold_words = tokens(output), tokens(gold)
    size = SHINGLE if min(len(out_words), len(gold_words)) >= SHINGLE else 1
    out_set, gold_set = shingles(out_words, size), shingles(gold_words, size)
    common = len(out_set & gold_set)
    precision = common / len(out_set) if out_set else 0.0
    recall = common / len(gold_set) if gold_set else 0.0
    ratio = len(out_words) / len(gold_words) if gold_words else 0.0
    return Score(precision, recall, f1_of(precision, recall), ratio, len(out_words), len(gold_words))


def code_lines(markdown: str) -> list[str]:
    r"""The non-blank lines inside the fenced code blocks of ``markdown``, stripped.

    >>> code_lines("Run:\n\n```sh\nmake\n\n  make test\n```\nDone.")
    ['make', 'make test']
    """
    lines: list[str] = []
    inside = False
    for line in markdown.splitlines():
        if FENCE_RE.match(line):
            inside = not inside
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def code_line_recall(output: str, gold: str) -> float | None:
    r"""The share of the gold's code lines that are a line of ``output`` (stripped),
    ``None`` when the gold has no code. Lines run together, or code turned into inline
    text, do not count.

    >>> gold = "```\nnpm run build\nnpm start\n```"
    >>> code_line_recall("```\nnpm run buildnpm start\n```", gold)
    0.0
    >>> code_line_recall("```bash\n  npm run build\nnpm start\n```", gold)
    1.0
    >>> code_line_recall("anything", "no code here") is None
    True
    """
    wanted = code_lines(gold)
    if not wanted:
        return None
    have = {line.strip() for line in output.splitlines()}
    return sum(line in have for line in wanted) / len(wanted)
