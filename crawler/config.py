"""Typed access to settings that names the setting when its value is wrong and falls
back to the project's defaults (:mod:`crawler.defaults`), and the check of the components that settings name
(EXTRACTOR, EMBEDDER)."""

from __future__ import annotations

import copy
import difflib
import pkgutil
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.settings import get_settings_priority
from scrapy.utils.misc import load_object

from crawler.defaults import OTHERS_PREFIXES, PROJECT_PREFIXES, REMOVED, SETTINGS

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

KINDS = {
    "get": "value",
    "getbool": "boolean",
    "getint": "whole number",
    "getfloat": "number",
    "getlist": "list",
    "getdict": "dict (a JSON object)",
}


#: Scrapy's priority of add-on settings: a value set above it is the user's
ADDON_PRIORITY = get_settings_priority("addon")


def defaults() -> dict[str, Any]:
    """The default of every setting of this project (:data:`crawler.defaults.SETTINGS`)."""
    return SETTINGS


class TypedSettings:
    """``typed(settings).getfloat("X")`` is ``settings.getfloat`` whose error says
    ``Setting X='abc' is not a valid number`` instead of Python's conversion message,
    and whose default, for a setting of this project, is the one the add-on sets
    (:data:`crawler.defaults.SETTINGS`): a command, which runs without the
    add-on, and a component enabled without it read the same defaults as a crawl.
    ``default`` is for settings of others (Scrapy's, scrapy-playwright's)."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings

    def _read(self, method: str, name: str, default: Any) -> Any:
        if name in SETTINGS:
            default = copy.deepcopy(SETTINGS[name])
        try:
            return getattr(self.settings, method)(name, default)
        except (TypeError, ValueError):
            raise ValueError(f"Setting {name}={self.settings.get(name)!r} is not a valid {KINDS[method]}") from None

    def getbool(self, name: str, default: bool = False) -> bool:
        return bool(self._read("getbool", name, default))

    def getint(self, name: str, default: int = 0) -> int:
        return int(self._read("getint", name, default))

    def getfloat(self, name: str, default: float = 0.0) -> float:
        return float(self._read("getfloat", name, default))

    def getlist(self, name: str, default: list[str] | None = None) -> list[str]:
        return list(self._read("getlist", name, default))

    def getdict(self, name: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(self._read("getdict", name, default))

    def get(self, name: str, default: Any = None) -> Any:
        return self._read("get", name, default)


def typed(settings: BaseSettings) -> TypedSettings:
    return TypedSettings(settings)


def check_component(component: object, kind: str, method: str, signature: str) -> None:
    """Raise ``TypeError`` naming what ``component`` lacks: non-empty string attributes
    ``name`` and ``version`` (they key what it produced), and the method ``method``
    (described by ``signature``)."""
    cls = type(component).__name__
    for attribute in ("name", "version"):
        value = getattr(component, attribute, None)
        if not isinstance(value, str) or not value:
            raise TypeError(f"{kind} {cls} needs a non-empty string attribute {attribute!r}, got {value!r}")
    if not callable(getattr(component, method, None)):
        raise TypeError(f"{kind} {cls} needs a method {signature}")


#: the modules of the package's optional parts, and the extra that installs each
EXTRAS = {
    "openai": "llm",
    "jsonschema": "llm",
    "qdrant_client": "qdrant",
    "scrapy_playwright": "playwright",
    "playwright": "playwright",
    "psycopg": "postgres",
    "scrapy_redis": "redis",
    "redis": "redis",
}


def install_hint(exc: BaseException) -> str:
    """For an import of an optional part's missing module, how to install it; ``""`` for
    any other error (one that says it already, raised from the import, among them).

    >>> install_hint(ModuleNotFoundError("No module named 'openai'", name="openai"))
    " (install the package's extra: pip install 'incremental-docs-crawler[llm]')"
    >>> install_hint(ModuleNotFoundError("No module named 'redis'", name="redis"))
    " (install the package's extra: pip install 'incremental-docs-crawler[redis]')"
    >>> install_hint(ModuleNotFoundError("No module named 'x'", name="x")), install_hint(ValueError("psycopg"))
    ('', '')
    """
    name = getattr(exc, "name", None) or ""
    extra = EXTRAS.get(name.split(".")[0]) if isinstance(exc, ModuleNotFoundError) else None
    return f" (install the package's extra: pip install 'incremental-docs-crawler[{extra}]')" if extra else ""


def load_named(setting: str, path: str) -> Any:
    """The object (usually a class) that ``setting`` names by its import ``path``;
    ``ValueError`` naming the setting when it cannot be imported (and the extra to
    install when a module of an optional part is missing)."""
    try:
        return load_object(path)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        raise ValueError(f"{setting}={path!r} cannot be imported: {exc}{install_hint(exc)}") from exc


def scrapy_setting_error(settings: BaseSettings) -> str | None:
    """What is wrong with the first of Scrapy's own boolean and numeric settings set on
    the command line (``-s DOWNLOAD_DELAY=abc``) whose value is not of its kind, or
    None: read at start-up by Scrapy's components, such a value otherwise stops the
    crawl with Python's conversion message, which names no setting (``could not
    convert string to float: 'abc'``).

    >>> from scrapy.settings import Settings
    >>> scrapy_setting_error(Settings({"DOWNLOAD_DELAY": "abc", "RETRY_TIMES": "2"}, priority="cmdline"))
    "Setting DOWNLOAD_DELAY='abc' is not a valid number"
    >>> scrapy_setting_error(Settings({"DOWNLOAD_DELAY": "0.5", "ROBOTSTXT_OBEY": "yes"}, priority="project"))
    >>> scrapy_setting_error(Settings({"TELNETCONSOLE_ENABLED": "False", "DOWNLOAD_DELAY": "1"}, priority="cmdline"))
    """
    from scrapy.settings import default_settings

    cmdline = get_settings_priority("cmdline")
    for name in sorted(settings):
        if not hasattr(default_settings, name) or settings.getpriority(name) != cmdline:
            continue
        default = getattr(default_settings, name)
        # DOWNLOAD_DELAY = 0 is a number; TELNETCONSOLE_ENABLED = 1 is read as a boolean:
        # an int default takes either
        kinds = {bool: ("getbool",), int: ("getfloat", "getbool"), float: ("getfloat",)}.get(type(default), ())
        errors = []
        for kind in kinds:
            try:
                getattr(typed(settings), kind)(name)
            except ValueError as exc:
                errors.append(str(exc))
            else:
                break
        else:
            if errors:
                return errors[0]
    return None


def known_settings() -> set[str]:
    """The names of every setting this project defines."""
    return set(SETTINGS)


#: an upper-case name in quotes, with an underscore: a setting's, in Scrapy's source
QUOTED_NAME_RE = re.compile(r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)["']""")


