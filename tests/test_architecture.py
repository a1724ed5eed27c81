"""The package's layers (see `webapp/__init__.py`): each imports only the ones below it.

Read from the source, so a new import that crosses a layer fails here before it tangles the
code: storage never knows about HTTP, actions never about requests, the toolkit (the
flask-webmcp distribution) never about this site, the site uses only what the toolkit makes
public, and nothing the site runs imports what only development needs.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from flask import Flask
from helpers import PROJECT_ROOT

SITE = "webapp"
TOOLKIT = "flask_webmcp"
# Where each package's modules are found: the site in the checkout, the toolkit in its
# distribution's src folder.
SOURCE_ROOTS = {SITE: PROJECT_ROOT, TOOLKIT: PROJECT_ROOT / "flask-webmcp" / "src"}
# From the bottom up; a module belongs to the layer of its longest matching prefix.
LAYERS = (
    ("webapp.config", "webapp.clock", "webapp.ics"),
    ("webapp.storage",),
    ("webapp.mail",),
    ("webapp.domain",),
    ("webapp.datasets",),
    ("webapp.web",),
    ("webapp", "webapp.cli", "webapp.dev"),
)
DEV = ("webapp.dev", "flask_webmcp.dev")


def module_name(path: Path) -> str:
    root = next(root for root in SOURCE_ROOTS.values() if path.is_relative_to(root / "")
                and path.relative_to(root).parts[0] in SOURCE_ROOTS)
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int:
    matches = [(len(prefix), index) for index, prefixes in enumerate(LAYERS)
               for prefix in prefixes if within(name, prefix)]
    return max(matches)[1]


def is_module(name: str) -> bool:
    root = SOURCE_ROOTS.get(name.split(".")[0])
    if root is None:
        return False
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path, deferred: bool = True) -> set[tuple[str, str | None]]:
    """What `path` imports, as (module, name) pairs with relative imports resolved: name is
    None for `import module`; those inside functions are included unless `deferred` is False."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree) if deferred else (
        node for statement in tree.body for node in ast.walk(statement)
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    found: set[tuple[str, str | None]] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            found.update((source, alias.name) for alias in node.names)
    return found


def imported_modules(path: Path, deferred: bool = True) -> set[str]:
    """Every module of the site or the toolkit that `path` imports (`from package import
    module` imports the module too)."""
    found: set[str] = set()
    for module, name in imports_of(path, deferred):
        found.add(module)
        if name is not None and is_module(f"{module}.{name}"):
            found.add(f"{module}.{name}")
    return {module for module in found if module.split(".")[0] in SOURCE_ROOTS}


SITE_MODULES = sorted((PROJECT_ROOT / "webapp").rglob("*.py"))
TOOLKIT_MODULES = sorted((SOURCE_ROOTS[TOOLKIT] / TOOLKIT).rglob("*.py"))


def test_each_module_imports_only_its_own_layer_and_those_below():
    crossings = [f"{module_name(path)} (layer {layer_of(module_name(path))}) imports {target}"
                 f" (layer {layer_of(target)})"
                 for path in SITE_MODULES for target in sorted(imported_modules(path))
                 if within(target, SITE) and layer_of(target) > layer_of(module_name(path))]
    assert crossings == []


def test_what_the_site_runs_never_imports_development_code():
    """At import time, that is: a command may import its development half when it runs."""
    runtime = [path for path in SITE_MODULES + TOOLKIT_MODULES
               if not any(within(module_name(path), dev) for dev in DEV)]
    found = [f"{module_name(path)} imports {target}" for path in runtime
             for target in sorted(imported_modules(path, deferred=False))
             if any(within(target, dev) for dev in DEV)]
    assert found == []


def test_the_toolkit_knows_nothing_of_this_site():
    """Not even at run time or in its development half: any Flask site can install it."""
    found = [f"{module_name(path)} imports {module}" for path in TOOLKIT_MODULES
             for module, _ in sorted(imports_of(path), key=str) if within(module, SITE)]
    assert found == []


def public_names(module: str) -> set[str]:
    """What a module of the toolkit makes public: its `__all__` (none without one)."""
    return set(getattr(importlib.import_module(module), "__all__", ()))


def test_the_site_uses_only_what_the_toolkit_makes_public():
    """Each name the site imports from the toolkit is in that module's `__all__`: what is
    left out may change in any release."""
    private = [f"{module_name(path)} imports {name} from {module}"
               for path in SITE_MODULES for module, name in sorted(imports_of(path), key=str)
               if within(module, TOOLKIT) and name is not None
               and not is_module(f"{module}.{name}") and name not in public_names(module)]
    assert private == []


def page_path_starts(app: Flask) -> set[str]:
    """The first segment of every address the app serves a page at ("/events", …)."""
    return {"/" + rule.rule.split("/")[1] for rule in app.url_map.iter_rules()
            if rule.rule.count("/") > 1 and not rule.rule.startswith(("/<", "/static"))}


def test_the_domain_knows_no_page_path_nor_http(app):
    """Where a page lives is the web layer's (its routes, `Pages`), and how an answer travels
    too: no string in the domain starts like an address the site serves, and the domain
    imports nothing of Flask or Werkzeug."""
    starts = page_path_starts(app)
    domain = sorted((PROJECT_ROOT / "webapp" / "domain").rglob("*.py"))
    paths = [f"{module_name(path)}:{node.lineno} {node.value!r}" for path in domain
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and node.value.startswith(tuple(starts))]
    http = [f"{module_name(path)} imports {module}" for path in domain
            for module, _ in sorted(imports_of(path), key=str)
            if within(module, "flask") or within(module, "werkzeug")]
    assert "/events" in starts and "/registrations" in starts
    assert paths == [] and http == []


def test_the_rules_see_imports():
    """The import reader itself: a layer crossing written today would be seen."""
    events = PROJECT_ROOT / "webapp" / "web" / "events.py"
    assert "webapp.domain.actions.events" in imported_modules(events)
    assert layer_of("webapp.storage.sqlite") < layer_of("webapp.domain.actions.events")
    toolkit = SOURCE_ROOTS[TOOLKIT] / TOOLKIT / "__init__.py"
    assert module_name(toolkit) == TOOLKIT
    assert "flask_webmcp.dev.cli" in imported_modules(toolkit)
    assert ("flask_webmcp.result", "ToolResult") in imports_of(
        PROJECT_ROOT / "webapp" / "web" / "calls.py")
    assert "ToolResult" in public_names("flask_webmcp.result")
