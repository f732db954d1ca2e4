"""docs/operations.md: every operation's code in one step. The table is made from the registry, so it cannot drift:
this test fails when it is stale and rewrites it when run with PTAS_WRITE_INDEX=1."""

import inspect
import os
from pathlib import Path

import ptas_sandbox
from ptas_sandbox.simulator import create_app
from ptas_sandbox.simulator.operations import REGISTRY

INDEX = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
PACKAGE = Path(ptas_sandbox.__file__).resolve().parent


def index():
    create_app({"START_SERVICES": False}).extensions["ptas"].close()     # every area registered
    lines = ["# Operations and where their code is", "",
             "Made from the operation registry by `tests/core/test_operation_index.py` (run it with",
             "`PTAS_WRITE_INDEX=1` after adding an operation). Paths of the service are under `/partner/v2`;",
             "`/_sandbox/...` is the control API. Each handler is in its area's `http.py`, over that area's",
             "`models.py`.", "",
             "| operation | method and path | area | handler |", "| --- | --- | --- | --- |"]
    for op in sorted(REGISTRY.values(), key=lambda op: (op.control, op.area, op.id)):
        source = Path(inspect.getsourcefile(op.handler)).resolve().relative_to(PACKAGE.parent.parent)
        where = op.path if op.control else f"/partner/v2{op.path}"
        lines.append(f"| {op.id} | `{op.method} {where}` | {op.area} | `{source.as_posix()}` "
                     f"`{op.handler.__name__}` |")
    return "\n".join(lines) + "\n"


def test_the_operation_index_names_every_operations_handler():
    wanted = index()
    if os.environ.get("PTAS_WRITE_INDEX"):
        INDEX.write_text(wanted)
    assert INDEX.exists() and INDEX.read_text() == wanted, "docs/operations.md is stale: PTAS_WRITE_INDEX=1"
