"""The OpenAPI 3.1 document, built from the operation registry (the same registry the routes come from)."""

import re

from ptas_sandbox import __version__

from . import scopes
from .operations import COMPONENTS, NO_AUTH, REGISTRY, ref

SPEC_VERSION = "2.12.1"   # spec §9.1: the main interface version the simulator implements
PROBLEM = {
    "type": "object",
    "description": "RFC 9457 ProblemDetails; every error of the simulator has this body.",
    "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                   "detail": {"type": "string"}, "instance": {"type": "string"}, "traceId": {"type": "string"}},
    "required": ["type", "title", "status"],
}
ERRORS = {"400": "Bad input", "401": "Missing or invalid bearer token", "403": "A required scope is missing",
          "404": "Not found (or not yours)", "409": "Conflict with the current state",
          "413": "Body too large", "415": "Body is not JSON", "429": "Rate limit exceeded",
          "503": "The store is unavailable now (Retry-After)", "507": "The store's disk is full"}


def full_path(op, prefix):
    return op.path if op.control else prefix + op.path


def document(prefix):
    paths = {}
    for op in REGISTRY.values():
        item = paths.setdefault(full_path(op, prefix), {})
        item[op.method.lower()] = describe(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Payment Transactions Aggregation Service (ptas-sandbox simulator)",
                 "version": SPEC_VERSION,
                 "description": f"ptas-sandbox {__version__}: every operation of the interface specification, "
                                "plus the sandbox control API under /_sandbox. Request examples of operations a user "
                                "may call (accounts, OAuth2, Account UI) are written for a user token; with a partner "
                                "token add the user's `userId`."},
        "paths": paths,
        "components": {
            "schemas": {"ProblemDetails": PROBLEM, **COMPONENTS},
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                "description": "Spec §5: `Authorization: Bearer <JWT>`. Each operation's `security` lists the scopes "
                               "that let a token call it (any one of them), as does `x-required-scopes` per token "
                               "kind and the operation's description."},
                "adminKey": {"type": "apiKey", "in": "header", "name": "X-Sandbox-Admin-Key",
                             "description": "the operator's admin key (PTAS_ADMIN_KEY), needed for server-wide "
                                            "operations when one is set"}},
        },
        "security": [{"bearer": []}],
    }


def bounded(schema):
    """An integer query parameter as the pipeline reads it: ASCII digits, within 64 bits unless narrower."""
    if schema.get("type") != "integer":
        return schema
    return {"minimum": 0, "maximum": 2**63 - 1, **schema}


def describe(op):
    doc = {"operationId": op.id, "summary": op.summary, "tags": [op.area]}
    if op.deprecated:
        doc["deprecated"] = True
    if op.callbacks:
        doc["callbacks"] = op.callbacks
    if op.tokens == NO_AUTH:
        doc["security"] = [{}, {"adminKey": []}] if op.admin else []
    elif not op.control:
        doc["security"], doc["x-required-scopes"], line = required_scopes(op)
        doc["description"] = line
    parameters = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                  for n in re.findall(r"{(\w+)}", op.path)]
    parameters += [{"name": n, "in": "query", "required": False, "schema": bounded(s)} for n, s in op.query.items()]
    if parameters:
        doc["parameters"] = parameters
    if op.body is not None:
        media = {"schema": op.body}
        if op.example is not None:
            media["example"] = op.example
        doc["requestBody"] = {"required": op.body_required, "content": {op.consumes: media}}
    responses = {}
    for status, schema in (op.responses or {200: None}).items():
        if schema == "ProblemDetails":      # an error a credential-less operation may still answer (401)
            responses[str(status)] = {"description": ERRORS.get(str(status), "Error"), "content": {
                "application/problem+json": {"schema": ref("ProblemDetails")}}}
        elif isinstance(schema, str) and schema.startswith("text/"):
            responses[str(status)] = {"description": "A page", "content": {schema: {"schema": {"type": "string"}}}}
        elif schema is None:
            responses[str(status)] = {"description": "No body" if status == 204 else "Success"}
        elif isinstance(schema, dict) and "content" in schema:      # several media types, given whole
            responses[str(status)] = {"description": "Success", **schema}
        else:
            schema = ref(schema) if isinstance(schema, str) else schema
            responses[str(status)] = {"description": "Success",
                                      "content": {"application/json": {"schema": schema}}}
    for status, text in ERRORS.items():
        if op.tokens == NO_AUTH and status in ("401", "403") and not (op.admin and status == "401"):
            continue
        responses.setdefault(status, {"description": text, "content": {
            "application/problem+json": {"schema": ref("ProblemDetails")}}})
    doc["responses"] = responses
    return doc


def required_scopes(op):
    """What a token must hold to call `op`: OpenAPI security requirements (alternatives, each naming the scopes
    it needs), `x-required-scopes` per token kind, and one readable line. A scope's `resource:all` also grants
    it (spec §5 table), so it is listed as an alternative of its own."""
    kinds = op.tokens if isinstance(op.tokens, tuple) else ()
    per_kind = {kind: list(op.scopes_for(kind)) for kind in kinds}
    alternatives = []
    for needed in per_kind.values():
        for scope in needed:
            for granting in (scope, scope.rpartition(":")[0] + ":all"):
                if granting not in alternatives and granting in scopes.TABLE:
                    alternatives.append(granting)
    if not any(per_kind.values()):
        security, line = [{"bearer": []}], f"Needs a {' or '.join(kinds)} token; no particular scope."
    else:
        security = [{"bearer": [scope]} for scope in alternatives]
        parts = [f"a {kind} token with {' or '.join(needed)}" if needed else f"any {kind} token"
                 for kind, needed in per_kind.items()]
        line = f"Required scopes: {'; or '.join(parts)} (a resource's `:all` scope grants each of its actions)."
    return security, {kind: needed for kind, needed in per_kind.items()}, line
