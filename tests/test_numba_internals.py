"""Every name the package takes from numba and llvmlite exists in the installed release.

The package leans on a few of numba's internal modules (``numba.core``: cgutils, the
compiler lock, the cache, compile events) that move between releases; this test names
the one that moved instead of a failure deep in a compilation.  It reads the source
(every ``from numba... import`` and ``from llvmlite... import``, and each attribute the
module then takes from an imported module, ``cgutils.alloca_once`` say) and imports
them; the internals reached by a dotted path in code are listed by hand below.
"""

import ast
import importlib
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "fastrbf"

#: internals used through an attribute path the scan below does not follow
DOTTED = [
    ("numba.core.caching", "IndexDataCacheFile.save"),
    ("numba.core.compiler_lock", "global_compiler_lock._lock"),
    ("numba.core.event", "register"),
    ("numba.core.event", "Listener"),
]


def _uses():
    """(file, module, attribute path) for every name taken from numba or llvmlite."""
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("numba", "llvmlite"):
                for a in node.names:
                    yield path.name, node.module, a.name
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in ("numba", "llvmlite"):
                        aliases[a.asname or a.name.split(".")[0]] = (a.asname and a.name) or a.name.split(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                target = aliases[node.value.id]
                try:
                    importlib.import_module(target)
                except ImportError:
                    continue  # a class or function imported by name: its attributes are its own
                yield path.name, target, node.attr


USES = sorted(set(_uses()))


def _resolve(module, path):
    obj = importlib.import_module(module)
    for part in path.split("."):
        if not hasattr(obj, part):
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
                continue
            except (ImportError, AttributeError):
                raise AssertionError(f"{module}.{path}: no {part!r}") from None
        obj = getattr(obj, part)
    return obj


def test_the_scan_finds_the_internals():
    modules = {m for _, m, _ in USES}
    assert "numba.core.cgutils" in modules or any(m == "numba.core" for m in modules)
    assert "llvmlite.ir" in modules or "llvmlite" in modules
    assert len(USES) > 20


@pytest.mark.parametrize("where, module, name", USES)
def test_every_numba_name_the_package_uses_exists(where, module, name):
    _resolve(module, name)


@pytest.mark.parametrize("module, path", DOTTED)
def test_the_internals_reached_by_attribute_paths_exist(module, path):
    _resolve(module, path)
