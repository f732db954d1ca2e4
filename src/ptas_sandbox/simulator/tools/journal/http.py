"""HTTP layer of the request journal: list a world's calls, and count those matching a pattern (verify)."""

import re

from ...operations import WORLD_AUTH, component, operation
from ...problems import InvalidBody, InvalidParameter
from ...timestamps import parse
from . import models

ENTRY = component("JournalEntry", {
    "type": "object",
    "description": "One call of the world as the sandbox saw it; bodies redacted (tokens, secrets, credentials) "
                   "and cut to a few KiB (`truncated`); a body that is no JSON and names a secret is not kept "
                   "(`withheld`).",
    "properties": {
        "id": {"type": "integer"}, "at": {"type": "string", "format": "date-time", "description": "world clock"},
        "wallAt": {"type": "string", "format": "date-time"}, "operationId": {"type": "string"},
        "method": {"type": "string"}, "path": {"type": "string"}, "query": {"type": "string"},
        "status": {"type": ["integer", "null"], "description": "null: the sandbox dropped the connection (an "
                   "injected fault; mark `dropped`)"}, "latencyMs": {"type": "number"},
        "token": {"type": ["object", "null"], "properties": {"id": {"type": "string"}, "kind": {"type": "string"}}},
        "request": {"type": "object"}, "response": {"type": "object"},
        "marks": {"type": "object", "description": "notes other parts of the sandbox made, e.g. `injected`"}},
    "required": ["id", "at", "wallAt", "operationId", "method", "path", "status", "latencyMs", "request",
                 "response", "marks"],
    "examples": [{"id": 3, "at": "2026-01-05T09:00:01.0000000Z", "wallAt": "2026-01-05T09:00:01.0000000Z",
                  "operationId": "CreateUser", "method": "POST", "path": "/partner/v2/users", "query": "",
                  "status": 201, "latencyMs": 2.4, "token": {"id": "5f0c…", "kind": "partner"},
                  "request": {"contentType": "application/json", "body": {"name": "Jane"}, "truncated": False},
                  "response": {"contentType": "application/json", "body": {"id": "…", "token": {
                      "accessToken": "[redacted]"}}, "truncated": False}, "marks": {}}]})
component("JournalPage", {"type": "object", "properties": {
    "requests": {"type": "array", "items": ENTRY},
    "hasMore": {"type": "boolean", "description": "more entries match: ask again with `before` (or `after` "
                                                  "when order=asc) set to the last id of this page"}},
    "required": ["requests", "hasMore"]})
component("JournalCount", {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})

STATUS = {"type": "string", "pattern": "^([1-5][0-9][0-9]|[1-5]xx)$", "description": "a code (404) or a class (4xx)"}
FILTERS = {
    "operationId": {"type": "string", "description": "e.g. CreateUser"},
    "method": {"type": "string"},
    "status": STATUS,
    "since": {"type": "string", "format": "date-time", "description": "world clock, inclusive"},
    "until": {"type": "string", "format": "date-time", "description": "world clock, inclusive"},
    "tokenId": {"type": "string", "description": "the id of the token that made the call"},
    "marked": {"type": "string", "description": "only entries with this mark: `injected` (a fault), `dropped`, "
                                                 "`harness`, `credentials`, `retryAfter`, `tool`"},
    "tools": {"type": "boolean", "description": "also the calls of the sandbox's own command line (`ptas listen`, "
                                                "...; mark `tool`), left out by default"},
}
PATTERN = {"type": "object", "additionalProperties": False, "properties": {
    **FILTERS,
    "status": {**STATUS, "type": ["string", "integer"], "minimum": 100, "maximum": 599},
    "path": {"type": "string", "description": "the exact path"},
    "pathPattern": {"type": "string", "maxLength": 256, "description": "a regular expression searched in the "
                    "path; it repeats only characters, classes and groups of them (no `(a+)*` or `(ab|cd)*`; "
                    "`[ab]*` is fine), with no backreference or lookaround, so that matching takes bounded time"},
    "requestBody": {"description": "a JSON value the (redacted) request body contains: objects match on the "
                                   "keys given, recursively"}}}


def filters(values):
    """Journal filters from query or body fields (names as in the API)."""
    found = {"operation": values.get("operationId"), "method": values.get("method"),
             "status": values.get("status"), "token": values.get("tokenId"), "path": values.get("path"),
             "path_pattern": values.get("pathPattern"), "marked": values.get("marked"),
             "tools": values.get("tools") is True}
    for name in ("since", "until"):
        value = values.get(name)
        if isinstance(value, str):
            try:
                value = parse(value)
            except ValueError as error:
                raise InvalidParameter(f"`{name}` is not a date-time: {error}.", parameter=name) from None
        found[name] = value
    if found["status"] is not None:
        try:
            models.status_range(found["status"])
        except ValueError as error:
            raise InvalidParameter(f"`status` is not valid: {error}.", parameter="status") from None
    if found["path_pattern"] is not None:
        try:
            models.path_pattern(found["path_pattern"])
        except re.error as error:
            raise InvalidParameter(f"`pathPattern` is not a regular expression: {error}.",
                                   parameter="pathPattern") from None
        except models.CostlyPattern as error:
            raise InvalidParameter(f"`pathPattern` is not taken: {error}.", parameter="pathPattern") from None
    return {k: v for k, v in found.items() if v is not None}


@operation("SandboxRequests", "GET", "/_sandbox/requests", tokens=WORLD_AUTH, control=True,
           query={**FILTERS,
                  "path": {"type": "string", "description": "the exact path"},
                  "order": {"type": "string", "enum": ["desc", "asc"], "description": "desc (newest first, the "
                            "default) or asc (oldest first: tail with `after`)"},
                  "after": {"type": "integer", "minimum": 0, "maximum": 2**53,
                            "description": "only entries with a larger id"},
                  "before": {"type": "integer", "minimum": 0, "maximum": 2**53,
                             "description": "only entries with a smaller id"},
                  "pageSize": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "default 100"}},
           responses={200: "JournalPage"})
def list_requests(call):
    """The request journal of the caller's world: every API and control call, newest first."""
    query = call.query
    order = query.get("order", "desc")
    if order not in ("desc", "asc"):
        raise InvalidParameter("`order` is desc or asc.", parameter="order")
    size = query.get("pageSize", 100)
    found = models.entries(call.sandbox.store, call.ctx.world.id, order=order, after=query.get("after"),
                           before=query.get("before"), limit=size + 1, **filters(query))
    return {"requests": found[:size], "hasMore": len(found) > size}


@operation("SandboxCountRequests", "POST", "/_sandbox/requests/count", tokens=WORLD_AUTH, control=True,
           body=PATTERN, body_required=False,
           example={"operationId": "CreateUser", "status": "2xx", "requestBody": {"name": "Jane"}},
           responses={200: "JournalCount"})
def count_requests(call):
    """Verify: how many calls of the caller's world match the pattern (every field optional, all must hold)."""
    body = call.body
    if not isinstance(body, dict):
        raise InvalidBody("The body must be a JSON object.")
    pattern = filters(body)
    if "requestBody" in body:
        pattern["body"] = body["requestBody"]
    try:
        return {"count": models.count(call.sandbox.store, call.ctx.world.id, **pattern)}
    except models.CostlyPattern as error:
        raise InvalidParameter(f"`pathPattern` is not taken: {error}.", parameter="pathPattern") from None
