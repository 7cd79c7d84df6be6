"""What the user asked that the crawl ignores (a misspelt setting or spider argument, a
setting that does nothing without another): warned of at start-up, counted in the
summary line, listed in the run report's ``mistakes``, refused by the cron wrapper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mistake:
    """One thing asked and ignored.

    >>> Mistake("setting", "DOWNLOAD_DELAYY", meant="DOWNLOAD_DELAY").line
    'Unknown setting DOWNLOAD_DELAYY, ignored (did you mean DOWNLOAD_DELAY?)'
    >>> Mistake("spider argument", "colour", hint="every argument: docs/commands.md").short
    'colour (every argument: docs/commands.md)'
    >>> Mistake("setting", "REVISIT_MIN_INTERVAL", why="REVISIT_ENABLED is off").line
    'REVISIT_MIN_INTERVAL is set but REVISIT_ENABLED is off: ignored'
    """

    #: ``setting`` or ``spider argument``
    kind: str
    name: str
    #: the known name it was likely meant to be
    meant: str | None = None
    #: why a known name is ignored ("" for an unknown name)
    why: str = ""
    #: where to look, for an unknown name not close to any
    hint: str = ""

    @property
    def line(self) -> str:
        """The warning's line."""
        if self.why:
            return f"{self.name} is set but {self.why}: ignored"
        return f"Unknown {self.kind} {self.name}, ignored{self._aside}"

    @property
    def short(self) -> str:
        """What the summary line says of it."""
        return f"{self.name} ({self.why})" if self.why else f"{self.name}{self._aside}"

    @property
    def _aside(self) -> str:
        if self.meant:
            return f" (did you mean {self.meant}?)"
        return f" ({self.hint})" if self.hint else ""

    def as_dict(self) -> dict[str, Any]:
        """The run report's entry."""
        return {"kind": self.kind, "name": self.name, "meant": self.meant, "message": self.line}
