"""Issue 10: the simulator's areas are layered (import-linter checks the layers in `make test`); this keeps the
other half of that rule: no module of the project is imported inside a function, where a cycle could hide.
Only optional third-party dependencies (a database driver) may be imported late."""

import ast
from pathlib import Path

import ptas_sandbox.simulator

ROOT = Path(ptas_sandbox.simulator.__file__).parent


def late_project_imports(source, name):
    tree = ast.parse(source)
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ptas_sandbox")):
                yield f"{name}:{node.lineno}"
            elif isinstance(node, ast.Import) and any(a.name.startswith("ptas_sandbox") for a in node.names):
                yield f"{name}:{node.lineno}"


def test_no_simulator_module_imports_the_project_inside_a_function():
    found = sorted({hit for path in ROOT.rglob("*.py")
                    for hit in late_project_imports(path.read_text(), path.relative_to(ROOT))})
    assert found == [], f"imports inside functions (move them to the top; a cycle is a layering bug): {found}"


def test_the_check_sees_a_late_project_import_and_lets_an_optional_dependency_be():
    source = "import json\ndef f():\n    from . import problems\n    import psycopg\n    import ptas_sandbox.cli\n"
    assert list(late_project_imports(source, "sample.py")) == ["sample.py:3", "sample.py:5"]
