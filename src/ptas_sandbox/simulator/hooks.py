"""The stages where parts of the simulator plug into a request and into the webhook outbox, in one typed object.

The core (pipeline.py, app.py, the webhook outbox) calls the stages; areas and sandbox tools fill them from their
`service.py` `attach(app, sandbox)`, so the core imports none of them. Each app has its own `Hooks` (on its
`Simulator`): nothing is shared between apps of one process. The stages of one API request, in the order it
meets them:

    outermost     app.wsgi_app         first in, last out: a deployment profile takes the request in the
                                       deployment's words and gives the answer back in them (the stages inside
                                       see the simulator's words; the journal files the partner's own method,
                                       path and operationId, which the stage leaves in the environ as
                                       PARTNER_REQUEST)
    before        app.before_request   every request, before routing's handler: the journal opens its entry,
                                       a snapshot load raises its body limit
    tokens        RequestState.admit   the bearer's verified claims become a Principal (`TokenRules`, the
                                       tokens area: `authenticate`; `read` and `used` when the process owns
                                       its store); pipeline.handle: for the control API, `control` finds the
                                       world's root partner that steers it
    intercept     pipeline.handle      a fault of the world may answer instead of the operation or shape its
                                       answer (faults); before the request counts toward its rate limit
    catch_up      Simulator.catch_up   the world's due work reaches its clock before the operation (imports,
                                       retention), each with a cheap `due` read so an idle world writes nothing
    refuse        pipeline.handle      an answer the outermost stage chose instead of the operation, at the point
                                       of the request where the deployment gives it: before routing ("route"),
                                       before the token ("token"), before its scope ("scope"), or once the
                                       request is admitted and counted ("admitted": inside the operation's
                                       transaction, where it may read the store, as a partial PUT's check does)
    after         app.after_request    every answer: the integration report's notes, the dispatcher's wake
    record        app.after_request    last, so it holds what `after` noted: the journal writes its entry

and of a webhook notification (webhooks/deliveries.py):

    notification  an event's notification body is made (a profile names records in the deployment's form)
    fan_out       an attempt-1 delivery row was written (faults duplicate, delay or reorder it)
    signing       an attempt is signed (faults replace the signature)
    delivery_log  the delivery log is read (faults mark the attempts they made)

Within a stage, hooks run in the order they were added: the order `app.create_app` attaches the services in.
"""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:       # annotations only: the hooks sit below every module that fills them
    from flask import Request, Response

    from .auth import Principal
    from .context import Ctx
    from .store import Store

Row = Mapping[str, Any]
# The request as the partner sent it, where the outermost stage translated it: {"method", "path", "query",
# "operationId", "body"} (the operationId None where the partner's path is no operation of the deployment's).
# A stage inside that files the answer leaves `answered(status, content type, bytes)` in it, for the outermost
# stage to call with the answer as the partner gets it.
PARTNER_REQUEST = "ptas.partner"
# The order a paged list's entries are asked in, where the outermost stage serves a deployment that pages them
# newest first ("newest first"): the area pages that way, its references leading on in that order. Absent: the
# simulator's own order (oldest first).
PAGE_ORDER = "ptas.page-order"
REFUSAL_POINTS = ("route", "token", "scope", "admitted")
Claims = Mapping[str, Any]


class Simulator(Protocol):
    """What a hook is handed of the running simulator (sandbox.Simulator): the stages do not import it, which
    imports them."""
    store: "Store"
    config: dict[str, Any]


class Operation(Protocol):
    """What a hook reads of the operation a request calls (operations.Operation)."""
    id: str
    area: str
    control: bool


class Injection(Protocol):
    """What an `intercept` hook hands back: `before` the operation (the context to go on with and an answer
    instead of the operation, or None), `shape` on its response."""

    def before(self, sandbox: "Simulator", ctx: "Ctx", environ: dict[str, Any]) -> tuple["Ctx", Any]: ...

    def shape(self, response: "Response", environ: dict[str, Any]) -> "Response": ...


@dataclass(frozen=True)
class CatchUp:
    """A catch-up stage: `run` brings the world's work up to its clock inside a write transaction, or in steps
    when it is a generator (each `yield` ends a step: `Simulator.catch_up`); `due` says, with reads only,
    whether there is any."""
    run: "Callable[[Ctx], Iterator[None] | None]"
    due: "Callable[[Ctx], bool]"


def _no_authentication(*args: Any) -> Any:
    raise RuntimeError("no area filled the tokens stage (tokens/service.py does)")


@dataclass(frozen=True)
class TokenRules:
    """How a bearer token's verified claims become a caller: the tokens area's rules, which the request state
    (requeststate/) calls on either strategy."""
    # (ctx, claims, row): the Principal, or 401 when expired, revoked or unknown. With row None it reads the
    # token and records its use in one statement (the store-exact path); with the row `read` gave, it judges it.
    authenticate: "Callable[[Ctx, Claims, Row | None], Principal]" = _no_authentication
    read: "Callable[[Ctx, Claims], Row | None]" = _no_authentication       # the row, without recording a use
    used: "Callable[[Ctx, Principal], None]" = _no_authentication          # a use, written behind
    control: "Callable[[Ctx, Claims], str]" = _no_authentication           # the control API's partner id


@dataclass
class Hooks:
    # f(the WSGI app inside) -> the WSGI app around it; the first added is the innermost
    outermost: "list[Callable[[Any], Any]]" = field(default_factory=list)
    # f(point, operation, call or None) -> an answer instead of the operation, or None; the call (and the store
    # in its transaction) only at "admitted"
    refuse: "list[Callable[[str, Operation | None, Any], Response | None]]" = field(default_factory=list)
    # f(request): the request itself, not flask's proxy of it (app.install_hooks)
    before: "list[Callable[[Request], None]]" = field(default_factory=list)
    tokens: TokenRules = field(default_factory=TokenRules)
    intercept: "list[Callable[[Simulator, Ctx, Operation, Mapping[str, Any], Request], Injection | None]]" = \
        field(default_factory=list)
    catch_up: list[CatchUp] = field(default_factory=list)
    after: "list[Callable[[Request, Response], None]]" = field(default_factory=list)      # f(request, answer)
    record: "list[Callable[[Request, Response], None]]" = field(default_factory=list)
    # f(store, world id, notification body) -> the body every attempt sends (and signs)
    notification: "list[Callable[[Store, str, dict[str, Any]], dict[str, Any]]]" = field(default_factory=list)
    # f(store, attempt-1 row, insert): insert(row) writes one more delivery row
    fan_out: "list[Callable[[Store, Row, Callable[[Row], None]], None]]" = field(default_factory=list)
    # f(store, attempt row, headers) -> the headers it goes out with
    signing: "list[Callable[[Store, Row, dict[str, str]], dict[str, str]]]" = field(default_factory=list)
    # f(store, world id, entries): notes on the log's entries, in place
    delivery_log: "list[Callable[[Store, str, list[dict[str, Any]]], None]]" = field(default_factory=list)
