"""The parts of the ``scrapy cache`` command apart from the command that parses its
options: finding pages (:mod:`.find`), diffs (:mod:`.diff`), tables (:mod:`.tables`),
prune and verify (:mod:`.repair`)."""
