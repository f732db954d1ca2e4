"""How a profiled simulator dresses its answers as the deployment does (docs/profiles.md), beside their shapes and
names (layer.py): the headers it sends on every answer, record members in its JSON types, null members the spec
does not name left out, an invalid body's `errors` in its form; and the document saying the same.
"""

import json

from ptas_sandbox import openapi_reading
from ptas_sandbox.profile import DECIMAL, spec_names


def with_headers(headers, learned):
    """An answer's headers with those the deployment sends on every answer, where the simulator's own answer has
    none of that name (a header it sends itself keeps its value)."""
    have = {name.lower() for name, _ in headers}
    return headers + [(name, entry["value"]) for name, entry in learned.items() if name.lower() not in have]


def dress(document, schema, body, types, omit_nulls, left_out=None):
    """A JSON answer in the simulator's words, walked along its schema: each record member the deployment gives
    another JSON type (`types`: {record: {member: kind}}) in that type, the members it never answers (`left_out`:
    {record: [member]}) left out, and, where the deployment leaves them out (`omit_nulls`), the null members the
    spec does not name left out."""
    left_out = left_out or {}
    for component, member, record, key, _ in list(openapi_reading.members(document, schema, body)):
        if key not in record or component is None:
            continue
        if member in left_out.get(component, ()):
            del record[key]
        elif record[key] is None:
            if omit_nulls and not spec_names(component, member):
                del record[key]
        elif member in types.get(component, {}):
            record[key] = converted(record[key], types[component][member])
    return body


def converted(value, kind):
    """A value in the deployment's JSON type (a number as a decimal string of its fraction digits, a boolean as
    "true"/"false", and back), where it converts without loss; otherwise as it was."""
    want = kind["type"]
    if isinstance(value, bool):
        return ("true" if value else "false") if want == "string" else value
    if isinstance(value, (int, float)) and want == "string":
        digits = kind.get("fractionDigits")
        return f"{value:.{digits}f}" if digits is not None else json.dumps(value)
    if isinstance(value, str) and want == "boolean" and value in ("true", "false"):
        return value == "true"
    if isinstance(value, str) and want in ("number", "integer") and DECIMAL.fullmatch(value):
        if "." not in value:
            return int(value)
        return float(value) if want == "number" else value
    return value


def member_path(pointer):
    """A JSON pointer as a member path: /redirectUrls/0 as redirectUrls[0], /uiSettings/styling as
    uiSettings.styling, the body itself as `$` (ASP.NET Core's keys of ValidationProblemDetails)."""
    out = ""
    for part in [p.replace("~1", "/").replace("~0", "~") for p in str(pointer or "").split("/")[1:] if p]:
        out += f"[{part}]" if part.isdigit() else ("." if out else "") + part
    return out or "$"


def errors_in(form, errors):
    """The simulator's `errors` of an invalid body ([{pointer, detail}]) in the deployment's form: an object of
    member paths or pointers to messages, or a list under its own member names."""
    if not form or not isinstance(errors, list):
        return errors

    def where(error):
        pointer = error.get("pointer") or "/"
        return pointer if form.get("keys") == "pointer" else member_path(pointer)
    entries = [e for e in errors if isinstance(e, dict)]
    if form["form"] == "list":
        return [{form["pointer"]: where(e), form["detail"]: e.get("detail")} for e in entries]
    by_member: dict[str, list[str]] = {}
    for error in entries:
        by_member.setdefault(where(error), []).append(str(error.get("detail", "")))
    return by_member if form.get("messages") == "list" else {k: "; ".join(v) for k, v in by_member.items()}


