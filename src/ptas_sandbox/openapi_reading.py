"""Reading an OpenAPI document as data: its operations by id, `$ref`s followed, an operation's success schema.

The profile learner reads the simulator's document beside a target's, and the profile layer reads the
simulator's own: both read it the same way, so that a learned name and a served name agree.
"""


def operations(document):
    """{operationId: (METHOD, path, operation)} of every operation the document names."""
    return {op["operationId"]: (method.upper(), path, op) for path, item in document["paths"].items()
            for method, op in item.items() if isinstance(op, dict) and op.get("operationId")}


def deref(document, node):
    """`node` with its `$ref`s (local ones, `#/...`) followed until a schema stands there."""
    while isinstance(node, dict) and "$ref" in node:
        target = document
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def success(operation):
    """(status, JSON schema) of the operation's first 2xx answer, or (None, None)."""
    for status, response in sorted(operation.get("responses", {}).items()):
        if str(status).startswith("2"):
            return int(status), ((response.get("content") or {}).get("application/json") or {}).get("schema")
    return None, None


def members(document, schema, value, component=None, path="", absent=False, depth=0):
    """(component, member, record, key, schema) for each member of a JSON value, walked along its schema: the
    record it belongs to (the name of the nearest `$ref`: `Transaction`), its name within that record
    (`amount`; `statistics.first` in an inline object, `fields[].mappedTo` in an array's entries), where it is
    (`record[key]`, which the caller may change or delete) and its schema. Members the schema does not declare
    are met too (schema None), not entered; with `absent`, so are declared members the record lacks."""
    if depth > 12 or not isinstance(schema, dict):
        return
    if "$ref" in schema:
        component, path = schema["$ref"].rsplit("/", 1)[-1], ""
        schema = deref(document, schema)
    if isinstance(value, dict):
        declared = set()
        for owner, at, properties in _declared(document, schema, component, path):
            for key, sub in properties.items():
                if key in declared or (key not in value and not absent):
                    continue
                declared.add(key)
                member = f"{at}.{key}" if at else key
                yield owner, member, value, key, sub
                if key in value:
                    yield from members(document, sub, value[key], owner, member, absent, depth + 1)
        for key in [k for k in value if k not in declared]:
            yield component, f"{path}.{key}" if path else key, value, key, None
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for entry in value:
            yield from members(document, schema["items"], entry, component, path + "[]", absent, depth + 1)


def _declared(document, schema, component, path):
    """(record, path, properties) of a schema and of each part of its allOf (a part that is a `$ref` is that
    record's)."""
    yield component, path, schema.get("properties") or {}
    for part in schema.get("allOf") or ():
        owner, at = (part["$ref"].rsplit("/", 1)[-1], "") if "$ref" in part else (component, path)
        yield from _declared(document, deref(document, part), owner, at)

