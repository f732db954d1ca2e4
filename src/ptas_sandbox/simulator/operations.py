"""The operation registry: each area declares its operations once; routes and /openapi.json both come from it.

An operation is named as the spec names it (operationId), has a method and a path relative to the service
prefix, says which token kinds and scopes it accepts, and describes its body, query and responses with JSON
Schema. The app factory routes every registered operation and the OpenAPI document lists the same set, so the
two cannot drift (tests/core/test_openapi.py still checks the served result).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:       # for the annotations only: the registry sits below every module it names
    from flask import Request

    from .auth import Principal
    from .context import Ctx
    from .sandbox import Simulator

Schema = dict[str, Any]   # a JSON Schema, or a component's name where a response schema goes

# Authentication modes besides token kinds.
NO_AUTH = "none"          # health, world creation, echo capture, hosted pages with their own secrets
WORLD_AUTH = "world"      # the control API: a root partner token of the world with partner:update/all, expired or not
PARTNER_ONLY = ("partner",)
USER_ONLY = ("user",)
ANY_TOKEN = ("partner", "user")

REGISTRY: dict[str, "Operation"] = {}
COMPONENTS: dict[str, Schema] = {}


@dataclass
class Operation:
    id: str
    method: str
    path: str
    handler: "Callable[[Call], Any]"
    area: str
    tokens: str | tuple[str, ...] = ANY_TOKEN    # token kinds, or NO_AUTH / WORLD_AUTH
    scopes: tuple[str, ...] | dict[str, tuple[str, ...]] = ()   # any one of these, or {token kind: tuple}
    body: Schema | None = None
    body_required: bool = True
    example: Any = None
    query: dict[str, Schema] = field(default_factory=dict)
    responses: dict[int, Schema | str | None] = field(default_factory=dict)
    summary: str = ""
    control: bool = False        # outside the service prefix, not rate limited
    deprecated: bool = False
    callbacks: Schema | None = None   # OpenAPI `callbacks`: requests the service makes because of this operation
    consumes: str = "application/json"   # anything else: the handler gets the raw bytes as call.body
    atomic: bool = True          # False: the handler runs outside a store transaction (it waits on other threads)
    # Server-wide: needs the admin key when one is set (unless the server is --open). A callable of the request
    # says when it does: a snapshot that replaces a world is the world's own root partner's to load.
    admin: bool | Callable[[Any], bool] = False
    # It reads what the request state writes behind (the journal, lastUsedAt, the §8 counts), so that is written
    # first: by default the tools (control API, journal, inspector...) and the tokens area's records (lastUsedAt).
    reads_behind: bool = False

    def needs_admin(self, request: Any) -> bool:
        return self.admin(request) if callable(self.admin) else self.admin

    def scopes_for(self, kind: str) -> tuple[str, ...]:
        return self.scopes.get(kind, ()) if isinstance(self.scopes, dict) else self.scopes


def operation(operation_id, method, path, **options):
    """Register the decorated function as the handler of `operation_id`. Its area (the document's tag) is its
    package, or `area` for an operation that lives with the area it depends on (DeleteChildPartner: users)."""
    def register(handler):
        if operation_id in REGISTRY:
            raise RuntimeError(f"operation {operation_id} registered twice")
        area = options.pop("area", None) or handler.__module__.rsplit(".", 2)[-2]
        summary = options.pop("summary", None) or (handler.__doc__ or "").strip().split("\n")[0]
        options.setdefault("reads_behind", options.get("control", False) or area == "tokens"
                           or options.get("tokens") in (NO_AUTH, WORLD_AUTH))
        REGISTRY[operation_id] = Operation(operation_id, method, path, handler, area, summary=summary, **options)
        return handler
    return register


# "Not blank" for a JSON Schema `pattern`: some character that is not white space, spelt out, because `\S`
# means different things to ECMA-262 (the schema's regex dialect, what a fuzzer or a client generates by) and to
# Python's `re` (which validates here): Python counts U+001C..U+001F and U+0085 as space, ECMA-262 U+FEFF.
NOT_BLANK = ("[^\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
             "\\ufeff]")


def component(name, schema):
    """A named response or request schema, referenced as `name` in `responses` and listed in the document."""
    COMPONENTS[name] = schema
    return {"$ref": f"#/components/schemas/{name}"}


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


@dataclass
class Answer:
    """A handler's answer when 200 with a JSON body is not the whole story (what a client receives is a
    `Reply` in ptas_sandbox.testing, an `Exchange` in the conformance client)."""
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Call:
    """What a handler gets: the domain context, the caller and the parsed input."""
    sandbox: "Simulator"
    ctx: "Ctx | None"                 # None for an operation without a token (NO_AUTH): it finds its world itself
    principal: "Principal | str | None"   # a Principal; the control API's is the partner id (WORLD_AUTH)
    params: dict[str, str]            # path parameters
    query: dict[str, Any]             # typed query parameters (pipeline.parse_query)
    body: Any                         # the parsed JSON body, raw bytes for other media types, or None
    request: "Request"
