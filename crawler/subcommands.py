"""Scrapy commands with sub-commands (``scrapy cache ls``), on argparse's sub-parsers.

Not in ``crawler/commands/``: Scrapy takes every command class found there for a
command of its own."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import get_settings_priority
from scrapy.utils.project import inside_project

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy.settings import BaseSettings

#: Scrapy's global options (``ScrapyCommand.add_options``): accepted after a
#: sub-command too (``scrapy cache ls -s EXTRACTED_DOCS_DIR=...``), under other names
#: that :meth:`SubCommands.process_options` merges into Scrapy's
GLOBAL_OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, object]]] = {
    "set": (("-s", "--set"), {"action": "append", "metavar": "NAME=VALUE", "help": "set/override a setting"}),
    "logfile": (("--logfile",), {"metavar": "FILE", "help": "log file"}),
    "loglevel": (("-L", "--loglevel"), {"metavar": "LEVEL", "help": "log level"}),
    "nolog": (("--nolog",), {"action": "store_true", "help": "disable logging"}),
    "pidfile": (("--pidfile",), {"metavar": "FILE", "help": "write the process ID to FILE"}),
    "profile": (("--profile",), {"metavar": "FILE", "help": "write cProfile stats to FILE"}),
    "pdb": (("--pdb",), {"action": "store_true", "help": "enable pdb on failure"}),
}


def _global_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("Global Options")
    for dest, (flags, kwargs) in GLOBAL_OPTIONS.items():
        group.add_argument(*flags, dest=f"sub_{dest}", default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]
    return parent


#: the settings that name a store: with one on the command line, a command needs no project
STORE_SETTINGS = ("EXTRACTED_DOCS_DIR", "EXTRACTED_DOCS_DSN")


def outside_project(command: str, settings: BaseSettings | None, *, store_named: bool = True) -> str | None:
    """The one line for a command run outside a Scrapy project (no ``scrapy.cfg`` in the
    working directory or above it), saying where to run it from (this checkout, when
    the package is installed from one); None inside one, or
    when the command line names the store (``-s EXTRACTED_DOCS_DIR=...``) and
    ``store_named`` allows that. Scrapy itself says ``Unknown command``: it lists a
    command that needs a project only inside one."""
    if inside_project():
        return None
    if store_named and settings is not None:
        cmdline = get_settings_priority("cmdline")
        if any(settings.getpriority(name) == cmdline for name in STORE_SETTINGS):
            return None
    checkout = Path(__file__).resolve().parent.parent
    where = f"cd {checkout}" if (checkout / "scrapy.cfg").is_file() else "cd to your project (where scrapy.cfg is)"
    named = ", or name the cache: -s EXTRACTED_DOCS_DIR=PATH" if store_named else ""
    return f"scrapy {command}: not in a Scrapy project (no scrapy.cfg in {Path.cwd()} or above): {where}{named}"


class SubCommands(ScrapyCommand):
    """A Scrapy command with sub-commands, parsed by argparse's sub-parsers:
    ``scrapy cache ls --limit 0``, ``scrapy cache show --help`` (the sub-command's
    own help), a usage error (exit 2) naming a wrong sub-command or option.

    Subclasses list ``subcommands`` (name: one-line help), add each one's options in
    :meth:`add_subcommand_options` and implement ``do_<name>``.
    """

    name: ClassVar[str] = ""
    subcommands: ClassVar[dict[str, str]] = {}

    def syntax(self) -> str:
        return "<" + "|".join(self.subcommands) + "> [options]  (scrapy " + self.name + " SUB-COMMAND --help)"

    def add_subcommand_options(self, name: str, parser: argparse.ArgumentParser) -> None:
        """Add the options of sub-command ``name``."""

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        subparsers = parser.add_subparsers(
            dest="subcommand", metavar="SUB-COMMAND", title="sub-commands", prog=f"scrapy {self.name}"
        )
        parents = [_global_options()]
        for name, summary in self.subcommands.items():
            sub = subparsers.add_parser(name, help=summary, description=summary, parents=parents)
            sub.add_argument("--json", action="store_true", help="JSON output for scripts")
            self.add_subcommand_options(name, sub)

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        for dest in GLOBAL_OPTIONS:
            given = getattr(opts, f"sub_{dest}", None)
            if given is None:
                continue
            if dest == "set":
                opts.set = [*opts.set, *given]
            else:
                setattr(opts, dest, given)
        super().process_options(args, opts)

    def subcommand(self, args: Sequence[str], opts: argparse.Namespace) -> str:
        """The sub-command to run; a usage error when there is none or words are left over."""
        if not getattr(opts, "subcommand", None):
            raise UsageError(f"give a sub-command, one of: {', '.join(self.subcommands)}")
        if args:
            raise UsageError(f"{self.name} {opts.subcommand}: unrecognized arguments: {' '.join(args)}")
        return str(opts.subcommand)
