"""The path of one API request in one place, with the hook stages (hooks.py) where they run:

[before: app.py] → the admin key (server-wide operations) → verify the bearer's signature → [intercept: a fault
may answer instead] → admit (the request state, requeststate/): [tokens] (expiry, revocation, lastUsedAt),
authorize (token kind, scope table), rate limit (world clock; only what authenticated and may call the operation
counts) → catch up [catch_up: the world's due work reaches its clock] → parse input → the operation (one
transaction) → render → [after, then record: app.py]. An API write is admitted by `RequestState.admitted`, which
owns its transaction (one for the admission and the operation on the store-exact path). The control API's calls
go from the signature to [tokens.control] (the world's root partner), then to the operation. Where the
per-request state lives is the request state's business, not this module's: it has one path.

LOCK ORDER. On PostgreSQL a transaction waits for locks that another holds, so every transaction takes them in one
order: its world's lock (`world/<id>`: writes, clock moves, catch-ups, resets), then the world's rate lock
(`rate/<id>`: every admission), then rows. A transaction that waited for a lock while holding a row a second one
needs deadlocks with it: an API write that updated its token's `lastUsedAt` and then waited for the world held the
row a reset deletes, and a GET that updated token X and then waited for the rate lock held the row a revocation of
X (a write holding the rate lock) updates. SQLite's writers run one at a time, so it never waits.
"""

import hmac
import json
from collections.abc import Mapping
from typing import Any

import flask
from flask import Request, Response, current_app
from werkzeug.datastructures import Headers

from .auth import Principal, bearer
from .context import Ctx
from .operations import NO_AUTH, WORLD_AUTH, Answer, Call, Operation
from .problems import BadRequest, InvalidBody, InvalidParameter, Unauthorized, UnsupportedMediaType
from .sandbox import Simulator
from .timestamps import parse as parse_time
from .worlds import World


def current_request() -> Request:
    """The request itself, for the stages to be handed: each read through flask's `request` proxy is a context
    lookup, and a request makes dozens."""
    return flask.request._get_current_object()  # type: ignore[attr-defined]


def handle(sandbox, op, params):
    request = current_request()
    state, store = sandbox.state, sandbox.store
    ctx: Ctx | None = None
    principal: Principal | str | None = None
    injection = None
    if op.needs_admin(request):
        require_admin(sandbox, request.headers)
    if (instead := refusal(sandbox, "token", op)) is not None:
        return instead
    if op.tokens != NO_AUTH:
        claims, ctx = bearer_world(sandbox, request.environ)
        if (instead := refusal(sandbox, "scope", op)) is not None:
            return instead
        if op.tokens == WORLD_AUTH:
            principal = sandbox.hooks.tokens.control(ctx, claims)
        else:
            injection, ctx, answer = intercept(sandbox, ctx, op, claims, request)
            if answer is not None:
                return answer
            if op.atomic and op.method != "GET":
                return finish(write_operation(sandbox, ctx, claims, op, params, request), injection, request)
            principal = state.admit(sandbox, ctx, claims, op)
            store.retrying(lambda: sandbox.catch_up(ctx.world))
    state.reads_behind(op)      # it reads what is written behind (its own use too): write it first
    if sandbox.hooks.refuse:    # a refusal once admitted is judged before the input is (hooks.py: refuse)
        instead = refusal(sandbox, "admitted", op, Call(sandbox, ctx, principal, params, {}, None, request))
        if instead is not None:
            return finish(instead, injection, request)
    call = Call(sandbox, ctx, principal, params, parse_query(op, request), parse_body(op, request), request)
    if op.atomic:
        # An API read (GET with a token) needs one consistent view (a snapshot: store.reading), neither a writer's
        # turn nor its world's lock; every other operation is one write transaction.
        reads = op.method == "GET" and op.tokens not in (NO_AUTH, WORLD_AUTH)

        def operation():
            with store.reading() if reads else store.transaction():
                if ctx is not None and not reads:   # one world's writes in turn (PostgreSQL; SQLite's are serial)
                    sandbox.worlds.lock(ctx.world.id)
                return op.handler(call)
        result = store.retrying(operation)
    else:
        result = op.handler(call)
    return finish(result, injection, request)


