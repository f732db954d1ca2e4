"""Request bodies the spec does not show, built from the target's own document.

A step says what it means to send by the spec's words for it (`accountTypeId`, `userId`, `credentials`,
`name`, `startDate`, ...): `Bodies.build` places each value on the property of the operation's request schema
that carries it (the same name; else the property whose name shares the most words with it, a synonym, or for
an identifier the property whose enum lists the value), then fills every other required property from its
schema (enum, const, default, example, format, type). A value the schema has no place for, or a required
property the harness cannot fill, makes the body `NoSchema`: the scenario is skipped with that reason.

Records are found the same way: `identifier` takes a record's id under the name the document gives it.
"""

import re
import uuid

from .resolver import NotOffered

# Words that mean the same in request schemas (lower case, one word each).
SYNONYMS = {
    "user": {"owner", "customer", "client", "merchant"},
    "credentials": {"settings", "secrets", "fields", "parameters", "params", "values", "credential", "config"},
    "name": {"label", "title", "displayname"},
    "start": {"from", "since", "begin"},
    "date": {"time", "datetime", "at"},
    "callback": {"url", "target", "endpoint", "destination"},
    "events": {"kinds", "types", "subscriptions", "topics"},
    "reference": {"ref", "token", "code"},
    "email": {"mail", "emailaddress"},
}
SAMPLE_FORMATS = {"email": "conformance@example.test", "uri": "https://partner.example/conformance",
                  "url": "https://partner.example/conformance", "date": "2024-01-01",
                  "date-time": "2024-01-01T00:00:00.0000000Z", "uuid": None}


class NoSchema(NotOffered):
    """The target's document shows no usable request schema for what a step needs to send."""