@cache
def others_settings() -> frozenset[str]:
    """The names of the settings of Scrapy and of the Scrapy plugins installed beside it
    (``scrapy_playwright``, ``scrapy_redis``...): Scrapy's defaults, and every quoted
    upper-case name in their source (what their components read, with or without a
    default). Read once a process, some 30 ms."""
    from scrapy.settings import default_settings

    names = {name for name in dir(default_settings) if name.isupper()}
    for module in pkgutil.iter_modules():
        if not (module.name == "scrapy" or module.name.startswith("scrapy_")):
            continue
        # found where it lies, never imported (nor asked for: an import hook may refuse it)
        where = Path(getattr(module.module_finder, "path", "")) / module.name
        files = sorted(where.rglob("*.py")) if module.ispkg else [where.with_suffix(".py")]
        for path in files:
            try:
                names.update(QUOTED_NAME_RE.findall(path.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return frozenset(names)


def user_set(settings: BaseSettings) -> list[str]:
    """The names the user set (the project's settings, a spider's, ``-s``): above the
    defaults' and the add-ons' priority."""
    return sorted(
        name for name in settings if isinstance(name, str) and (settings.getpriority(name) or 0) > ADDON_PRIORITY
    )


def unknown_settings(names: Any, known: set[str] | None = None) -> list[tuple[str, str | None]]:
    """The names among ``names`` that no component reads, each with the closest known
    name (or None): one with a project prefix that is no project setting (nor a removed
    one), and one of any other name that is none of Scrapy's or its plugins' but close
    to one of theirs (``DOWNLOAD_DELAYY``). Another name stays unsaid: a project's
    own components may read it.

    >>> unknown_settings(["EXTRACTOR_MAXAGE", "DOWNLOAD_DELAY"], {"EXTRACTOR_MAX_AGE", "EXTRACTOR_TIMEOUT"})
    [('EXTRACTOR_MAXAGE', 'EXTRACTOR_MAX_AGE')]
    >>> unknown_settings(["DOWNLOAD_DELAYY", "CONCURENT_REQUESTS", "MY_OWN_FLAG", "PLAYWRIGHT_LAUNCH_OPTIONS"])
    [('CONCURENT_REQUESTS', 'CONCURRENT_REQUESTS'), ('DOWNLOAD_DELAYY', 'DOWNLOAD_DELAY')]
    """
    from scrapy.settings import default_settings

    known = known_settings() if known is None else known
    # (Scrapy's defaults first: the source of Scrapy and its plugins is read only for a
    # name none of them is, which most crawls never set)
    left = [n for n in sorted(set(names)) if isinstance(n, str) and n not in known and n not in REMOVED]
    left = [n for n in left if not hasattr(default_settings, n)]
    if not left:
        return []
    others = others_settings()
    current, everything = sorted(known), sorted(others | known)
    found = []
    for name in left:
        if name in others:
            continue
        if name.startswith(PROJECT_PREFIXES):
            close = difflib.get_close_matches(name, current, n=1, cutoff=0.75)
            found.append((name, close[0] if close else None))
        elif not name.startswith(OTHERS_PREFIXES):
            close = difflib.get_close_matches(name, everything, n=1, cutoff=0.85)
            if close:
                found.append((name, close[0]))
    return found


def removed_setting_error(names: Any) -> str | None:
    """The one line refusing the first removed setting among ``names``, saying what
    replaces it; None without one.

    >>> print(removed_setting_error(["DOWNLOAD_DELAY", "EXTRACTOR_FORCE"]))  # doctest: +ELLIPSIS
    Setting EXTRACTOR_FORCE was removed: a one-run choice: scrapy crawl ... -a redo=extraction (scrapy process ...
    """
    for name in sorted(n for n in names if isinstance(n, str)):
        if name in REMOVED:
            return f"Setting {name} was removed: {REMOVED[name]}"
    return None
