"""The sub-commands of ``scrapy cache``, imported when it runs (crawler/commands/cache.py
parses their options): :mod:`.run` runs one and says what went wrong; :mod:`.stats`,
:mod:`.pages` (ls, show, export), :mod:`.changes` (ls --run, diff), :mod:`.upkeep`
(invalidate, prune, verify); their parts: finding pages (:mod:`.find`), diffs
(:mod:`.diff`), tables (:mod:`.tables`)."""

#: the lines of an extraction ``cache show`` prints unless asked for all (``--extraction``);
#: here, where the command's help reads it without importing a sub-command
SHOWN_EXTRACTION_LINES = 60
