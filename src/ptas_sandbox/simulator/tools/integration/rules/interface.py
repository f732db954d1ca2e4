"""Calls the interface does not have or no longer wants: removed and unknown paths, deprecated operations and
fields."""

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