# -- the document ---------------------------------------------------------------------------------------------
def api_components(document, prefix="/_sandbox"):
    """The components the answers of the API hold (not only the control API's), following their $refs."""
    found, todo = set(), []
    for path, item in document["paths"].items():
        if not path.startswith(prefix):
            todo += [r.get("content") for op in item.values() if isinstance(op, dict)
                     for r in (op.get("responses") or {}).values() if isinstance(r, dict)]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[-1] not in found:
                found.add(ref.rsplit("/", 1)[-1])
                todo.append(openapi_reading.deref(document, node))
            todo += [v for k, v in node.items() if k != "$ref"]
        elif isinstance(node, list):
            todo += node
    return found


def properties_of(schema, path=""):
    """(member, its schema, the schema that holds it) of each property of a record's schema, with the member
    named as `members` names it (`statistics.first`, `fields[].mappedTo`); not into other records ($refs)."""
    for key, sub in ((schema or {}).get("properties") or {}).items():
        member = f"{path}.{key}" if path else key
        yield member, sub, schema
        if isinstance(sub, dict) and "$ref" not in sub:
            yield from properties_of(sub, member)
            if isinstance(sub.get("items"), dict) and "$ref" not in sub["items"]:
                yield from properties_of(sub["items"], member + "[]")
    for part in (schema or {}).get("allOf") or ():
        if "$ref" not in part:
            yield from properties_of(part, path)


def publish_types(document, types):
    """The records' members in the deployment's JSON types, with the schema its document gives them."""
    schemas = document["components"]["schemas"]
    for component, members in (types or {}).items():
        for member, prop, _ in list(properties_of(schemas.get(component))):
            if member in members:
                kind = members[member]
                prop.clear()
                prop.update(kind.get("schema") or {"type": kind["type"]})


def joined(*left_outs):
    """{record: [member]} maps as one."""
    return {component: [member for left_out in left_outs for member in left_out.get(component, ())]
            for component in {component for left_out in left_outs for component in left_out}}


def publish_without(document, left_out):
    """The API's records without the members the deployment never answers."""
    schemas = document["components"]["schemas"]
    for component, gone in left_out.items():
        schema = schemas.get(component)
        if isinstance(schema, dict):
            for member in gone:
                (schema.get("properties") or {}).pop(member, None)
            if schema.get("required"):
                schema["required"] = [r for r in schema["required"] if r not in gone]


def publish_optional(document, by_operation):
    """The API's records with the members some operations do not answer made optional."""
    schemas = document["components"]["schemas"]
    for found in by_operation.values():
        for component, members in found.items():
            schema = schemas.get(component)
            if isinstance(schema, dict) and schema.get("required"):
                schema["required"] = [r for r in schema["required"] if r not in members]


def publish_without_nulls(document):
    """The API's records with the members the spec does not name never null: optional, not nullable."""
    schemas = document["components"]["schemas"]
    for component in api_components(document):
        for member, prop, holder in list(properties_of(schemas.get(component))):
            if isinstance(prop, dict) and isinstance(prop.get("type"), list) and "null" in prop["type"] \
                    and not spec_names(component, member):
                rest = [t for t in prop["type"] if t != "null"]
                prop["type"] = rest[0] if len(rest) == 1 else rest
                name = member.rsplit(".", 1)[-1]
                if name in (holder.get("required") or []):
                    holder["required"] = [r for r in holder["required"] if r != name]


def publish_headers(document, learned, prefix="/_sandbox"):
    """The headers the deployment sends on every answer, named on the responses its document names them on (`*`:
    every response of every operation)."""
    for path, item in document["paths"].items():
        if path.startswith(prefix):
            continue
        for op in item.values():
            for code, response in ((op.get("responses") or {}) if isinstance(op, dict) else {}).items():
                named = {name: entry for name, entry in learned.items()
                         if {"*", str(code)} & set(entry.get("documented") or ())}
                if named and isinstance(response, dict):
                    headers = response.setdefault("headers", {})
                    for name, entry in named.items():
                        headers[name] = {"description": "sent on every answer",
                                         "schema": entry.get("schema") or {"type": "string",
                                                                           "example": entry["value"]}}
