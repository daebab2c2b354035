"""Every name has one import path: the module that defines it (docs/architecture.md: no
re-export façades inside the tree; the package fronts ``osustat`` and ``osustat.retrieval``
export the public API).

Checked on the source (no imports, a fraction of a second):

- each name in a module's ``__all__`` is defined in that module (a ``def``, a ``class`` or an
  assignment), not imported into it, and ``__all__`` is a literal list, so the rule can read it;
- every ``from X import N`` of an in-tree module ``X`` -- in package code, in doctests, in the
  tests, benchmarks and examples, and in the docs -- names a module that defines ``N`` (or a
  submodule ``X.N``), so no caller leans on an import ``X`` makes for its own use.

The package fronts (:data:`FRONTS`) are the users' entry points and exempt from both.
"""

from __future__ import annotations

import ast
import doctest
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.test_layers import MODULES, ROOT

#: Modules whose ``__all__`` gathers names defined elsewhere, on purpose, with the reason.
FRONTS = {
    "osustat": "the package front: the public API of the statistics core, `from osustat import "
    "analyze`",
    "osustat.retrieval": "the retrieval front: `from osustat.retrieval import OSUMem` (the "
    "retrievers, trajectories and metrics users build on)",
}

#: Folders whose Python files' imports are checked besides the packages' own.
USER_FOLDERS = ("tests", "benchmarks", "examples")
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])


def _bindings(body: Iterable[ast.stmt], out: set[str]) -> set[str]:
    """Names a module body defines (``def``, ``class``, assignment, also inside top-level
    ``if``/``try``/``with``/``for`` blocks); imports are not definitions."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.For):
            for block in ("body", "orelse", "finalbody"):
                _bindings(getattr(node, block, []), out)
            for handler in getattr(node, "handlers", []):
                _bindings(handler.body, out)
    return out


TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}
DEFINED = {name: _bindings(tree.body, set()) for name, tree in TREES.items()}


def exported_elsewhere(tree: ast.Module, defined: set[str]) -> list[str]:
    """Names in the module's ``__all__`` it does not define; ``<not a literal>`` where the
    rule cannot read ``__all__`` (built from another module's, or extended by ``+=``)."""
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        try:
            names = ast.literal_eval(node.value) if node.value is not None else []
        except ValueError:
            names = None
        if names is None or isinstance(node, ast.AugAssign):
            out.append("<not a literal>")
        else:
            out += [n for n in names if n not in defined]
    return out


@pytest.mark.parametrize("module", sorted(set(MODULES) - set(FRONTS)))
def test_every_name_a_module_exports_is_defined_there(module):
    assert exported_elsewhere(TREES[module], DEFINED[module]) == []


def test_the_fronts_exist_and_export():
    for front in FRONTS:
        assert exported_elsewhere(TREES[front], DEFINED[front]), front


def test_a_reexport_would_be_found():
    source = "from .claim import Claim\nX = 1\n__all__ = ['Claim', 'X']\n"
    tree = ast.parse(source)
    assert exported_elsewhere(tree, _bindings(tree.body, set())) == ["Claim"]
    source = "from . import claim as _m\n__all__ = [*_m.__all__, 'load']\ndef load(): ...\n"
    tree = ast.parse(source)
    assert exported_elsewhere(tree, _bindings(tree.body, set())) == ["<not a literal>"]


def _in_tree(module: str) -> str:
    """The installed name of an in-tree module (``reports.x`` is ``osustat.reports.x``)."""
    if module.split(".")[0] in ("analyses", "reports", "retrieval"):
        return f"osustat.{module}"
    return module


def _absolute(node: ast.ImportFrom, importer: str | None, is_package: bool) -> str | None:
    if not node.level:
        return node.module
    if importer is None:
        return None
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def second_paths(imports: Iterable[tuple[str, list[str]]]) -> list[str]:
    """``from X import N`` where ``X`` is an in-tree module other than a front that does not
    define ``N`` (nor has a submodule ``N``)."""
    wrong = []
    for module, names in imports:
        module = _in_tree(module)
        if module not in MODULES or module in FRONTS:
            continue
        wrong += [
            f"from {module} import {n}"
            for n in names
            if n not in DEFINED[module] and f"{module}.{n}" not in MODULES
        ]
    return wrong


def _docstrings(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if (text := ast.get_docstring(node, clean=False)) is not None:
                yield text


def python_imports(
    tree: ast.Module, importer: str | None = None, *, is_package: bool = False
) -> Iterator[tuple[str, list[str]]]:
    """The ``from X import ...`` of a file: its statements (also inside functions) and its
    doctests'."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, importer, is_package)
            if module is not None:
                yield module, [a.name for a in node.names]
    for text in _docstrings(tree):
        for example in doctest.DocTestParser().get_examples(text):
            try:
                snippet = ast.parse(example.source)
            except SyntaxError:
                continue
            yield from python_imports(snippet)


#: ``from X import a, b`` or ``from X import (a, b)`` in a doc (also across lines).
DOC_IMPORT = re.compile(r"^\s*(?:>>> )?from ([\w.]+) import (\([^)]*\)|[\w, ]+)", re.M)


def doc_imports(text: str) -> Iterator[tuple[str, list[str]]]:
    for module, names in DOC_IMPORT.findall(text):
        yield (
            module,
            [n.strip() for n in names.strip("()").replace("\n", " ").split(",") if n.strip()],
        )


def _python_files() -> list[object]:
    """One parameter per Python file: its path and, for a package module, its name."""
    found: list[tuple[Path, str | None]] = [(path, name) for name, path in MODULES.items()]
    for folder in USER_FOLDERS:
        found += [(path, None) for path in sorted((ROOT / folder).rglob("*.py"))]
    return [pytest.param(p, m, id=str(p.relative_to(ROOT))) for p, m in found]


@pytest.mark.parametrize(("path", "importer"), _python_files())
def test_code_imports_each_name_from_its_defining_module(path, importer):
    tree = TREES[importer] if importer else ast.parse(path.read_text(encoding="utf-8"))
    imports = python_imports(tree, importer, is_package=path.name == "__init__.py")
    assert second_paths(imports) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_import_each_name_from_its_defining_module(doc):
    assert second_paths(doc_imports(doc.read_text(encoding="utf-8"))) == []


def test_a_second_path_would_be_found():
    code = '"""\n>>> from osustat.audit.run import ClaimCheck\n"""\nfrom osustat import analyze\n'
    found = second_paths(python_imports(ast.parse(code)))
    assert found == ["from osustat.audit.run import ClaimCheck"]
    text = "```python\nfrom osustat.audit.result import (\n    ClaimCheck,\n    Nope,\n)\n```"
    assert second_paths(doc_imports(text)) == ["from osustat.audit.result import Nope"]
