"""The package's layout rules, checked on its source (no import, no compile).

- A module uses another module's underscore names only from the shared private
  layers (``_validation``, ``_threads``, ``_typing`` and the numba kernels in ``_jit``):
  whatever else is shared between modules has a plain name in the module that owns it.
- ``numba.njit`` (and ``numba.jit``) appear only in the decorator factory
  ``fastrbf/_jit/_decorators.py``, so every kernel gets the same flags.
- The import graph has no cycle.
- The low-level layer is fenced: ``numba.core``, ``llvmlite`` and ``@intrinsic`` appear
  only under ``fastrbf/_jit/llvm/``, and ``@overload`` only through the decorator
  factory's ``jit_overload`` (one set of flags for every overload).
"""

import ast
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "fastrbf"
SHARED = {"_validation", "_threads", "_typing", "_jit"}


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(), filename=str(path))


MODULES = {name: (path, tree) for name, path, tree in _modules()}


def _is_package(name):
    return MODULES[name][0].name == "__init__.py"


def _absolute(module, level, current):
    """The absolute name of ``from <level dots><module> import ...`` inside ``current``."""
    if level == 0:
        return module
    base = current.split(".")
    if not _is_package(current):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _shared(target):
    return any(part in SHARED for part in target.split(".")[1:])


def _imports(tree, current):
    """(node, absolute module, imported name or None) for every import of a fastrbf module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _absolute(node.module, node.level, current)
            if mod.split(".")[0] != "fastrbf":
                continue
            for alias in node.names:
                yield node, mod, alias.name, alias.asname or alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "fastrbf":
                    yield node, alias.name, None, alias.asname or alias.name.split(".")[0]


def _violations():
    found = []
    for current, (path, tree) in MODULES.items():
        module_aliases = {}
        for node, mod, name, bound in _imports(tree, current):
            if name is None:
                module_aliases[bound] = mod
                continue
            full = f"{mod}.{name}"
            if full in MODULES:  # a module imported by name: the module itself is the unit
                module_aliases[bound] = full
                continue
            if _private(name) and not _shared(mod) and mod != current:
                found.append(f"{path.name}:{node.lineno}: from {mod} import {name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases and _private(node.attr)):
                target = module_aliases[node.value.id]
                if f"{target}.{node.attr}" in MODULES or _shared(target) or target == current:
                    continue
                found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr} ({target})")
    return found


def test_no_module_uses_another_modules_private_names():
    assert _violations() == []


def _in_jit(name):
    return name == "fastrbf._jit" or name.startswith("fastrbf._jit.")


def _jit_violations():
    """Underscore names that a module under ``fastrbf/_jit/`` imports from, or reads as
    an attribute of, another module under ``fastrbf/_jit/`` (the shared layer itself
    exempts nothing here: what its modules share has a plain name where it lives)."""
    found = []
    for current, (path, tree) in MODULES.items():
        if not _in_jit(current):
            continue
        module_aliases = {}
        for node, mod, name, bound in _imports(tree, current):
            if name is None:
                module_aliases[bound] = mod
                continue
            full = f"{mod}.{name}"
            if full in MODULES:
                module_aliases[bound] = full
                continue
            if _private(name) and _in_jit(mod) and mod != current:
                found.append(f"{path.name}:{node.lineno}: from {mod} import {name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases and _private(node.attr)):
                target = module_aliases[node.value.id]
                if f"{target}.{node.attr}" in MODULES or not _in_jit(target) or target == current:
                    continue
                found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr} ({target})")
    return found


def test_no_jit_module_uses_another_jit_modules_private_names():
    """The kernels' modules (``fastrbf/_jit/`` and its families, ``llvm/`` included)
    share helpers only under plain names; ``fastrbf/_jit/gp/`` is checked too."""
    assert _jit_violations() == []


def test_the_jit_check_sees_a_violation():
    """The check above would fail on an import and on an attribute read of another
    ``_jit`` module's underscore name, and passes plain names and modules."""
    tree = ast.parse("from .lloyd import _secret, exact_sq\nfrom ..llvm import micro as m\nm._hidden\n"
                     "m.argmin_cols\nfrom .. import _decorators\n")
    before = len(_jit_violations())
    MODULES["fastrbf._jit.cluster._layout_probe"] = (PKG / "_jit" / "cluster" / "_layout_probe.py", tree)
    try:
        assert len(_jit_violations()) == before + 2
    finally:
        del MODULES["fastrbf._jit.cluster._layout_probe"]


