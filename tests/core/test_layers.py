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
# snapshot loads one (every table), fault injection reorders and delays the webhook outbox, and the store's own
# `meta` table is declared with the schema and written by the interface (`Store.meta`).
FOREIGN_WRITES_ALLOWED = {("store/base.py", "meta"), ("tools/control/models.py", "counters"),
                          ("tools/faults/models.py", "webhook_deliveries"), ("tools/snapshots/models.py", "counters")}
WRITE = re.compile(r"\b(?:INSERT INTO|UPDATE|DELETE FROM|REPLACE INTO)\s+(\w+)", re.I)
READ = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)", re.I)

# Sandbox tools that read other areas' tables by design: each shows, judges, copies or wipes a whole world.
TOOLS_READING_ACROSS = {
    "tools/control": "wipes a world and renews its root token: its worlds, counters and tokens",
    "tools/echo": "reads back what its world's deliveries sent",
    "tools/inspector": "shows one world, every area of it",
    "tools/integration": "judges a world's recorded traffic against its tokens, webhooks and deliveries",
    "tools/snapshots": "exports and loads every table of a world",
}
# Reads of another area's table by a spec area, each where the other area's helper is out of reach (it sits
# above in the layers) or one JOIN keeps a read every request makes to one statement.
FOREIGN_READS_ALLOWED = {
    ("account_types/models.py", "partners"): "AccountTypeUpdated goes to every live partner; partners sit above",
    ("accounts/models.py", "users"): "the due polls and their users' deletion in one statement, every request",
    ("reports/models.py", "accounts"): "an account's schedule draws its reports; accounts sit above",
    ("users/models.py", "accounts"): "a user's statistics; accounts sit above users",
    ("webhooks/deliveries.py", "events"): "the webhook area fans out the event outbox (events.py writes it)",
}


def area_of(module):
    """The area a module belongs to: its package (a tool's under tools/), the store, or a core module itself."""
    parts = module.split("/")
    return "/".join(parts[:2]) if parts[0] == "tools" else parts[0]


def table_writes(source):
    """(line, table) for every table a module writes: SQL text and `store.insert/update("table", ...)`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for table in WRITE.findall(node.value):
                yield node.lineno, table
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("insert", "update") and node.args and isinstance(node.args[0], ast.Constant)):
            yield node.lineno, node.args[0].value


def table_reads(source):
    """(line, table) for every table named after FROM or JOIN in a module's SQL text."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for table in READ.findall(node.value):
                yield node.lineno, table


def table_owners():
    owners = {table: path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py")
              for table in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", path.read_text())}
    assert {"accounts", "users", "reports", "data_imports"} <= set(owners)
    return owners


def modules():
    return [(path.relative_to(ROOT).as_posix(), path.read_text()) for path in sorted(ROOT.rglob("*.py"))]


def foreign_writes(owners, sources):
    """Writes of a table outside the module that declares it (the store's package counts as one module)."""
    def unit(module):
        return "store" if area_of(module) == "store" else module
    return [f"{module}:{line} writes {table} (declared in {owners[table]})"
            for module, source in sources for line, table in table_writes(source)
            if unit(owners.get(table, module)) != unit(module) and (module, table) not in FOREIGN_WRITES_ALLOWED]


def foreign_reads(owners, sources):
    return [f"{module}:{line} reads {table} (declared in {owners[table]})"
            for module, source in sources for line, table in table_reads(source)
            if table in owners and area_of(owners[table]) != area_of(module)
            and area_of(module) not in TOOLS_READING_ACROSS and (module, table) not in FOREIGN_READS_ALLOWED]


def test_each_table_is_written_only_by_the_module_that_declares_it():
    foreign = foreign_writes(table_owners(), modules())
    assert foreign == [], "write another area's table through that area's models: " + "; ".join(foreign)


def test_an_area_reads_another_areas_tables_only_through_its_models():
    foreign = foreign_reads(table_owners(), modules())
    assert foreign == [], "read another area's table through that area's models: " + "; ".join(foreign)


def test_the_check_sees_sql_and_store_writes():
    source = 'store.execute("UPDATE accounts SET delivered = 1")\nstore.update("users", {"id": 1}, name="x")\n'
    assert sorted(table_writes(source)) == [(1, "accounts"), (2, "users")]


def test_the_check_sees_a_foreign_read_and_lets_a_tool_read_across():
    owners = {"accounts": "accounts/models.py", "users": "users/models.py"}
    sources = [("accounts/http.py", 'store.one("SELECT * FROM accounts a JOIN users u ON u.id = a.user_id")'),
               ("tools/inspector/views.py", 'store.all("SELECT * FROM users")'),
               ("users/models.py", 'store.all("SELECT id FROM users")')]
    assert foreign_reads(owners, sources) == ["accounts/http.py:1 reads users (declared in users/models.py)"]
