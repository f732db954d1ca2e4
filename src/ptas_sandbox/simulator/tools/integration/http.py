"""HTTP layer of the integration report: `GET /_sandbox/report` as JSON, text or JUnit XML."""

from flask import Response

from ...operations import REGISTRY, WORLD_AUTH, component, operation
from ...problems import InvalidParameter
from . import render, rules

FINDING = component("ReportFinding", {"type": "object", "properties": {
    "rule": {"type": "string"}, "severity": {"enum": list(rules.SEVERITIES)}, "title": {"type": "string"},
    "message": {"type": "string"}, "fix": {"type": "string"}, "count": {"type": "integer"},
    "evidence": {"type": "array", "items": {"type": "object", "description": "at (world clock), requestId or "
                 "deliveryId, operationId, method, path, status, injected"}}},
    "required": ["rule", "severity", "title", "message", "fix", "evidence"]})
component("IntegrationReport", {"type": "object", "properties": {
    "world": {"type": "string"}, "generatedAt": {"type": "string", "format": "date-time"},
    "since": {"type": ["string", "null"]}, "judged": {"type": "object"},
    "summary": {"type": "object", "properties": {s: {"type": "integer"} for s in rules.SEVERITIES}},
    "rules": {"type": "array", "items": {"type": "object"}}, "findings": {"type": "array", "items": FINDING}},
    "required": ["world", "generatedAt", "summary", "rules", "findings"]})


def report_of(ctx, since=None, slow_ms=rules.SLOW_MS, after=None):
    """The report of the context's world (also the inspector's Report tab)."""
    operations = {op.id: op for op in REGISTRY.values()}
    traffic = rules.gather(ctx.store, ctx.world.id, operations, since=since, slow_ms=slow_ms, after=after)
    return rules.judge(traffic, ctx.now, ctx.world.id, since, after)


@operation("SandboxReport", "GET", "/_sandbox/report", tokens=WORLD_AUTH, control=True, atomic=False, query={
    "format": {"type": "string", "enum": ["json", "text", "junit"], "description": "json (default), text, junit"},
    "failOn": {"type": "string", "enum": list(rules.SEVERITIES),
               "description": "junit: rules with findings at or above this severity fail (default warning)"},
    "since": {"type": "string", "format": "date-time", "description": "judge only traffic from this instant on "
                                                                      "(world clock)"},
    "after": {"type": "integer", "minimum": 0, "maximum": 2**53,
              "description": "judge only calls after this journal entry (a test's \"from here on\")"},
    "slowMs": {"type": "integer", "minimum": 1, "maximum": 60000,
               "description": f"a receiver slower than this is slow (default {rules.SLOW_MS})"}},
    responses={200: {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/IntegrationReport"}},
                                 "text/plain": {"schema": {"type": "string"}},
                                 "application/xml": {"schema": {"type": "string"}}}}})
def report(call):
    """Judge the world's recorded traffic: each finding names its rule, the evidence and a fix (docs/chaos.md)."""
    query = call.query
    fmt = query.get("format", "json")
    if fmt not in ("json", "text", "junit"):
        raise InvalidParameter("`format` is json, text or junit.", parameter="format")
    fail_on = query.get("failOn", "warning")
    if fail_on not in rules.SEVERITIES:
        raise InvalidParameter(f"`failOn` is one of {', '.join(rules.SEVERITIES)}.", parameter="failOn")
    with call.sandbox.store.transaction():
        result = report_of(call.ctx, query.get("since"), query.get("slowMs", rules.SLOW_MS), query.get("after"))
    if fmt == "text":
        return Response(render.text(result), 200, mimetype="text/plain")
    if fmt == "junit":
        return Response(render.junit(result, fail_on), 200, mimetype="application/xml")
    return result
