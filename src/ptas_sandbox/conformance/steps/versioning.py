"""Steps of the versioning features: removed paths, the version prefix, open schemas (spec §4.2 note 6, §9)."""

import re

from pytest_bdd import then, when

from ..scene import check
from . import phrase


@when(phrase('I call the removed path {method} {path}'))
def call_removed(scene, method, path):
    """A removed path is addressed under the prefix the document uses for its collection (/users, /partners)."""
    collection = "/" + path.strip("/").split("/")[0]
    prefix = scene.target.operations.prefix_of(collection)
    check(prefix is not None, f"the target's document serves no {collection} collection to find the prefix from")
    user = next(iter(scene.users.values()), None)
    values = {"id": user["id"] if user else "00000000-0000-0000-0000-000000000000",
              "name": user["body"].get("name", "") if user else "nobody"}
    filled = re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)
    body = {} if method in ("POST", "PUT", "PATCH") else None
    scene.reply = scene.client.request(method, prefix + filled, token=scene.token,
                                       **({"json": body} if body is not None else {}))
    scene.replies.append(scene.reply)


@then("the path is not served")
def not_served(scene):
    """Spec §4.2 note 6 says the path is removed, not how a removed path is answered (404, 405, 410, or a 400 for
    an id that is not one): any answer but a success."""
    check(not scene.reply.ok, f"a removed path is not served (spec §4.2 note 6); got {scene.reply.describe()}")


@then(phrase("the operation {operation} is served at {method} {path}"))
def served_at(scene, operation, method, path):
    ops = scene.target.operations
    check(operation in ops, f"the target's document does not offer {operation}")
    have_method, have_path, _ = ops.locate(operation)
    check(have_method == method and have_path in (path, ops.base + path),
          f"{operation} is at {have_method} {have_path}, the spec says {method} {path}")


@when("I read the target's OpenAPI document", target_fixture="document")
def read_document(scene):
    return scene.target.operations.document


@then("no response schema of the document forbids properties it does not name")
def open_schemas(document):
    """Spec §9 rule 2 (2.9.0): no additionalProperties restriction, so clients must tolerate new properties in
    responses. Request bodies may still be strict: what a client sends is the service's to restrict."""
    closed = []
    seen = set()
    for path, item in document.get("paths", {}).items():
        if path.startswith("/_sandbox"):
            continue
        for method, operation in item.items():
            for status, response in (operation.get("responses") or {}).items() if isinstance(operation, dict) else ():
                where = f"{method.upper()} {path} {status}"
                closed += closed_schemas(document, response, where, seen)
    check(not closed, "response schemas with additionalProperties false: " + ", ".join(closed[:10]))


def closed_schemas(document, node, where, seen):
    """Places under `node` (following $refs once each) where a schema forbids unnamed properties."""
    found = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
            seen.add(ref)
            target = document
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            found += closed_schemas(document, target, ref, seen)
        if node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False:
            found.append(where)
        for key, value in node.items():
            if key != "$ref":
                found += closed_schemas(document, value, f"{where}/{key}", seen)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += closed_schemas(document, value, f"{where}/{index}", seen)
    return found
