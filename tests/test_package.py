"""The package as another Scrapy project uses it: built from pyproject.toml and
installed with pip into a fresh virtual environment, then enabled by the add-on alone
in a project of its own (tests/fixtures/addon-project: its own spider and
``{url, title, text}`` items, no other setting; the test's extractor counts the calls).
No network: the dependencies pip checks are the ones of this checkout's environment,
made visible to the new environment by a ``.pth`` line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.crawl import ROOT
from tests.site import Raw

pytestmark = pytest.mark.e2e  # each test installs the package into a virtualenv of its own

PROJECT = ROOT / "tests" / "fixtures" / "addon-project"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A new virtual environment with the package installed by ``pip install``, from a
    git checkout of the sources (what the build writes into it is checked below)."""
    base = tmp_path_factory.mktemp("package")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", ".gitignore"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "crawler", source / "crawler", ignore=shutil.ignore_patterns("__pycache__"))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "SCRAPY_", "GIT_"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    run([*git, "init", "--quiet"], source, env)
    run([*git, "add", "--all"], source, env)
    run([*git, "commit", "--quiet", "-m", "sources"], source, env)
    venv = base / "venv"
    # without pip: this environment's pip and setuptools (and the dependencies) come
    # through the .pth line, so nothing is downloaded
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    python = venv / "bin" / "python"
    purelib = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base, env).stdout.strip()
    )
    (purelib / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation", str(source)], base, env)
    # `pip install /path/to/checkout` leaves the checkout as it was: what the build
    # writes there (build/, *.egg-info) is ignored
    assert run(["git", "status", "--porcelain", "--untracked-files=all"], source, env).stdout == ""
    return python, env


def test_pip_installs_the_package_with_its_version_and_metadata(venv):
    python, env = venv
    where = run([str(python), "-c", "import crawler; print(crawler.__file__, crawler.__version__)"], PROJECT, env)
    path, version = where.stdout.split()
    assert Path(path).is_relative_to(python.parent.parent), path  # the installed copy, not the checkout
    metadata = run([str(python), "-m", "pip", "show", "incremental-docs-crawler"], PROJECT, env).stdout
    assert f"Version: {version}" in metadata
    requires = next(line for line in metadata.splitlines() if line.startswith("Requires:"))
    assert {"scrapy", "w3lib", "itemadapter", "lxml"} <= {
        name.strip().lower() for name in requires.split(":", 1)[1].split(",")
    }
    extras = run(
        [
            str(python),
            "-c",
            "import json, importlib.metadata as m;"
            "print(json.dumps(m.metadata('incremental-docs-crawler').get_all('Provides-Extra')))",
        ],
        PROJECT,
        env,
    ).stdout
    assert {"llm", "qdrant", "playwright"} <= set(json.loads(extras))


def test_a_project_with_only_the_addon_recrawls_for_free(venv, site, tmp_path):
    python, env = venv
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    cache, calls = tmp_path / "cache", tmp_path / "calls.log"
    settings = [
        "-s", f"EXTRACTED_DOCS_DIR={cache}", "-s", f"PAGES_CALLS_LOG={calls}",
        "-s", "EXTRACTOR=pagesproject.extractors.CountingExtractor",
    ]  # fmt: skip
    # a page with no text: the summary line names the command that lists it
    site.page("/", "Home", "Welcome to the Example documentation.", links=["/guide/", "/api.html", "/empty.html"])
    site.raw["/empty.html"] = Raw(b"<html><head><title>Empty</title></head><body><main></main></body></html>", etag="e")

    def crawl() -> tuple[list[str], str]:
        calls.write_text("")
        result = run(
            [str(python), "-m", "scrapy", "crawl", "pages", "-a", f"start_urls={site.url + '/'}", *settings],
            project,
            env,
        )
        return calls.read_text().splitlines(), result.stderr

    first, log = crawl()
    pages = {site.url + path for path in ("/", "/guide/", "/guide/install.html", "/guide/usage.html", "/api.html")}
    assert sorted(first) == sorted(pages)  # every page with text extracted once
    assert (cache / "cache.sqlite").is_file()
    # the items lack the default content field: said once, with what they carry
    assert log.count("Items lack the field(s) content") == 1
    assert "carries text, title, url" in log and "(text, title) are hashed and sent to the extractor" in log

    site.log.clear()
    assert crawl()[0] == []  # unchanged recrawl: 0 extractor calls
    assert {status for path, status in site.log if not path.startswith("/robots")} == {304}

    site.edit("/api.html", "The API has two functions now, run() and stop().")  # the body, not the title
    edited, log = crawl()
    assert edited == [site.url + "/api.html"]  # only the edited page

    # the package's commands, without COMMANDS_MODULE (the scrapy.commands entry points)
    listing = run([str(python), "-m", "scrapy"], project, env).stdout
    for command in ("cache", "process", "vectors", "boilerplate"):
        assert re.search(rf"^  {command} ", listing, re.MULTILINE), listing
    stats = run([str(python), "-m", "scrapy", "cache", "stats", *settings[:2]], project, env)
    assert "6" in stats.stdout
    # and every command the summary line suggests works where it is printed
    summary = next(line for line in log.splitlines() if "INFO: run " in line)
    suggested = re.findall(r"`(scrapy [^`]+)`", summary)
    assert "scrapy cache ls --empty" in suggested, summary
    for command in suggested:
        output = run([str(python), "-m", *command.split(), *settings[:2]], project, env).stdout
        if command == "scrapy cache ls --empty":
            assert site.url + "/empty.html" in output

    # and the cron wrapper, run from the project's directory: silent, no call
    calls.write_text("")
    cron = run(
        [str(python), "-m", "crawler.recrawl", site.url + "/", "--spider", "pages", *settings],
        project,
        env,
    )
    assert (cron.stdout, cron.stderr, calls.read_text()) == ("", "", "")
    assert (cache / "logs" / "latest.log").is_file()