def words(name):
    """`accountTypeId` -> {"account", "type", "id"}; `callback_url` -> {"callback", "url"}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {w.lower() for w in re.split(r"[\s_\-.]+", spaced) if w}


def expand(found):
    out = set(found)
    for word in found:
        out |= SYNONYMS.get(word, set())
        out |= {key for key, same in SYNONYMS.items() if word in same}
    return out


def json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def types_of(schema):
    kind = schema.get("type")
    if kind is None:
        return set()
    return set(kind) if isinstance(kind, list) else {kind}


def compatible(schema, value):
    kinds = types_of(schema)
    have = json_type(value)
    return not kinds or have in kinds or (have == "integer" and "number" in kinds)


def flatten(schema):
    """(properties, required) of an object schema, through allOf (conditional parts are the target's to apply)."""
    properties, required = dict(schema.get("properties") or {}), list(schema.get("required") or [])
    for part in schema.get("allOf") or []:
        if isinstance(part, dict):
            more, needed = flatten(part)
            properties.update({k: v for k, v in more.items() if k not in properties})
            required += [r for r in needed if r not in required]
    return properties, required


class Bodies:
    def __init__(self, operations):
        self.operations = operations

    def schema(self, operation):
        schema = self.operations.request_schema(operation)
        if not isinstance(schema, dict) or not (flatten(schema)[0] or types_of(schema) == {"object"}):
            raise NoSchema(f"the target's document shows no request schema for "
                           f"{self.operations.operation_id(operation)}, whose payload the spec does not show")
        return schema

    def placement(self, operation, meaning):
        """The request property of `operation` that carries `meaning` (a spec word), or None."""
        properties, _ = flatten(self.schema(operation))
        return place(properties, meaning, None, set())

    def build(self, operation, values, optional=()):
        """A body for `operation`: `values` by their spec words, placed on the target's properties; `optional`
        names values that may be left out when the schema has no place for them."""
        schema = self.schema(operation)
        properties, required = flatten(schema)
        body, used = {}, set()
        for meaning, value in values.items():
            if value is None:
                continue
            target = place(properties, meaning, value, used)
            if target is None:
                if meaning in optional:
                    continue
                raise NoSchema(f"{self.operations.operation_id(operation)}: the target's request schema has no "
                               f"property for {meaning} (it has {', '.join(sorted(properties)) or 'none'})")
            used.add(target)
            body[target] = value
        for name in required:
            if name not in body:
                body[name] = sample(properties.get(name) or {}, name,
                                    f"{self.operations.operation_id(operation)}.{name}")
        return body

    def writable(self, operation, record, nulls=False):
        """The part of a record (as read) that the update operation's schema takes: what a full PUT sends back.

        A property the record names otherwise than the request schema (`email` read, `contactEmail` written)
        goes to the property that shares its words. `nulls` keeps properties that are null (to put a record back
        as it was), where the schema allows null."""
        properties, _ = flatten(self.schema(operation))
        if not properties:
            return dict(record)
        body, used = {}, set()
        for key, value in record.items():
            if value is None and not (nulls and key in properties and "null" in types_of(properties[key])):
                continue
            target = key if key in properties else place(properties, key, value, used | set(record), 0.5)
            if target is not None and not properties[target].get("readOnly") and target not in used:
                body[target] = within(properties[target], value)
                used.add(target)
        return body


def within(schema, value):
    """`value` as a request may send it: an object's properties a closed schema (additionalProperties false) does
    not name are left out, at every depth (a record read back may carry properties the write does not take)."""
    if not isinstance(value, dict) or not isinstance(schema, dict):
        return value
    properties = schema.get("properties") or {}
    closed = schema.get("additionalProperties") is False
    return {k: within(properties.get(k), v) for k, v in value.items() if k in properties or not closed}


def place(properties, meaning, value, used, threshold=0.45):
    if meaning in properties and meaning not in used:
        return meaning
    mine = words(meaning)
    if not mine - {"id"}:
        return None                     # an id goes only where it is named exactly
    best, best_score = None, 0.0
    for name, schema in properties.items():
        if name in used or not isinstance(schema, dict) or schema.get("readOnly"):
            continue
        if value is not None and not compatible(schema, value):
            continue
        theirs = words(name)
        if not (mine - {"id"}) & expand(theirs - {"id"}):
            continue                    # `accountTypeId` and `ownerId` share only "id": no match
        shared = len(mine & expand(theirs)) + len(theirs & expand(mine))
        score = shared / (len(mine) + len(theirs))
        if value is not None and isinstance(value, str) and value in (schema.get("enum") or []):
            score += 1.0
        if value is not None and isinstance(value, list) and value and all(
                v in ((schema.get("items") or {}).get("enum") or [v]) for v in value):
            score += 0.1
        if schema.get("deprecated"):
            score -= 0.5
        if score > best_score:
            best, best_score = name, score
    return best if best_score >= threshold else None


def sample(schema, name, where):
    """A value a schema accepts, for a required property the scenario says nothing of."""
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    if "example" in schema:
        return schema["example"]
    kinds = types_of(schema) - {"null"}
    kind = next(iter(sorted(kinds)), None) if kinds else ("object" if "properties" in schema else None)
    if kind == "string":
        fmt = schema.get("format")
        if fmt in SAMPLE_FORMATS:
            return SAMPLE_FORMATS[fmt] or str(uuid.uuid4())
        if "url" in name.lower() or "uri" in name.lower():
            return SAMPLE_FORMATS["uri"]
        if "mail" in name.lower():
            return SAMPLE_FORMATS["email"]
        if schema.get("pattern"):
            raise NoSchema(f"{where}: a required string with a pattern the harness cannot fill")
        return "conformance"[: schema.get("maxLength") or None] or "c"
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return False
    if kind == "array":
        if schema.get("minItems", 0) > 0:
            return [sample(schema.get("items") or {}, name, where + "[]")]
        return []
    if kind == "object":
        properties, required = flatten(schema)
        return {n: sample(properties.get(n) or {}, n, f"{where}.{n}") for n in required}
    raise NoSchema(f"{where}: a required property whose schema the harness cannot fill")


def identifier(record, *hints):
    """A record's id as the target names it: `id`, else a property named by a hint (the path parameter of the
    operation that reads the record, `accountId`, ...), else the only property ending in Id/_id."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("id"), (str, int)) and record.get("id") != "":
        return record["id"]
    for hint in hints:
        if hint and isinstance(record.get(hint), (str, int)):
            return record[hint]
    ids = [k for k, v in record.items() if isinstance(v, (str, int)) and re.search(r"(Id|_id|ID)$", k)]
    hinted = [k for k in ids if any(h and words(h) & words(k) - {"id"} for h in hints)]
    chosen = hinted or ids
    return record[chosen[0]] if len(chosen) == 1 else None
