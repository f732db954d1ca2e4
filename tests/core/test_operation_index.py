"""docs/operations.md: every operation's code in one step. The table is made from the registry, so it cannot drift:
this test fails when it is stale and rewrites it when run with PTAS_WRITE_INDEX=1."""

import inspect
import os
import re
from pathlib import Path

import ptas_sandbox
from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.operations import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "docs" / "operations.md"
PACKAGE = Path(ptas_sandbox.__file__).resolve().parent
ROW = re.compile(r"^\| (\w+) \| `[^`]+` \| \w+ \| `([^`]+)` `(\w+)` \|$", re.M)


def index():
    create_app({"START_SERVICES": False}).extensions["ptas"].close()     # every area registered
    lines = ["# Operations and where their code is", "",
             "Made from the operation registry by `tests/core/test_operation_index.py` (run it with",
             "`PTAS_WRITE_INDEX=1` after adding an operation). Paths of the service are under `/partner/v2`;",
             "`/_sandbox/...` is the control API. Each handler is in its area's `http.py` (a sandbox tool's under",
             "`simulator/tools/`), over its `models.py`; the operationId is written there literally.", "",
             "| operation | method and path | area | handler |", "| --- | --- | --- | --- |"]
    for op in sorted(REGISTRY.values(), key=lambda op: (op.control, op.area, op.id)):
        source = Path(inspect.getsourcefile(inspect.unwrap(op.handler))).resolve().relative_to(PACKAGE.parent.parent)
        where = op.path if op.control else f"/partner/v2{op.path}"
        lines.append(f"| {op.id} | `{op.method} {where}` | {op.area} | `{source.as_posix()}` "
                     f"`{op.handler.__name__}` |")
    return "\n".join(lines) + "\n"


def test_the_operation_index_names_every_operations_handler():
    wanted = index()
    if os.environ.get("PTAS_WRITE_INDEX"):
        INDEX.write_text(wanted)
    assert INDEX.exists() and INDEX.read_text() == wanted, "docs/operations.md is stale: PTAS_WRITE_INDEX=1"


def misplaced(index_text, root):
    """Rows whose file does not declare their operation: the operationId written there literally (a grep for it
    finds its declaration) and a function of the handler's name."""
    wrong = []
    for operation_id, path, handler in ROW.findall(index_text):
        source = (root / path).read_text() if (root / path).is_file() else ""
        if f'"{operation_id}"' not in source or not re.search(rf"^\s*def {handler}\(", source, re.M):
            wrong.append(f"{operation_id} -> {path} {handler}")
    return wrong


def test_every_row_points_at_the_file_that_declares_its_operation():
    index()     # every area registered
    assert {operation_id for operation_id, _, _ in ROW.findall(INDEX.read_text())} == set(REGISTRY)
    assert misplaced(INDEX.read_text(), ROOT) == []


def test_the_check_sees_a_row_pointing_to_a_file_without_its_operation(tmp_path):
    (tmp_path / "a.py").write_text('@operation("GetThing", "GET", "/things")\ndef get_thing(call):\n    pass\n')
    (tmp_path / "b.py").write_text("def shown(handler):\n    return handler\n")
    index_text = ("| GetThing | `GET /things` | things | `a.py` `get_thing` |\n"
                  "| GetOther | `GET /other` | things | `a.py` `get_other` |\n"
                  "| GetThing | `GET /things` | things | `b.py` `get_thing` |\n")
    assert misplaced(index_text, tmp_path) == ["GetOther -> a.py get_other", "GetThing -> b.py get_thing"]
