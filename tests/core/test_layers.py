"""Issue 10: the simulator's areas are layered (import-linter checks the layers in `make test`); this keeps the
other half of that rule: no module of the project is imported inside a function, where a cycle could hide.
Only optional third-party dependencies (a database driver) may be imported late."""

import ast
import re
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


# Writes to another module's table that are the point of their module: the control API wipes worlds and a
# snapshot loads one (every table), and fault injection (issue 14) reorders and delays the webhook outbox.
FOREIGN_WRITES_ALLOWED = {("tools/control/models.py", "counters"), ("tools/faults/models.py", "webhook_deliveries"),
                          ("tools/snapshots/models.py", "counters")}
WRITE = re.compile(r"\b(?:INSERT INTO|UPDATE|DELETE FROM|REPLACE INTO)\s+(\w+)", re.I)


def table_writes(source):
    """(line, table) for every table a module writes: SQL text and `store.insert/update("table", ...)`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for table in WRITE.findall(node.value):
                yield node.lineno, table
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("insert", "update") and node.args and isinstance(node.args[0], ast.Constant)):
            yield node.lineno, node.args[0].value


def test_each_table_is_written_only_by_the_module_that_declares_it():
    owners = {table: path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py")
              for table in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", path.read_text())}
    assert {"accounts", "users", "reports", "data_imports"} <= set(owners)
    foreign = [f"{module}:{line} writes {table} (declared in {owners[table]})"
               for path in sorted(ROOT.rglob("*.py")) for module in [path.relative_to(ROOT).as_posix()]
               for line, table in table_writes(path.read_text())
               if owners.get(table, module) != module and (module, table) not in FOREIGN_WRITES_ALLOWED]
    assert foreign == [], "write another area's table through that area's models: " + "; ".join(foreign)


def test_the_check_sees_sql_and_store_writes():
    source = 'store.execute("UPDATE accounts SET delivered = 1")\nstore.update("users", {"id": 1}, name="x")\n'
    assert sorted(table_writes(source)) == [(1, "accounts"), (2, "users")]
