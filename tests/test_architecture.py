"""The package's layers (see `webapp/__init__.py`): each imports only the ones below it.

Read from the source, so a new import that crosses a layer fails here before it tangles the
code: storage never knows about HTTP, actions never about requests, the toolkit never about
this site, and nothing the site runs imports what only development needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import PROJECT_ROOT

# From the bottom up; a module belongs to the layer of its longest matching prefix.
LAYERS = (
    ("webapp.config", "webapp.clock", "webapp.webmcp"),
    ("webapp.storage",),
    ("webapp.domain",),
    ("webapp.datasets",),
    ("webapp.web",),
    ("webapp", "webapp.cli", "webapp.dev"),
)
TOOLKIT = "webapp.webmcp"
DEV = ("webapp.dev", "webapp.webmcp.dev")


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int:
    matches = [(len(prefix), index) for index, prefixes in enumerate(LAYERS)
               for prefix in prefixes if within(name, prefix)]
    return max(matches)[1]


def is_module(name: str) -> bool:
    path = PROJECT_ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(path: Path, deferred: bool = True) -> set[str]:
    """Every module of the package that `path` imports (relative imports resolved), with
    those imported inside functions unless `deferred` is False."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree) if deferred else (
        node for statement in tree.body for node in ast.walk(statement)
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            found.add(source)
            # `from package import module` imports the module too.
            found.update(f"{source}.{alias.name}" for alias in node.names
                         if is_module(f"{source}.{alias.name}"))
    return {module for module in found if within(module, "webapp")}


MODULES = sorted((PROJECT_ROOT / "webapp").rglob("*.py"))


def test_each_module_imports_only_its_own_layer_and_those_below():
    crossings = [f"{module_name(path)} (layer {layer_of(module_name(path))}) imports {target}"
                 f" (layer {layer_of(target)})"
                 for path in MODULES for target in sorted(imported_modules(path))
                 if layer_of(target) > layer_of(module_name(path))]
    assert crossings == []


def test_what_the_site_runs_never_imports_development_code():
    """At import time, that is: a command may import its development half when it runs."""
    runtime = [path for path in MODULES
               if not any(within(module_name(path), dev) for dev in DEV)]
    found = [f"{module_name(path)} imports {target}" for path in runtime
             for target in sorted(imported_modules(path, deferred=False))
             if any(within(target, dev) for dev in DEV)]
    assert found == []


def test_the_toolkit_knows_nothing_of_this_site():
    toolkit = [path for path in MODULES if within(module_name(path), TOOLKIT)]
    found = [f"{module_name(path)} imports {target}" for path in toolkit
             for target in sorted(imported_modules(path)) if not within(target, TOOLKIT)]
    assert found == []


def test_the_rules_see_imports():
    """The import reader itself: a layer crossing written today would be seen."""
    events = PROJECT_ROOT / "webapp" / "web" / "events.py"
    assert "webapp.domain.actions.events" in imported_modules(events)
    assert layer_of("webapp.storage.sqlite") < layer_of("webapp.domain.actions.events")
    assert "webapp.webmcp.dev.cli" in imported_modules(PROJECT_ROOT / "webapp" / "webmcp"
                                                       / "__init__.py")
