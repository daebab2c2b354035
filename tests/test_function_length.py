"""No function outside ``tests/`` runs over 100 lines without its docstring (issue 34, STYLE.md:
long functions are broken along their steps; the limit was 120 until the eight functions over
100 were split into named steps).

The length counts a function's lines from ``def`` to its last line (decorators excluded, nested
functions included in their parent), less its docstring's lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("osustat", "analyses", "reports", "retrieval", "benchmarks", "examples")
LIMIT = 100


def function_lengths(source: str) -> list[tuple[str, int]]:
    """(qualified name, length without the docstring) of every function in `source`."""
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (child.end_lineno or child.lineno) - child.lineno + 1
                first = child.body[0]
                if (
                    isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)
                ):
                    n -= (first.end_lineno or first.lineno) - first.lineno + 1
                out.append((prefix + child.name, n))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def test_the_measure_counts_code_not_docstrings():
    body = "\n".join(f"    x{i} = {i}" for i in range(5))
    doc = '    """Doc\n    string."""\n'
    source = f"def f():\n{doc}{body}\n\nclass C:\n    def g(self):\n        pass\n"
    assert function_lengths(source) == [("f", 6), ("C.g", 2)]


def test_no_function_over_the_limit():
    long = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name, n in function_lengths(path.read_text(encoding="utf-8")):
                if n > LIMIT:
                    long.append(f"{path.relative_to(ROOT)}::{name} ({n} lines)")
    listed = "\n".join(long)
    assert not long, f"functions over {LIMIT} lines (break them along their steps):\n{listed}"
