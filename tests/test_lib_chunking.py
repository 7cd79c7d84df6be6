import random
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.lib.chunking import (
    MAX_FACTOR,
    chunk_markdown,
    is_boundary,
    point_id,
    split_blocks,
)
from tests.reembedding import reembedded_by_content, reembedded_by_position
from tests.vectorpages import page_markdown, paragraph, paragraphs, reference_blocks

TARGET = 300


def hashes(markdown, target=TARGET):
    return [c.content_hash for c in chunk_markdown(markdown, target)]


def test_blocks_headings_code_and_paragraphs():
    md = "# Guide\n\nIntro line one\nline two\n\n```python\ndef f():\n\n    return 1\n```\n## Install\nRun pip."
    kinds = [(b.kind, b.level) for b in split_blocks(md)]
    assert kinds == [("heading", 1), ("text", 0), ("code", 0), ("heading", 2), ("text", 0)]
    code = split_blocks(md)[2].text
    assert code.startswith("```python") and "\n\n    return 1" in code


def test_chunks_follow_headings_and_carry_their_path():
    md = "# Guide\n\nIntro.\n\n## Install\n\nRun pip.\n\n### Linux\n\nUse apt.\n\n## Usage\n\nCall run()."
    chunks = chunk_markdown(md, 1000)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (["Guide"], "Intro."),
        (["Guide", "Install"], "Run pip."),
        (["Guide", "Install", "Linux"], "Use apt."),
        (["Guide", "Usage"], "Call run()."),
    ]
    assert chunks[1].embed_text == "Guide > Install\n\nRun pip."
    assert [c.index for c in chunks] == [0, 1, 2, 3]


def test_code_block_kept_whole_where_it_fits_and_fenced_pieces_when_not():
    code = "```python\n" + "\n".join(f"x{i} = {i}  # a line of code" for i in range(20)) + "\n```"
    assert len(code) < MAX_FACTOR * TARGET
    [chunk] = [c for c in chunk_markdown(f"# T\n\nText.\n\n{code}\n\nMore.", TARGET) if "x0 =" in c.text]
    assert "x19 = 19" in chunk.text  # whole
    huge = "```python\n" + "\n".join(f"y{i} = {i}  # another line of code" for i in range(200)) + "\n```"
    pieces = [c.text for c in chunk_markdown(f"# T\n\n{huge}", TARGET)]
    assert len(pieces) > 1
    assert all(p.startswith("```python\n") and p.endswith("\n```") for p in pieces)
    assert all(len(p) <= MAX_FACTOR * TARGET for p in pieces)
    assert "".join(p for p in pieces).count(" = ") == 200  # every line kept once


def test_chunk_sizes_around_target_and_never_over_the_cap():
    paras = paragraphs(7, 200)
    chunks = chunk_markdown(page_markdown("Big", paras, every=1000), TARGET)
    sizes = [len(c.text) for c in chunks]
    assert max(sizes) <= MAX_FACTOR * TARGET
    assert TARGET / 2 < sum(sizes) / len(sizes) < 2 * TARGET
    assert "\n\n".join(c.text for c in chunks) == "\n\n".join(paras)  # nothing lost or reordered


def test_long_paragraph_split_by_sentences():
    text = " ".join(f"Sentence number {i} says something." for i in range(100))
    chunks = chunk_markdown(text, TARGET)
    assert len(chunks) > 1 and all(len(c.text) <= MAX_FACTOR * TARGET for c in chunks)
    assert " ".join(c.text for c in chunks).split() == text.split()


def test_point_ids_are_uuids_from_content_not_position():
    a = chunk_markdown("# T\n\nSame words.\n\n## U\n\nOther words.", 1000)
    b = chunk_markdown("# T\n\nNew first.\n\n## V\n\nx\n\n# T\n\nSame words.", 1000)
    assert a[0].point_id("page") == b[-1].point_id("page")  # same text and path, other position
    assert a[0].point_id("page") != a[0].point_id("other page")
    assert uuid.UUID(a[0].point_id("page")).version == 8
    # the heading path is part of what is embedded, so of the hash
    assert chunk_markdown("# T\n\nSame words.")[0].content_hash != chunk_markdown("# X\n\nSame words.")[0].content_hash


def test_identical_chunks_get_distinct_ids():
    # blocks of the target size or more always end a chunk
    chunks = chunk_markdown(
        "# T\n\n" + "\n\n".join(["pip install example, then run it with your configuration file"] * 3), 50
    )
    assert len(chunks) == 3
    assert len({c.point_id("p") for c in chunks}) == 3
    assert [c.occurrence for c in chunks] == [0, 1, 2]
    assert point_id("p", chunks[0].content_hash, 1) == chunks[1].point_id("p")


def test_bad_target_is_refused():
    with pytest.raises(ValueError, match="at least 50"):
        chunk_markdown("text", 10)


def twenty_chunk_page():
    """A generated page of exactly 20 chunks at TARGET."""
    for count in range(20, 80):
        paras = paragraphs(1, count)
        if len(chunk_markdown(page_markdown("Guide", paras), TARGET)) == 20:
            return paras
    raise AssertionError("no 20-chunk page")


def test_insert_near_top_of_a_20_chunk_page_reembeds_at_most_2():
    paras = twenty_chunk_page()
    md = page_markdown("Guide", paras)
    old = hashes(md)
    assert len(old) == 20
    rng = random.Random(5)
    for position in range(4):  # before the 1st .. 4th paragraph
        new = hashes(md.replace(paras[position], f"Inserted: {paragraph(rng)}\n\n{paras[position]}"))
        embeds, deletes = reembedded_by_content(old, new)
        assert 1 <= embeds <= 2, position
        assert deletes <= 1
        # position-keyed ids (url|chunk_index) on the same chunks: every chunk after
        # the insertion once it adds a chunk
        by_position = reembedded_by_position(old, new)[0]
        assert by_position >= embeds
        if len(new) != len(old):
            assert by_position >= 15
        print(f"insert before paragraph {position + 1}: {embeds} by content, {by_position} by position")


