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