def finish(result, injection, request):
    response = render(result)
    return injection.shape(response, request.environ) if injection else response


def write_operation(sandbox: Simulator, ctx: Ctx, claims: Mapping[str, Any], op: Operation, params, request):
    """An API write: admitted by the request state (`RequestState.admitted`, which owns the write's transaction
    and says what the operation's failure undoes), its input parsed once it is admitted, then the operation
    inside the transaction. A deadlock the store broke runs the whole of it again (Store.retrying): it is not
    the operation's refusal."""
    def call(principal: Principal) -> Call | Principal:
        if sandbox.hooks.refuse:    # a refusal once admitted comes before the input is parsed, in the transaction
            return principal
        return Call(sandbox, ctx, principal, params, parse_query(op, request), parse_body(op, request), request)

    def once():
        with sandbox.state.admitted(sandbox, ctx, claims, op, call) as prepared:
            if isinstance(prepared, Call):
                return op.handler(prepared)
            instead = refusal(sandbox, "admitted", op, Call(sandbox, ctx, prepared, params, {}, None, request))
            if instead is not None:
                return instead
            return op.handler(Call(sandbox, ctx, prepared, params, parse_query(op, request), parse_body(op, request),
                                   request))
    return sandbox.store.retrying(once)


def refusal(sandbox: Simulator, point: str, op: Operation | None, call: Call | None = None) -> Any:
    """The refuse stage (hooks.py): an answer the outermost stage gives instead of the operation at this point
    of the request, or None."""
    for hook in sandbox.hooks.refuse:
        instead = hook(point, op, call)
        if instead is not None:
            return instead
    return None


def intercept(sandbox, ctx, op, claims, request):
    """The intercept stage (hooks.py): a fault the world asked for (docs/chaos.md), before the rate-limit budget
    is used: (the injection or None, the context to go on with, an answer instead of the operation or None)."""
    for hook in sandbox.hooks.intercept:
        injection = hook(sandbox, ctx, op, claims, request)
        if injection is not None:
            return injection, *injection.before(sandbox, ctx, request.environ)
    return None, ctx, None


def bearer_world(sandbox: Simulator, environ: dict[str, Any]) -> tuple[Mapping[str, Any], Ctx]:
    """The verified claims of the request's bearer token and a context of its world; 401 when either is not."""
    claims = bearer_claims(sandbox, environ)
    if claims is None:
        raise environ[CLAIMS]
    world = request_world(sandbox, environ, claims["wld"])
    if world is None:
        raise Unauthorized("The bearer token belongs to no sandbox world: the world was deleted (DELETE "
                           "/_sandbox/world, or unused for the operator's --world-idle-hours on a full sandbox), "
                           "or the whole sandbox was reset.")
    sandbox.worlds.used(world.id)
    return claims, sandbox.ctx(world)


CLAIMS = "ptas.claims"      # in a request's environ: its bearer token's verified claims, or why it has none


def bearer_claims(sandbox: Simulator, environ: dict[str, Any]) -> Mapping[str, Any] | None:
    """The verified claims of the request's bearer token, or None when it has none of ours (`bearer_world` raises
    why): for the tools that watch a request (the journal) and must not refuse it. Verified once per request and
    kept in its environ, so the pipeline and the watchers read the same token the same way."""
    found = environ.get(CLAIMS)
    if found is None:
        try:
            found = sandbox.signer.verify(bearer(environ.get("HTTP_AUTHORIZATION")))
        except Unauthorized as refused:
            found = refused
        environ[CLAIMS] = found
    return None if isinstance(found, Unauthorized) else found


