"""A project command run in the test's own process, as ``scrapy CMD ...`` runs it in a
process of its own: for the tests that check only a command's output and exit status
(each command keeps one test through a real process, in its test file)."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING
from unittest import mock

from tests.crawl import ROOT, crawl_env, scrapy_command

if TYPE_CHECKING:
    from pathlib import Path


@dataclass
class Ran:
    """What ``subprocess.run(..., capture_output=True, text=True)`` returns, of the part tests read."""

    returncode: int
    stdout: str
    stderr: str


def run_command(args: list[str], cache: Path, settings: dict[str, str] | None = None, env=None) -> Ran:
    """``scrapy ARGS -s EXTRACTED_DOCS_DIR=cache -s ...`` in this process: Scrapy's own
    command line (:func:`scrapy.cmdline.execute`), in the repository, with a crawl's
    environment; its exit status, standard output and standard error."""
    from scrapy.cmdline import execute

    argv = ["scrapy", *scrapy_command(args, cache, settings)[3:]]  # after `python -m scrapy`
    out, err = io.StringIO(), io.StringIO()
    # what a process without logging configured writes of its log: warnings and errors,
    # message only (logging.lastResort); pytest's own handlers keep it from this one
    shown = logging.StreamHandler(err)
    shown.setLevel(logging.WARNING)
    root = logging.getLogger()
    status = 0
    with (
        mock.patch.dict(os.environ, crawl_env(env), clear=True),
        mock.patch.object(sys, "argv", ["__main__.py", *argv[1:]]),  # argparse's program name, as `python -m scrapy`
        contextlib.chdir(ROOT),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        root.addHandler(shown)
        try:
            execute(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        finally:
            root.removeHandler(shown)
    return Ran(status, out.getvalue(), err.getvalue())