def test_insert_anywhere_many_pages_at_most_2():
    rng = random.Random(11)
    worst = 0
    for seed in range(150):
        paras = paragraphs(100 + seed, rng.randint(20, 60))
        md = page_markdown("Page", paras)
        base = hashes(md)
        for k in range(0, len(paras), 3):
            new = md.replace(paras[k], f"New: {paragraph(rng)}\n\n{paras[k]}")
            worst = max(worst, reembedded_by_content(base, hashes(new))[0])
    assert worst <= 2


def insertion_costs(target, pages=80, positions=40):
    """Embeddings after inserting a paragraph before each of the first blocks of
    generated reference pages (short list items and paragraphs: long runs without a
    boundary): {embeddings: insertions}."""
    costs = {}
    for seed in range(pages):
        rng = random.Random(seed)
        blocks = reference_blocks(rng, 150)
        base = hashes("\n\n".join(blocks), target)
        for pos in range(1, positions):
            new = [*blocks[:pos], "Inserted: " + paragraph(rng, (10, 60)), *blocks[pos:]]
            embeds = reembedded_by_content(base, hashes("\n\n".join(new), target))[0]
            costs[embeds] = costs.get(embeds, 0) + 1
    return costs


@pytest.mark.parametrize(("target", "most_over_2"), [(1000, 0.001), (300, 0.02)])
def test_insertion_into_long_runs_does_not_shift_later_cuts(target, most_over_2):
    # runs of more than 3x the target without a boundary are cut by content: cutting
    # them by size from their start (the review's case: 0.43% of these insertions
    # re-embedded 3 chunks at target 1000, 3.6% 3 or 4 at target 300) shifted every
    # later cut. What is left: the chunk an insertion lands in splits in three when
    # it and the new paragraph exceed the cap, or the insertion moves a cut
    costs = insertion_costs(target)
    total = sum(costs.values())
    over = sum(n for embeds, n in costs.items() if embeds > 2)
    print(f"target {target}: {sorted(costs.items())}, over 2: {over}/{total} = {over / total:.2%}")
    assert total == 80 * 39
    assert over / total <= most_over_2
    assert max(costs) <= 4


def test_a_long_run_is_cut_where_its_blocks_say_not_by_its_start():
    target = 100
    items = [f"- item {i}: {paragraph(random.Random(i), (2, 4))}" for i in range(60)]
    items = [item for item in items if not is_boundary(item, target)][:40]  # one run, no boundary
    cut = [c.text for c in chunk_markdown("\n\n".join(["# T", *items]), target)]
    assert len(cut) > 1 and all(len(c) <= MAX_FACTOR * target for c in cut)
    # an item inserted at the top: every chunk but the first is unchanged
    shifted = [c.text for c in chunk_markdown("\n\n".join(["# T", "- item new: a short one", *items]), target)]
    assert shifted[1:] == cut[1:] or shifted[2:] == cut[1:]


def test_identical_blocks_cut_quickly_in_balanced_pieces():
    chunks = chunk_markdown("\n\n".join(["- same item"] * 20000), 50)
    assert all(len(c.text) <= 150 for c in chunks) and len(chunks) >= 20000 * 13 // 150
    assert sum(c.text.count("same item") for c in chunks) == 20000


def test_closing_hashes_need_a_space_before_them():
    headings = [b.text for b in split_blocks("## Using C#\n\n# Title ##\n\n### F# and C# #\n\n#### ####")]
    assert headings == ["Using C#", "Title", "F# and C#", ""]


def test_edit_of_a_paragraph_reembeds_the_chunks_holding_it():
    rng = random.Random(3)
    exact = 0
    trials = 150
    for trial in range(trials):
        paras = paragraphs(300 + trial, 30)
        old = hashes(page_markdown("Page", paras))
        k = rng.randrange(len(paras))
        edited = [*paras]
        edited[k] = paras[k] + " Edited " + str(trial)
        chunks = chunk_markdown(page_markdown("Page", edited), TARGET)
        holding = sum(1 for c in chunks if f"Edited {trial}" in c.text)
        embeds, _ = reembedded_by_content(old, [c.content_hash for c in chunks])
        assert holding == 1
        assert holding <= embeds <= holding + 1
        exact += embeds == holding
    # the boundary after a paragraph is drawn from its first words, against its size:
    # an edit after them moves a boundary only when the size change crosses the draw
    # (about size change / target of such edits; here +16 characters on 300)
    assert exact >= 0.9 * trials


LINES = ["# H", "## Using C#", "text line", "", "```py", "```", "~~~", "  - item", "| a |"]


@given(st.lists(st.sampled_from(LINES)))
def test_split_blocks_never_loses_a_line(lines):
    """Every non-blank line is in exactly one block (a heading as its title), in order;
    ``## Using C#`` read as a heading is always titled ``Using C#``."""
    kept = []
    for block in split_blocks("\n".join(lines)):
        if block.kind == "heading":
            assert block.text in ("H", "Using C#")
            kept.append("## Using C#" if block.text == "Using C#" else "# H")
        else:
            kept.extend(line for line in block.text.split("\n") if line.strip())
    assert kept == [line for line in lines if line.strip()]
