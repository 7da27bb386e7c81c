"""The public API is typed and documented: every public function, class and method has a
numpydoc docstring with a doctest example (run by ``--doctest-modules``) and full type
hints; ``py.typed`` ships with the package."""

import importlib
import inspect
import pathlib

import pytest

MODULES = ["fastrbf", "fastrbf.sklearn", "fastrbf.dask"]


def _public():
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{modname}.{name}", obj


def _methods(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            yield name, member.fget, False
        elif inspect.isfunction(member):
            yield name, member, True


PUBLIC = dict(_public())


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_docstring_has_example(qualname):
    doc = inspect.getdoc(PUBLIC[qualname]) or ""
    assert "Examples\n--------" in doc and ">>>" in doc, f"{qualname}: no numpydoc Examples section with a doctest"


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_fully_annotated(qualname):
    obj = PUBLIC[qualname]
    funcs = [(qualname, obj)] if inspect.isfunction(obj) else [
        (f"{qualname}.{name}", f) for name, f, _ in _methods(obj)]
    for where, f in funcs:
        sig = inspect.signature(f)
        missing = [p.name for p in sig.parameters.values()
                   if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
        assert not missing, f"{where}: parameters without a type hint: {missing}"
        assert sig.return_annotation is not inspect.Signature.empty, f"{where}: no return type hint"


@pytest.mark.parametrize("qualname", sorted(q for q, o in PUBLIC.items()
                                             if inspect.isclass(o) and q.count(".") == 1))
def test_methods_have_examples(qualname):
    # the functional API's result classes; the scikit-learn estimators follow
    # scikit-learn's own convention: the example is in the class docstring
    for name, f, is_method in _methods(PUBLIC[qualname]):
        if is_method:  # properties are described in the class's Attributes
            doc = inspect.getdoc(f) or ""
            assert ">>>" in doc, f"{qualname}.{name}: no doctest example"


def test_py_typed_ships():
    import fastrbf

    assert (pathlib.Path(fastrbf.__file__).parent / "py.typed").is_file()
