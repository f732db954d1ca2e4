"""The OpenAPI 3.1 document, built from the operation registry (the same registry the routes come from)."""

import re

from ptas_sandbox import __version__

from .operations import COMPONENTS, NO_AUTH, REGISTRY, ref

SPEC_VERSION = "2.12.1"   # spec §9.1: the main interface version the simulator implements
PROBLEM = {
    "type": "object",
    "description": "RFC 9457 ProblemDetails; every error of the simulator has this body.",
    "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
                   "detail": {"type": "string"}, "instance": {"type": "string"}, "traceId": {"type": "string"}},
    "required": ["type", "title", "status"],
}
ERRORS = {"400": "Bad input", "401": "Missing or invalid bearer token", "403": "Not allowed to the caller",
          "404": "Not found (or not yours)", "409": "Conflict with the current state",
          "413": "Body too large", "415": "Body is not JSON", "429": "Rate limit exceeded",
          "503": "The store is unavailable now (Retry-After)", "507": "The store's disk is full"}


# The document's tags, in the order /docs shows them: the spec's areas (operations' `area`) as a partner reads the
# spec, then every sandbox tool under one tag at the end. (Scheme names sort bearer first: Flask sorts keys.)
TAGS = (
    ("partners", "Partners", "Your partner settings (redirectUrls, userTokenExpirySeconds, uiSettings) and child "
     "partners (spec §1, §2, §4.2)."),
    ("tokens", "Tokens", "Partner and user tokens: create, list, revoke (spec §3, §4.1, §5). Create a long-lived "
     "partner token first and revoke the initial one."),
    ("users", "Users", "The people whose accounts you connect: create (with their first user token), read, update, "
     "delete (spec §2, §4.2)."),
    ("account_types", "Account types", "The providers an account can be on, and the fields (`accountFields`) the "
     "form for each asks for (spec §1, §2)."),
    ("accounts", "Accounts", "A user's connections to a provider: create from `accountFields`, read, update, "
     "refresh, validate, delete (spec §1, §2, §4.3)."),
    ("transactions", "Transactions", "The imported transactions of an account, in pages (spec §1, §2, §4.3)."),
    ("reports", "Reports", "Settlement reports of accounts whose type has `hasPspReports` (spec §2, §4.3)."),
    ("dataimports", "Data imports", "The imports that fetch an account's data from its provider (spec §2, §4.3)."),
    ("oauth", "OAuth2 account connection", "Accounts on providers that sign the person in themselves: the redirect "
     "URL, the consent page and the return (spec §1)."),
    ("accountui", "Account UI", "A hosted page where a user connects an account: sessions and the page (spec §1)."),
    ("userui", "User UI", "A hosted page where a person registers as a user: sessions and the page (spec §1)."),
    ("webhooks", "Webhooks and events", "Subscriptions, test events and the notifications they bring (spec §4.2, "
     "§6)."),
)
SANDBOX = ("Sandbox", "The sandbox's own control API under /_sandbox, not part of the specification: worlds, the "
           "world clock, reset, scenarios, faults, the request journal, the echo receiver, snapshots and the "
           "integration report. A world's root partner token holding partner:update or partner:all steers it "
           "(expired or not); server-wide operations take the admin key when the operator set one.")
TAG_OF = {area: name for area, name, _ in TAGS}
BEARER, ADMIN = "bearerAuth", "sandboxAdminKey"


def full_path(op, prefix):
    return op.path if op.control else prefix + op.path


def documented(op):
    """Whether /openapi.json describes `op`: every operation but the sandbox's own web pages (the inspector, /docs
    and their assets), which a browser opens and no client calls."""
    answers = [a for status, a in (op.responses or {200: None}).items() if int(status) < 300]
    return not (op.control and answers and all(isinstance(a, str) and a.startswith("text/") for a in answers))


def document(prefix, base="http://127.0.0.1:8080"):
    paths = {}
    for op in REGISTRY.values():
        if documented(op):
            item = paths.setdefault(full_path(op, prefix), {})
            item[op.method.lower()] = describe(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Payment Transactions Aggregation Service (ptas-sandbox simulator)",
                 "version": SPEC_VERSION,
                 "description": f"ptas-sandbox {__version__}: every operation of the interface specification, "
                                "plus the sandbox control API under /_sandbox. Request examples of operations a user "
                                "may call (accounts, OAuth2, Account UI) are written for a user token; with a partner "
                                "token add the user's `userId`.",
                 "contact": {"name": "ptas-sandbox", "url": f"{base}/"},
                 "license": {"name": "MIT", "identifier": "MIT"}},
        "servers": [{"url": base, "description": "this sandbox"}],
        "tags": [{"name": name, "description": text} for _, name, text in TAGS]
        + [{"name": SANDBOX[0], "description": SANDBOX[1]}],
        "paths": paths,
        "components": {
            "schemas": {"ProblemDetails": PROBLEM, **COMPONENTS},
            "securitySchemes": {BEARER: {
                "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                "description": "Spec §5: `Authorization: Bearer <JWT>`, a partner or user token. An HTTP bearer "
                               "scheme declares no scopes, so each operation names those it requires in its "
                               "description and in `x-required-scopes` (per token kind; any one of them)."},
                ADMIN: {"type": "apiKey", "in": "header", "name": "X-Sandbox-Admin-Key",
                        "description": "the operator's admin key (PTAS_ADMIN_KEY), needed for server-wide "
                                       "operations when one is set"}},
        },
        "security": [{BEARER: []}],
    }


def bounded(schema):
    """An integer query parameter as the pipeline reads it: ASCII digits, within 64 bits unless narrower."""
    if schema.get("type") != "integer":
        return schema
    return {"minimum": 0, "maximum": 2**63 - 1, **schema}


def describe(op):
    tag = SANDBOX[0] if op.control else TAG_OF.get(op.area, op.area)
    doc = {"operationId": op.id, "summary": op.summary, "tags": [tag]}
    if op.deprecated:
        doc["deprecated"] = True
    if op.callbacks:
        doc["callbacks"] = op.callbacks
    told = " ".join((op.handler.__doc__ or op.summary).split())      # the handler's docstring, on one line
    if op.tokens == NO_AUTH:
        doc["security"] = [{}, {ADMIN: []}] if op.admin else []
        who = "The admin key when the operator set one; else anyone." if op.admin else "No credentials."
    elif op.control:
        who = ("A root partner token of the world holding partner:update or partner:all, expired or not "
               "(never revoked).")
    else:
        doc["security"], doc["x-required-scopes"], who = required_scopes(op)
    doc["description"] = f"{told} {who}".strip()
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
    """What a token must hold to call `op`: the security requirement (the bearer scheme: an HTTP scheme declares
    no scopes), `x-required-scopes` per token kind, and one readable line. A scope's `resource:all` also grants it
    (spec §5 table)."""
    kinds = op.tokens if isinstance(op.tokens, tuple) else ()
    per_kind = {kind: list(op.scopes_for(kind)) for kind in kinds}
    if not any(per_kind.values()):
        line = f"Needs a {' or '.join(kinds)} token; no particular scope."
    else:
        parts = [f"a {kind} token with {' or '.join(needed)}" if needed else f"any {kind} token"
                 for kind, needed in per_kind.items()]
        line = f"Required scopes: {'; or '.join(parts)} (a resource's `:all` scope grants each of its actions)."
    return [{BEARER: []}], {kind: needed for kind, needed in per_kind.items()}, line