def request_world(sandbox: Simulator, environ: dict[str, Any], world_id: str) -> World | None:
    """The world `world_id` as this request first read it: one store read per request, though the journal's
    hook (before the pipeline) and the pipeline both need it. Kept in the request's environ, not `g`, which an
    app context around several requests (a test's) would share."""
    seen = environ.setdefault("ptas.worlds", {})
    if world_id not in seen:
        seen[world_id] = sandbox.worlds.get(world_id)
    return seen[world_id]


def admin_key_given(sandbox: Simulator, headers: Headers | Mapping[str, str]) -> bool:
    """True when the request carries the server's admin key (`X-Sandbox-Admin-Key`), compared in constant time."""
    key = sandbox.config.get("ADMIN_KEY")
    given = headers.get("X-Sandbox-Admin-Key")
    if not key or not given:
        return False
    return hmac.compare_digest(str(key).encode(), str(given).encode("utf-8", "surrogateescape"))


def require_admin(sandbox: Simulator, headers: Headers | Mapping[str, str]) -> None:
    """Server-wide operations (new worlds, scenario loads) need the admin key when one is set, unless the
    operator chose `--open`; without a key (a laptop sandbox) they stay open."""
    if not sandbox.config.get("ADMIN_KEY") or sandbox.config.get("OPEN"):
        return
    if not admin_key_given(sandbox, headers):
        raise Unauthorized("This sandbox is shared: creating worlds and loading scenarios need its admin key "
                           "in the X-Sandbox-Admin-Key header (ask the operator; `ptas` reads it from "
                           "PTAS_ADMIN_KEY, the pytest plugin from --ptas-admin-key).",
                           headers={"WWW-Authenticate": 'ApiKey header="X-Sandbox-Admin-Key"'})


_validators: dict[str, Any] = {}     # operationId: its body's compiled JSON Schema validator


def _not_json(constant):
    """NaN and Infinity are Python's extensions, not JSON (RFC 8259): NaN would slip past every bound."""
    raise ValueError(f"{constant} is not a JSON number")


_decoder = json.JSONDecoder(parse_constant=_not_json)    # one, not one per body (json.loads with an argument)


def parse_body(op, request):
    if op.body is None:
        return None
    raw = request.get_data(cache=True)
    if op.consumes != "application/json":
        return raw
    if not raw.strip():
        if op.body_required:
            raise InvalidBody(f"{op.id} needs a JSON request body.")
        return {}
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("Send the body as Content-Type application/json, "
                                   f"not {request.mimetype or 'none'!r}.")
    # Counted before they are made: each costs far more memory parsed than its bytes in the body.
    if raw.count(b"{") + raw.count(b"[") > current_app.config["MAX_JSON_CONTAINERS"]:
        raise InvalidBody(f"The body holds more than {current_app.config['MAX_JSON_CONTAINERS']} JSON objects and "
                          "arrays; no request needs as many.")
    try:
        body = _decoder.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidBody(f"The body is not valid JSON: {error}.") from None
    except RecursionError:
        raise InvalidBody("The body is not valid JSON: nested too deeply.") from None
    if b"\\u" in raw:     # an escaped lone surrogate (\ud800) is valid JSON text but no Unicode string
        try:
            json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise InvalidBody("The body is not valid JSON: a \\u escape names a lone surrogate.") from None
    validator = _validators.get(op.id)
    if validator is None:
        # Late: jsonschema's import is costly at start-up; the first body to validate pays it once.
        from jsonschema import Draft202012Validator
        validator = _validators.setdefault(op.id, Draft202012Validator(op.body))
    found = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    # one problem once, though several schema branches (CreateAccount's if/then per type) report it alike
    errors = list({("/" + "/".join(map(str, e.absolute_path)), explained(e)): None for e in found})
    if errors:
        raise InvalidBody(errors[0][1] if len(errors) == 1 else f"{len(errors)} problems in the body.",
                          errors=[{"pointer": pointer, "detail": detail} for pointer, detail in errors])
    return body


