"""The converter's modules point down: the selection and the writer never import each
other (not even inside a function), both stand on the shared node helpers, and only
``pagetext`` puts them together."""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parent.parent / "crawler" / "lib"
#: what each converter module may import of crawler.lib
ALLOWED = {
    "css": set(),
    "furniture": set(),
    "deephtml": set(),
    "nodes": {"css"},
    "lines": {"nodes", "furniture"},  # (furniture by its place and markup)
    "pagewalk": {"nodes", "furniture", "lines"},
    "chrome": {"nodes", "pagewalk", "lines"},
    "blockfilter": {"nodes"},  # (the learned step: the blocks and their shapes only)
    "sections": {"nodes", "furniture"},  # (the invariant: what stays inside the content container)
    # (what of the rules' proposals stays out of the content container)
    "keepout": {"nodes", "pagewalk", "chrome", "sections"},
    "titles": {"nodes", "pagewalk"},  # (the page's title block beside the main content)
    "innernav": {"nodes"},  # (ways around the page inside the container: letter bars, repeating drawers)
    "siblings": {"nodes", "pagewalk", "chrome", "keepout", "sections"},  # (what continues the scored root)
    "maincontent": {
        "nodes",
        "pagewalk",
        "chrome",
        "blockfilter",
        "sections",
        "keepout",
        "titles",
        "siblings",
        "innernav",
    },
    "codetext": {"nodes"},  # (the writer's code blocks)
    "mdsyntax": set(),  # (the writer's marks and escapes, over strings)
    "mdnodes": {"nodes", "mdsyntax"},  # (what the writer asks of an element)
    "markdown": {"nodes", "urls", "furniture", "codetext", "mdnodes", "mdsyntax"},  # (furniture: words only)
    "pagetext": {"css", "nodes", "maincontent", "markdown"},
}


def lib_imports(module: str) -> set[str]:
    """The crawler.lib modules ``module`` imports, wherever in the file."""
    found = set()
    for node in ast.walk(ast.parse((LIB / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("crawler.lib."):
            found.add(node.module.removeprefix("crawler.lib."))
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("crawler.lib.") for a in node.names if a.name.startswith("crawler.lib."))
    return found


def test_select_and_write_do_not_import_each_other_and_layers_point_down():
    assert {module: lib_imports(module) for module in ALLOWED} == ALLOWED
