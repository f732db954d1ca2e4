"""Calls the interface does not have or no longer wants: removed and unknown paths, deprecated operations and
fields."""

from ....operations import COMPONENTS
from .base import UNROUTED, Rule, finding, grouped, judges, listing


@judges(
    Rule("removed-path", "error", "Calls to paths removed from the interface",
         "Use the current operation (spec §4.2 note 6 lists the replacements); /openapi.json has every live path."),
)
def removed_paths(data):
    calls = [c for c in data.api_calls if c.operationId == "RemovedPath"]
    if calls:
        yield finding("removed-path", f"{len(calls)} call(s) to removed paths: "
                      f"{listing({f'{c.method} {c.path}' for c in calls})}.", [c.evidence() for c in calls])


@judges(
    Rule("unknown-path", "error", "Calls to paths or methods the interface does not have",
         "Build requests from the OpenAPI document (/openapi.json): the path, its method and the /partner/v2 "
         "prefix."),
)
def unknown_paths(data):
    calls = [c for c in data.api_calls if c.operationId in UNROUTED]
    if calls:
        yield finding("unknown-path", f"{len(calls)} call(s) no operation takes: "
                      f"{listing({f'{c.method} {c.path}' for c in calls})}.", [c.evidence() for c in calls])


@judges(
    Rule("deprecated-operation", "warning", "Calls to deprecated operations",
         "Move to the operation that replaces it before it is removed (the OpenAPI document marks deprecated ones)."),
)
def deprecated_operations(data):
    by_op = grouped([c for c in data.api_calls if c.operationId in data.deprecated], lambda c: c.operationId)
    for op, calls in by_op.items():
        yield finding("deprecated-operation", f"{op} is deprecated; called {len(calls)} time(s).",
                      [c.evidence() for c in calls], operationId=op)


# (operationId, body field) the spec calls deprecated in requests, and what replaces it.
DEPRECATED_FIELDS = {("CreateAccountUiSession", "accountTypeId"): "accountTypeIds"}


@judges(
    Rule("deprecated-field", "warning", "Requests using deprecated fields",
         "Send the field that replaced it: accountTypeIds (an array) instead of accountTypeId on POST /accountui "
         "(spec §4.3 note 4)."),
)
def deprecated_fields(data):
    by_field = {}
    for call in data.api_calls:
        body = call.body()
        for (op, name), replacement in DEPRECATED_FIELDS.items():
            if call.operationId == op and isinstance(body, dict) and name in body:
                by_field.setdefault((op, name, replacement), []).append(call)
    for (op, name, replacement), calls in by_field.items():
        yield finding("deprecated-field", f"{op} was sent the deprecated field `{name}` {len(calls)} time(s); use "
                      f"`{replacement}`.", [c.evidence() for c in calls], operationId=op, field=name)


# (operationId, body field) the spec retired, and what replaced it (spec §9's history says when).
RETIRED_FIELDS = {("UpdatePartner", "redirectUrl"): ("redirectUrls", "spec §2 Partner: redirectUrls, a list, "
                                                     "replaced the single redirectUrl in 2.0.0-beta2"),
                  ("CreatePartner", "redirectUrl"): ("redirectUrls", "spec §2 Partner: redirectUrls, a list, "
                                                     "replaced the single redirectUrl in 2.0.0-beta2")}


def body_fields(operation):
    """The top-level fields an operation's JSON body takes, or None when its schema names none (anything goes)."""
    schema = operation.body or {}
    if "$ref" in schema:
        schema = COMPONENTS.get(schema["$ref"].rsplit("/", 1)[-1], {})
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return set(properties) if properties else None


@judges(
    Rule("ignored-field", "warning", "Retired request fields, accepted and ignored",
         "Send the field that replaced it (spec §2 names both): schemas have no additionalProperties restriction "
         "(spec §9 rule 2), so a retired field is accepted and ignored, and what it was meant to set stays as it "
         "was."),
    Rule("unknown-field", "info", "Request fields the operation's schema does not name, accepted and ignored",
         "Send the fields the operation takes (the OpenAPI document's request schema): an unknown or misspelt "
         "field is accepted and ignored (spec §9 rule 2). (Advice: the spec leaves some fields of the real "
         "service unshown, so one it takes may be unknown here; it never fails a build at --fail-on warning.)"),
)
def ignored_fields(data):
    """A successful call whose JSON body carried a top-level field its operation's request schema does not name:
    the service answered 2xx and did not do what that field asked. A field the spec retired is sure to be a
    mistake; another may be a field of the real service the spec does not show."""
    by_field = {}
    for call in data.api_calls:
        operation, body = data.operations.get(call.operationId), call.body()
        if operation is None or not call.ok() or not isinstance(body, dict):
            continue
        known = body_fields(operation)
        for name in sorted(set(body) - known if known is not None else ()):
            by_field.setdefault((call.operationId, name), []).append(call)
    for (op, name), calls in by_field.items():
        replacement, why = RETIRED_FIELDS.get((op, name), (None, None))
        if replacement:
            yield finding("ignored-field", f"{op} was sent the retired field `{name}` {len(calls)} time(s) and "
                          f"ignored it: send `{replacement}` ({why}).", [c.evidence() for c in calls],
                          operationId=op, field=name)
        else:
            yield finding("unknown-field", f"{op} was sent the field `{name}` {len(calls)} time(s), which its "
                          "request schema does not name, and ignored it.", [c.evidence() for c in calls],
                          operationId=op, field=name)
