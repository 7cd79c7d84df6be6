"""Project commands (``COMMANDS_MODULE``): ``crawl`` (Scrapy's, with plain start-up
errors), ``cache``, ``vectors``, ``boilerplate``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def parse_subcommand(
    command: str,
    args: Sequence[str],
    subcommands: Sequence[str],
    build_parser: Callable[[str], argparse.ArgumentParser],
) -> tuple[str, argparse.Namespace]:
    """``scrapy <command> <sub-command> [options]``: the sub-command and its options;
    a usage error (exit 2) names what is wrong.

    >>> parse_subcommand("cache", ["nope"], ("ls",), lambda n: argparse.ArgumentParser())
    Traceback (most recent call last):
    ...
    scrapy.exceptions.UsageError: unknown sub-command 'nope'; one of: ls
    """
    if not args or args[0] not in subcommands:
        given = f" {args[0]!r}" if args else ""
        raise UsageError(f"unknown sub-command{given}; one of: {', '.join(subcommands)}")
    name = args[0]
    try:
        return name, build_parser(name).parse_args(args[1:])
    except (argparse.ArgumentError, argparse.ArgumentTypeError) as exc:
        raise UsageError(f"{command} {name}: {exc}") from None
