"""The path of one API request, in the order DESIGN.md draws it, in one place.

verify the bearer's signature → rate limit (world clock) → authenticate (expiry, revocation, lastUsedAt) →
authorize (token kind, scope table) → catch up (the world's imports reach its clock: `Simulator.catch_up`) →
parse input → domain operation (one transaction) → render.
"""

import json
from collections.abc import Mapping
from typing import Any

from flask import Response, current_app, request
from jsonschema import Draft202012Validator
from werkzeug.datastructures import Headers

from . import scopes
from .auth import Principal, bearer
from .context import Ctx
from .operations import NO_AUTH, WORLD_AUTH, Answer, Call, Operation
from .problems import BadRequest, Forbidden, InvalidBody, InvalidParameter, Unauthorized, UnsupportedMediaType
from .sandbox import Simulator, current_sandbox
from .timestamps import parse as parse_time


def handle(op, params):
    sandbox = current_sandbox()
    ctx: Ctx | None = None
    principal: Principal | str | None = None
    injection = None
    if op.tokens != NO_AUTH:
        claims, ctx = bearer_world(sandbox, request.headers)
        world = ctx.world
        if op.tokens == WORLD_AUTH:
            principal = control_principal(ctx, claims)
        else:
            injection, ctx, answer = intercept(sandbox, ctx, op, claims)
            if answer is not None:
                return answer
            sandbox.limiter.hit(world.id, ctx.now, op.id)
            with sandbox.store.transaction():
                principal = sandbox.authenticate(ctx, claims)
            authorize(op, principal)
            sandbox.catch_up(world)
    call = Call(sandbox, ctx, principal, params, parse_query(op), parse_body(op), request)
    if op.atomic:
        with sandbox.store.transaction():
            result = op.handler(call)
    else:
        result = op.handler(call)
    response = render(result)
    return injection.shape(response, request.environ) if injection else response


def intercept(sandbox, ctx, op, claims):
    """A fault the world asked for (docs/chaos.md), before the rate-limit budget is used: (the injection or
    None, the context to go on with, an answer instead of the operation or None)."""
    for hook in current_app.extensions.get("ptas.interceptors", ()):
        injection = hook(sandbox, ctx, op, claims, request)
        if injection is not None:
            return injection, *injection.before(sandbox, ctx, request.environ)
    return None, ctx, None


def bearer_world(sandbox: Simulator, headers: Headers | Mapping[str, str]) -> tuple[Mapping[str, Any], Ctx]:
    """The verified claims of the request's bearer token and a context of its world; 401 when either is not."""
    claims = sandbox.signer.verify(bearer(headers.get("Authorization")))
    world = sandbox.worlds.get(claims["wld"])
    if world is None:
        raise Unauthorized("The bearer token belongs to no sandbox world (was it reset?).")
    return claims, sandbox.ctx(world)


def control_principal(ctx: Ctx, claims: Mapping[str, Any]) -> str:
    """The control API takes any unrevoked partner token of the world, expired or not: a harness that moved
    the clock past its token's expiry can still move it back into shape or reset the world."""
    row = ctx.store.one("SELECT partner_id, revoked_at FROM tokens WHERE id = ? AND world = ? AND kind = 'partner'",
                        (claims["jti"], ctx.world.id))
    if claims["knd"] != "partner":       # a valid token of the wrong kind: refused, as the service refuses it
        raise Forbidden("The control API takes partner tokens, not user tokens.")
    if row is None or row["revoked_at"] is not None:
        raise Unauthorized("The control API needs a partner token of the world (revoked tokens do not count).")
    return row["partner_id"]


def authorize(op: Operation, principal: Principal) -> None:
    if principal.kind not in op.tokens:
        raise Forbidden(f"{op.id} does not accept {principal.kind} tokens.")
    needed = op.scopes_for(principal.kind)
    if needed and not scopes.holds_any(principal.scopes, needed):
        raise Forbidden(f"{op.id} needs one of the scopes {', '.join(needed)}.", requiredScopes=list(needed))


_validators: dict[str, Draft202012Validator] = {}


def _not_json(constant):
    """NaN and Infinity are Python's extensions, not JSON (RFC 8259): NaN would slip past every bound."""
    raise ValueError(f"{constant} is not a JSON number")


def parse_body(op):
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
    try:
        body = json.loads(raw, parse_constant=_not_json)
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidBody(f"The body is not valid JSON: {error}.") from None
    except RecursionError:
        raise InvalidBody("The body is not valid JSON: nested too deeply.") from None
    if b"\\u" in raw:     # an escaped lone surrogate (\ud800) is valid JSON text but no Unicode string
        try:
            json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise InvalidBody("The body is not valid JSON: a \\u escape names a lone surrogate.") from None
    validator = _validators.get(op.id) or _validators.setdefault(op.id, Draft202012Validator(op.body))
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
    if error.validator in ("anyOf", "oneOf", "not"):
        return error.schema.get("x-problem", error.message)
    return error.message


def parse_query(op: Operation) -> dict[str, Any]:
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
                value = int(raw)
                if value < schema.get("minimum", value) or value > schema.get("maximum", value):
                    raise ValueError(f"expected {schema.get('minimum')}..{schema.get('maximum')}")
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
        return Response(status=204, headers=reply.headers)
    return Response(json.dumps(reply.body), reply.status, reply.headers, mimetype="application/json")


def json_body(call, *fields):
    """Convenience for handlers: the body's fields, or BadRequest when the body is not an object."""
    if not isinstance(call.body, dict):
        raise BadRequest("The body must be a JSON object.")
    return [call.body.get(f) for f in fields]
