"""Plain-text tables for command output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, right: Sequence[int] = ()) -> str:
    """Columns padded to their widest cell; columns in ``right`` right-aligned.

    >>> print(table(["name", "n"], [["a", 1], ["bbb", 22]], right=[1]))
    name   n
    a      1
    bbb   22
    """
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def human_bytes(size: float) -> str:
    """
    >>> human_bytes(512), human_bytes(2_500_000)
    ('512 B', '2.4 MB')
    """
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover
