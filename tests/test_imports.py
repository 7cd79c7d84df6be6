"""The package's import graph: layers point down. Every import of a ``crawler`` module
counts, those inside functions too (a deferred import is still a dependency)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "crawler"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the ``crawler`` modules it imports (a name imported from a package
    counts as its submodule when it is one)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names}
        graph[name] = {dep for dep in found if dep in modules and dep != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative).

    >>> [sorted(component) for component in cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})]
    [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_graph_sees_deferred_and_relative_imports():
    graph = import_graph()
    assert "crawler.defaults" in graph["crawler.config"]
    assert "crawler.cache.migrate" in graph["crawler.cache.sqlite"]  # imported inside a method


def test_no_import_cycle():
    """None anywhere (the store's migration builds its database with
    crawler.cache.sqlitefile, not with the store that calls it)."""
    assert cycles(import_graph()) == []


def test_nothing_imports_the_addon_to_read_a_default():
    graph = import_graph()
    importers = sorted(name for name, deps in graph.items() if "crawler.addons.incremental" in deps)
    assert importers == ["crawler.addons"]  # the package's own re-export of its class


def test_the_defaults_are_a_leaf():
    graph = import_graph()
    assert graph["crawler.defaults"] == set()  # every command reads it at start: it imports nothing
    assert graph["crawler.incremental.revisit"] == set()


#: the incremental decisions: pure functions over records and flags (no Scrapy, no store)
POLICIES = (
    "crawler.incremental.folding",
    "crawler.incremental.source",
    "crawler.incremental.converter",
    "crawler.incremental.revisit",
)


def top_level_imports(module: str) -> set[str]:
    """The top-level package of every import of ``module`` (``scrapy``, ``crawler``...)."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_incremental_policies_import_no_scrapy_and_no_component():
    graph = import_graph()
    for module in POLICIES:
        assert not top_level_imports(module) & {"scrapy", "twisted", "itemadapter"}, module
        components = {dep for dep in graph[module] if dep.startswith(("crawler.middlewares", "crawler.pipelines"))}
        assert components == set(), module
        # the store's types only (records, ports), never the store itself or the run
        assert {dep for dep in graph[module] if dep.startswith("crawler.cache")} <= {
            "crawler.cache.ports",
            "crawler.cache.records",
            "crawler.cache.responses",
        }, module


def test_the_spider_converts_and_reaches_the_cache_only_through_its_port():
    graph = import_graph()
    for module in (name for name in graph if in_package(name, "crawler.spiders")):  # (its bases too)
        assert not {dep for dep in graph[module] if in_package(dep, "crawler.cache")}, module
    assert "crawler.incremental.spiderport" in graph["crawler.spiders.docs"]


def test_meta_keys_come_from_one_module_not_from_the_middleware():
    graph = import_graph()
    for module in (
        "crawler.spiders.docs",
        "crawler.pipelines.content_hash",
        "crawler.middlewares.render",
        "crawler.stylesheets",
    ):
        assert "crawler.middlewares.revalidation" not in graph[module], module
        assert "crawler.meta" in graph[module], module
    assert graph["crawler.meta"] <= {"crawler.cache.responses"}  # a leaf (its verdict names a stored response)
    importers = {name for name, deps in graph.items() if "crawler.middlewares.revalidation" in deps}
    assert importers == set()  # only Scrapy loads it, by its path in the add-on's table


#: the two leaf packages: the algorithms over a page's text (crawler.lib) and the
#: plumbing around calls and output (crawler.support). Each imports nothing of the
#: crawler but its own modules, so neither imports the other, and neither imports
#: Scrapy: both are below every component, and an algorithm is tested and benchmarked
#: alone.
LEAVES = ("crawler.lib", "crawler.support")


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_algorithms_and_the_plumbing_are_leaves_apart():
    graph = import_graph()
    for leaf in LEAVES:
        members = [name for name in graph if in_package(name, leaf)]
        assert len(members) > 1, leaf
        for name in members:
            assert {dep for dep in graph[name] if not in_package(dep, leaf)} == set(), name


def test_the_algorithms_and_the_plumbing_import_no_scrapy():
    for leaf in LEAVES:
        for path in sorted(PACKAGE.joinpath(*leaf.split(".")[1:]).glob("*.py")):
            if path.name != "__init__.py":
                module = module_name(path)
                assert not top_level_imports(module) & {"scrapy", "twisted", "itemadapter"}, module


#: the modules that write page records (``put_page``, ``touch_page``, ``delete_page`` of
#: the store): the ledger, which decides a page's identity and status and writes what
#: the crawl, the stages and the commands tell it; and the store's own repairs and
#: migrations, which write records back as they were or in a newer layout. A new
#: writer fails here: tell the ledger instead.
RECORD_WRITERS = {
    "crawler.incremental.ledger",
    "crawler.cache.maintenance",
    "crawler.cache.migrate",
}


def test_page_records_are_written_by_the_ledger():
    writes = {"put_page", "touch_page", "delete_page"}
    writers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in writes:
                receiver = node.func.value
                if isinstance(receiver, ast.Attribute) and receiver.attr == "syncer":
                    continue  # a vector store's points, not a page record
                writers.add(module_name(path))
    assert writers == RECORD_WRITERS


#: the package's commands: Scrapy imports every one of them on every ``scrapy ...``
#: (``scrapy version`` too), to list them
COMMANDS = tuple(f"crawler.commands.{name}" for name in ("cache", "process", "vectors", "boilerplate", "crawl"))
#: what importing them may load of the package: what defines a command and its options
COMMAND_MODULES = {
    "crawler",
    "crawler.commands",
    *COMMANDS,
    "crawler.subcommands",
    "crawler.statuses",
    "crawler.cachecli",
}
#: what a command loads when it runs, never to list it (lxml is not here: Scrapy
#: imports it itself)
HEAVY = (
    "crawler.lib.markdown",
    "crawler.config",
    "crawler.cache",
    "crawler.cache.sqlite",
    "crawler.stages",
    "pydantic",
    "itemadapter",
    "openai",
    "qdrant_client",
    "redis",
    "psycopg",
    "playwright",
)


def run_on_import(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` that run when their module is imported: not a
    function's, nor what ``if TYPE_CHECKING:`` guards."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            yield from run_on_import(node.orelse)
            continue
        yield node
        for block in ("body", "orelse", "finalbody"):  # if, try, with, class
            if isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
                yield from run_on_import(getattr(node, block, []))
        for handler in getattr(node, "handlers", []):
            yield from run_on_import(handler.body)


def loaded_on_import(module: str) -> set[str]:
    """Every module importing ``module`` loads, as far as this package's sources say:
    the package's, with their parent packages, and the first module name of any other."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    loaded, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in loaded:
            continue
        loaded.add(name)
        if name not in modules:
            continue
        path = modules[name]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in run_on_import(ast.parse(path.read_text(), str(path)).body):
            found = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
                found = [base, *(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)]
            for dotted in found:
                parts = dotted.split(".")
                if parts[0] != "crawler":
                    loaded.add(parts[0])
                    continue
                todo.extend(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return loaded


def test_the_commands_import_only_what_defines_them():
    """Scrapy imports every command to list them: a command imports its work when it runs."""
    loaded = set().union(*(loaded_on_import(command) for command in COMMANDS))
    assert {name for name in loaded if in_package(name, "crawler")} <= COMMAND_MODULES
    others = {name for name in loaded if not in_package(name, "crawler")}
    assert others - set(sys.stdlib_module_names) <= {"__future__", "scrapy"}


@pytest.mark.e2e  # (it starts a Python, as the fast tier never does)
def test_importing_the_commands_loads_none_of_their_work():
    code = "import sys\n" + "".join(f"import {command}\n" for command in COMMANDS)
    code += "print('\\n'.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert {name for name in loaded if in_package(name, "crawler")} <= COMMAND_MODULES
    assert [name for name in loaded if any(in_package(name, heavy) for heavy in HEAVY)] == []