def explained(error):
    """jsonschema's words, or for a combinator (anyOf, oneOf, not) the schema's own `x-problem` sentence:
    "{} is not valid under any of the given schemas" tells a client nothing."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        # The one branch the body chose by its `const` (a fault's `effect.type`): that branch's own error, so a
        # bad status of a status effect blames the status, not the type.
        branches = {e.relative_schema_path[0] for e in error.context}
        chosen = branches - {e.relative_schema_path[0] for e in error.context if e.validator == "const"}
        if len(chosen) == 1 and len(branches) > 1:
            inner = min((e for e in error.context if e.relative_schema_path[0] in chosen),
                        key=lambda e: len(e.path))
            where = ".".join(map(str, inner.absolute_path))
            return f"`{where}`: {explained(inner)}" if where else explained(inner)
    if error.validator in ("anyOf", "oneOf", "not", "pattern"):     # a pattern is no sentence either
        if "x-problem" in error.schema:
            return error.schema["x-problem"]
        if error.validator == "pattern":
            return f"{shown(error.instance)} does not match {error.validator_value!r}"
        return "The value does not have a form this field takes."     # jsonschema's repeats the whole value
    if error.validator == "type":       # jsonschema writes the value as Python ("None"), the client sent JSON
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        what = KINDS.get(type(error.instance)) if isinstance(error.instance, (str, list, dict)) else None
        return f"{what or shown(error.instance)} is not of type {' or '.join(map(repr, wanted))}"
    message, written = error.message, repr(error.instance)
    return shown(error.instance) + message[len(written):] if message.startswith(written) else message


KINDS: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}


def shown(value: Any) -> str:
    """The offending value as an error repeats it: a number, true, false, null or a short string as JSON; else
    what it is. An answer, and the journal that keeps it, must not carry back a long value twice over, nor a
    secret the client put where a field of another type belongs."""
    if value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 40):
        return json.dumps(value)
    return KINDS.get(type(value), "the value")


INT64_MAX = 2**63 - 1


def parse_query(op: Operation, request: Request) -> dict[str, Any]:
    """Typed query parameters: booleans, integers (with their bounds) and date-times; others stay strings."""
    values: dict[str, Any] = {}
    for name, schema in op.query.items():
        raw = request.args.get(name)
        if raw is None:
            continue
        kind = schema.get("type")
        try:
            if kind == "boolean":
                if raw.lower() not in ("true", "false", "1", "0"):
                    raise ValueError("expected true or false")
                values[name] = raw.lower() in ("true", "1")
            elif kind == "integer":
                # Digits only: int() would also take `1_0`, `+5`, ` 5` and non-ASCII digits (`５`).
                if not (raw.isascii() and raw.isdigit()):
                    raise ValueError("expected ASCII digits only")
                value = int(raw) if len(raw) <= 19 else INT64_MAX + 1
                # without a declared maximum, what the store can hold (SQLite integers are 64-bit)
                low, high = schema.get("minimum", 0), schema.get("maximum", INT64_MAX)
                if not low <= value <= high:
                    raise ValueError(f"expected {low}..{high}")
                values[name] = value
            elif schema.get("format") in ("date-time", "date"):
                values[name] = parse_time(raw)
            else:
                values[name] = raw
        except ValueError as error:
            raise InvalidParameter(f"Query parameter `{name}` is not valid: {raw!r} ({error}).",
                                   parameter=name) from None
    return values


def render(result):
    if isinstance(result, Response):
        return result
    reply = result if isinstance(result, Answer) else Answer(200, result)
    if reply.body is None and reply.status == 204:
        response = Response(status=204, headers=reply.headers)
        del response.headers["Content-Type"]    # werkzeug's default would name HTML for an answer with no body
        return response
    return Response(json.dumps(reply.body), reply.status, reply.headers, mimetype="application/json")


def json_body(call, *fields):
    """Convenience for handlers: the body's fields, or BadRequest when the body is not an object."""
    if not isinstance(call.body, dict):
        raise BadRequest("The body must be a JSON object.")
    return [call.body.get(f) for f in fields]
