"""The operation registry: each area declares its operations once; routes and /openapi.json both come from it.

An operation is named as the spec names it (operationId), has a method and a path relative to the service
prefix, says which token kinds and scopes it accepts, and describes its body, query and responses with JSON
Schema. The app factory routes every registered operation and the OpenAPI document lists the same set, so the
two cannot drift (tests/core/test_openapi.py still checks the served result).
"""

from dataclasses import dataclass, field

# Authentication modes besides token kinds.
NO_AUTH = "none"          # health, world creation, echo capture, hosted pages with their own secrets
WORLD_AUTH = "world"      # the control API: any partner token signed for the world, expired or not
PARTNER_ONLY = ("partner",)
USER_ONLY = ("user",)
ANY_TOKEN = ("partner", "user")

REGISTRY = {}
COMPONENTS = {}


@dataclass
class Operation:
    id: str
    method: str
    path: str
    handler: object
    area: str
    tokens: object = ANY_TOKEN
    scopes: object = ()          # any one of these (a tuple), or {token kind: tuple}
    body: dict | None = None
    body_required: bool = True
    example: object = None
    query: dict = field(default_factory=dict)
    responses: dict = field(default_factory=dict)
    summary: str = ""
    control: bool = False        # outside the service prefix, not rate limited
    deprecated: bool = False
    callbacks: dict | None = None   # OpenAPI `callbacks`: requests the service makes because of this operation
    consumes: str = "application/json"   # anything else: the handler gets the raw bytes as call.body
    atomic: bool = True          # False: the handler runs outside a store transaction (it waits on other threads)

    def scopes_for(self, kind):
        return self.scopes.get(kind, ()) if isinstance(self.scopes, dict) else self.scopes


def operation(operation_id, method, path, **options):
    """Register the decorated function as the handler of `operation_id`. Its area (the document's tag) is its
    package, or `area` for an operation that lives with the area it depends on (DeleteChildPartner: users)."""
    def register(handler):
        if operation_id in REGISTRY:
            raise RuntimeError(f"operation {operation_id} registered twice")
        area = options.pop("area", None) or handler.__module__.rsplit(".", 2)[-2]
        summary = options.pop("summary", None) or (handler.__doc__ or "").strip().split("\n")[0]
        REGISTRY[operation_id] = Operation(operation_id, method, path, handler, area, summary=summary, **options)
        return handler
    return register


def component(name, schema):
    """A named response or request schema, referenced as `name` in `responses` and listed in the document."""
    COMPONENTS[name] = schema
    return {"$ref": f"#/components/schemas/{name}"}


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


@dataclass
class Reply:
    """A handler's answer when 200 with a JSON body is not the whole story."""
    status: int
    body: object = None
    headers: dict = field(default_factory=dict)


@dataclass
class Call:
    """What a handler gets: the domain context, the caller and the parsed input."""
    sandbox: object
    ctx: object
    principal: object
    params: dict
    query: dict
    body: object
    request: object
