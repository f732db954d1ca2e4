"""HTTP layer of the scenarios (control API): list them, and load one into a new world."""

from ...operations import NO_AUTH, Answer, component, operation, ref
from . import models

component("ScenarioList", {"type": "object", "properties": {"scenarios": {"type": "array", "items": {
    "type": "object", "properties": {"name": {"type": "string"}, "summary": {"type": "string"}},
    "required": ["name", "summary"]}}}, "required": ["scenarios"]})
component("ScenarioWorld", {"allOf": [ref("SandboxWorld"), {"type": "object", "properties": {
    "scenario": {"type": "string"},
    "users": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "accessToken": {"type": "string"}}}}}}]})


@operation("SandboxGetScenarios", "GET", "/_sandbox/scenarios", tokens=NO_AUTH, control=True,
           responses={200: "ScenarioList"})
def get_scenarios(call):
    """The named scenarios, each with a one-line summary."""
    return {"scenarios": [{"name": n, "summary": s} for n, s in models.catalogue()]}


@operation("SandboxLoadScenario", "POST", "/_sandbox/scenarios/{name}", tokens=NO_AUTH, control=True, admin=True,
           body={"type": "object", "properties": {"seed": {"type": "integer", "minimum": 0, "maximum": 2**53}}},
           body_required=False, example={"seed": 7},
           responses={201: "ScenarioWorld", 403: "ProblemDetails"},      # a served profile without its account types
           atomic=False)        # its own transactions (models.load)
def load_scenario(call):
    """Load a named scenario into a new world (frozen clock, fixed start); answers with its partner token."""
    return Answer(201, models.load(call.sandbox, call.params["name"], seed=call.body.get("seed")))
