"""Project commands (``COMMANDS_MODULE``): ``crawl`` (Scrapy's, with plain start-up
errors), ``process``, ``cache``, ``vectors``, ``boilerplate``."""
