"""A page's status, as the ledger records it in the cache's index, a run report counts
it and ``scrapy cache ls --status`` filters on it. A leaf apart from the cache's
records (:mod:`crawler.cache.records` names them too) so that a command's options name
them without loading the cache package."""

STATUS_NEW = "new"
STATUS_CHANGED = "changed"
STATUS_UNCHANGED = "unchanged"
STATUS_REMOVED = "removed"
STATUSES = (STATUS_NEW, STATUS_CHANGED, STATUS_UNCHANGED, STATUS_REMOVED)
