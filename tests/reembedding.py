"""What re-chunking a page costs in embeddings, by how point IDs are made: the
measure the chunking and vector sync tests hold the sync to."""

from __future__ import annotations


def reembedded_by_position(old: list[str], new: list[str]) -> tuple[int, int]:
    """What position-keyed IDs (``url|chunk_index``) would cost to go from the chunk
    content hashes ``old`` to ``new``: (embeddings, deletions). Every index whose
    content differs or is new is re-embedded; surplus old indexes are deleted.

    >>> reembedded_by_position(["a", "b", "c"], ["x", "a", "b", "c"])
    (4, 0)
    """
    embeds = sum(1 for i, h in enumerate(new) if i >= len(old) or old[i] != h)
    return embeds, max(0, len(old) - len(new))


def reembedded_by_content(old: list[str], new: list[str]) -> tuple[int, int]:
    """The same for content-derived IDs (the multiset of content hashes), as
    :func:`crawler.lib.chunking.point_id` makes them.

    >>> reembedded_by_content(["a", "b", "c"], ["x", "a", "b", "c"])
    (1, 0)
    """
    remaining: dict[str, int] = {}
    for h in old:
        remaining[h] = remaining.get(h, 0) + 1
    embeds = 0
    for h in new:
        if remaining.get(h, 0):
            remaining[h] -= 1
        else:
            embeds += 1
    return embeds, sum(remaining.values())