def test_numba_jit_only_in_the_decorator_factory():
    found = []
    for name, (path, tree) in MODULES.items():
        if name == "fastrbf._jit._decorators":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and isinstance(node.value, ast.Name) \
                    and node.value.id == "numba":
                found.append(f"{path.name}:{node.lineno}: numba.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "numba" and \
                    any(a.name in ("njit", "jit") for a in node.names):
                found.append(f"{path.name}:{node.lineno}: from numba import njit/jit")
    assert found == []


LLVM = "fastrbf._jit.llvm"


def _low_level_uses(name, tree):
    """What module ``name`` uses of the low-level layer: imports of ``numba.core`` or
    ``llvmlite``, ``intrinsic`` (imported or as ``numba.extending.intrinsic``) and
    ``overload`` outside the decorator factory."""
    found = []
    in_llvm = name == LLVM or name.startswith(LLVM + ".")
    for node in ast.walk(tree):
        mods, names = [], []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
            if node.module.split(".")[0] == "numba":
                names = [a.name for a in node.names]
        elif isinstance(node, ast.Attribute) and node.attr in ("intrinsic", "overload") \
                and ast.unparse(node.value).split(".")[0] == "numba":
            names = [node.attr]
        if not in_llvm:
            found += [m for m in mods if m.split(".")[:2] == ["numba", "core"] or m.split(".")[0] == "llvmlite"]
            found += [n for n in names if n == "intrinsic"]
        if name != "fastrbf._jit._decorators":
            found += [n for n in names if n == "overload"]
    return found


def test_low_level_layer_is_fenced():
    found = [f"{MODULES[name][0].relative_to(PKG.parent)}: {what}" for name, (_p, tree) in MODULES.items()
             for what in _low_level_uses(name, tree)]
    assert found == []


def test_the_fence_check_sees_a_violation():
    probe = ast.parse("from numba.core import types\nimport llvmlite.ir\nfrom numba.extending import intrinsic, overload\n")
    assert _low_level_uses("fastrbf._jit.kernels", probe) == ["numba.core", "llvmlite.ir", "intrinsic", "overload"]
    assert _low_level_uses("fastrbf._jit.llvm.micro", probe) == ["overload"]
    assert _low_level_uses("fastrbf._jit._decorators", ast.parse("from numba.extending import overload\n")) == []
    assert _low_level_uses("fastrbf.models.common", ast.parse("from typing import overload\n")) == []
    assert _low_level_uses("fastrbf.models.common", ast.parse("numba.extending.intrinsic\n")) == ["intrinsic"]


def _graph(module_level_only):
    edges = {name: set() for name in MODULES}
    for current, (_path, tree) in MODULES.items():
        nodes = tree.body if module_level_only else list(ast.walk(tree))
        for node in nodes:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for _node, mod, name, _bound in _imports(ast.Module(body=[node], type_ignores=[]), current):
                target = f"{mod}.{name}" if name is not None and f"{mod}.{name}" in MODULES else mod
                while target not in MODULES and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in MODULES and target != current:
                    edges[current].add(target)
    return edges


def _cycle(edges):
    state = {}

    def visit(u, stack):
        state[u] = 1
        for v in sorted(edges[u]):
            # a package's __init__ re-exporting its submodules is not a dependency of them
            if v == u.rsplit(".", 1)[0] and _is_package(v):
                continue
            if state.get(v) == 1:
                return [*stack[stack.index(v):], v]
            if v not in state:
                found = visit(v, [*stack, v])
                if found:
                    return found
        state[u] = 2
        return None

    for u in sorted(edges):
        if u not in state:
            found = visit(u, [u])
            if found:
                return found
    return None


@pytest.mark.parametrize("module_level_only", [True, False], ids=["at-import", "with-deferred-imports"])
def test_import_graph_has_no_cycle(module_level_only):
    assert _cycle(_graph(module_level_only)) is None


def test_the_checks_see_a_violation():
    """The checks above would fail on the patterns they forbid."""
    tree = ast.parse("from .distances import _secret\nfrom . import kernels as k\nk._hidden\nimport numba\nnumba.njit\n")
    before = len(_violations())
    MODULES["fastrbf._layout_probe"] = (PKG / "_layout_probe.py", tree)
    try:
        assert len(_violations()) == before + 2
        edges = _graph(False)
        edges["fastrbf.kernels"].add("fastrbf._layout_probe")
        edges["fastrbf._layout_probe"].add("fastrbf.kernels")
        assert _cycle(edges) is not None
    finally:
        del MODULES["fastrbf._layout_probe"]


def test_architecture_page_names_every_module():
    """docs/architecture.md names every module of the package by its path under ``fastrbf/``."""
    text = (PKG.parent / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([\w./]+\.py)`", text))
    missing = [str(p.relative_to(PKG)) for p in sorted(PKG.rglob("*.py"))
               if p.name != "__init__.py" and str(p.relative_to(PKG)) not in named]
    assert missing == []


def test_jit_map_names_every_kernel_module():
    """The docstring of ``fastrbf/_jit/__init__.py`` names every module under ``_jit/``
    (dotted, relative to ``_jit``: ``cluster.lloyd``)."""
    jit = PKG / "_jit"
    doc = ast.get_docstring(ast.parse((jit / "__init__.py").read_text())) or ""
    named = set(re.findall(r"``([\w.]+)``", doc))
    missing = [".".join(p.relative_to(jit).with_suffix("").parts) for p in sorted(jit.rglob("*.py"))
               if p.name != "__init__.py"]
    assert [m for m in missing if m not in named] == []


def test_architecture_page_names_files_that_exist():
    """Every module or folder docs/architecture.md names in backticks exists (under
    ``fastrbf/`` or at the top of the repository)."""
    root = PKG.parent
    text = (root / "docs" / "architecture.md").read_text()
    names = set(re.findall(r"`((?:[\w.]+/)*[\w.]+\.py|[\w]+/)`", text))
    assert len(names) > 20
    missing = [n for n in sorted(names) if not ((PKG / n).exists() or (root / n).exists()
                                                 or any(PKG.rglob(n.rstrip("/"))))]
    assert missing == []
