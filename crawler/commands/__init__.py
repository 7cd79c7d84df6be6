"""The package's commands: ``process``, ``cache``, ``vectors``, ``boilerplate``, in every
project of an environment the package is installed in (the ``scrapy.commands`` entry
points of pyproject.toml), and ``crawl`` (Scrapy's, with plain start-up errors), this
checkout's own: its settings name this package in ``COMMANDS_MODULE``, which registers
all five (the same classes as the entry points: Scrapy keeps one per name)."""
