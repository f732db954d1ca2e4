"""Every status a control operation can answer is in its documented responses (issue 40 item 4: POST
/_sandbox/snapshots answered 403, which its document did not list).

What an operation can raise is read from the code, not from a run: the handler and every function of the
simulator it names, followed through (a class named is not: an annotation would pull in every method of the
Simulator), are searched for the ProblemDetails classes they name (a superset: a class
named is taken as raised), and the pipeline adds what it answers for the operation's kind (credentials, body,
query, the store's platform)."""

import ast
import importlib
import importlib.util
import inspect
import textwrap
import types

import pytest

from ptas_sandbox.simulator import openapi
from ptas_sandbox.simulator.app import areas
from ptas_sandbox.simulator.operations import NO_AUTH, REGISTRY
from ptas_sandbox.simulator.problems import Problem

for _area in areas():       # the operations register as their modules load
    if importlib.util.find_spec(f"ptas_sandbox.simulator.{_area}.http"):
        importlib.import_module(f"ptas_sandbox.simulator.{_area}.http")
CONTROL = sorted((op for op in REGISTRY.values() if op.control and openapi.documented(op)), key=lambda op: op.id)
OURS = "ptas_sandbox.simulator"


def resolved(node, scope):
    """The object an expression of names and attributes (`models.load`, `Forbidden`) names in `scope`."""
    if isinstance(node, ast.Name):
        return scope.get(node.id, getattr(__builtins__, node.id, None) if not isinstance(__builtins__, dict)
                         else __builtins__.get(node.id))
    if isinstance(node, ast.Attribute):
        base = resolved(node.value, scope)
        return getattr(base, node.attr, None) if isinstance(base, (types.ModuleType, type)) else None
    return None


def named_problems(function, seen=None):
    """The ProblemDetails classes `function` names, and those of every function of the simulator it names."""
    seen = set() if seen is None else seen
    function = inspect.unwrap(function)
    if function in seen or not getattr(function, "__module__", "").startswith(OURS):
        return set()
    seen.add(function)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError):
        return set()
    scope = dict(function.__globals__)
    if function.__closure__:
        scope.update(zip(function.__code__.co_freevars, (c.cell_contents for c in function.__closure__)))
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        thing = resolved(node, scope)
        if isinstance(thing, type) and issubclass(thing, Problem) and thing is not Problem:     # caught, not raised
            found.add(thing)
        elif isinstance(thing, types.FunctionType):
            found |= named_problems(thing, seen)
    return found


def pipeline_statuses(op):
    """What the pipeline answers for `op` before or around its handler."""
    statuses = {503, 507}                       # the store's platform (any operation touching it)
    if op.tokens != NO_AUTH:
        statuses |= {401, 403, 404}             # bearer_world, control_principal; a deleted world's token
    if op.admin:
        statuses |= {401}                       # require_admin
    if op.body is not None:
        statuses |= {400, 413, 415}
    if op.query:
        statuses |= {400}
    return statuses


def can_answer(op):
    return pipeline_statuses(op) | {cls.status for cls in named_problems(op.handler)}


@pytest.mark.parametrize("op", CONTROL, ids=[op.id for op in CONTROL])
def test_a_control_operation_documents_every_status_it_can_answer(op):
    documented = {int(status) for status in openapi.describe(op)["responses"]}
    assert can_answer(op) - documented == set(), f"{op.method} {op.path} answers undocumented statuses"


def test_the_reading_finds_the_403_of_a_snapshot_replace():
    """The reading is not blind: the 403 of the issue is among what it finds for the snapshot load."""
    assert 403 in can_answer(REGISTRY["SandboxLoadSnapshot"])
