"""The package as another Scrapy project uses it: built from pyproject.toml and
installed with pip into a fresh virtual environment, then enabled by the add-on alone
in a project of its own (tests/fixtures/addon-project: its own spider, items and
extractor). No network: the dependencies pip checks are the ones of this checkout's
environment, made visible to the new environment by a ``.pth`` line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.crawl import ROOT

PROJECT = ROOT / "tests" / "fixtures" / "addon-project"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A new virtual environment with the package installed by ``pip install``, from a
    copy of the sources (the build writes into its source tree, never into the checkout)."""
    base = tmp_path_factory.mktemp("package")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "crawler", source / "crawler", ignore=shutil.ignore_patterns("__pycache__"))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "SCRAPY_"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
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
    return python, env


def test_pip_installs_the_package_with_its_version_and_metadata(venv):
    python, env = venv
    where = run([str(python), "-c", "import crawler; print(crawler.__file__, crawler.__version__)"], PROJECT, env)
    path, version = where.stdout.split()
    assert Path(path).is_relative_to(python.parent.parent), path  # the installed copy, not the checkout
    metadata = run([str(python), "-m", "pip", "show", "incremental-docs-crawler"], PROJECT, env).stdout
    assert f"Version: {version}" in metadata
    requires = next(line for line in metadata.splitlines() if line.startswith("Requires:"))
    assert {"scrapy", "w3lib", "itemadapter", "sqlitedict", "lxml"} <= {
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

    def crawl() -> list[str]:
        calls.write_text("")
        run(
            [
                str(python), "-m", "scrapy", "crawl", "pages", "-a", f"start_urls={site.url + '/'}",
                "-s", f"EXTRACTED_DOCS_DIR={cache}", "-s", f"PAGES_CALLS_LOG={calls}",
            ],
            project,
            env,
        )  # fmt: skip
        return calls.read_text().splitlines()

    first = crawl()
    pages = {site.url + path for path in ("/", "/guide/", "/guide/install.html", "/guide/usage.html", "/api.html")}
    assert sorted(first) == sorted(pages)  # every page extracted once
    assert (cache / "cache.sqlite").is_file()

    site.log.clear()
    assert crawl() == []  # unchanged recrawl: 0 extractor calls
    assert {status for path, status in site.log if not path.startswith("/robots")} == {304}

    site.page("/api.html", "API", "The API has two functions now, run() and stop().", links=["/"])
    assert crawl() == [site.url + "/api.html"]  # only the changed page

    # the package's commands work in this project too (COMMANDS_MODULE)
    stats = run([str(python), "-m", "scrapy", "cache", "stats", "-s", f"EXTRACTED_DOCS_DIR={cache}"], project, env)
    assert "5" in stats.stdout

    # and the cron wrapper, run from the project's directory: silent, no call
    calls.write_text("")
    cron = run(
        [
            str(python), "-m", "crawler.recrawl", site.url + "/", "--spider", "pages",
            "-s", f"EXTRACTED_DOCS_DIR={cache}", "-s", f"PAGES_CALLS_LOG={calls}",
        ],
        project,
        env,
    )  # fmt: skip
    assert (cron.stdout, cron.stderr, calls.read_text()) == ("", "", "")
    assert (cache / "logs" / "latest.log").is_file()
