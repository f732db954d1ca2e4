"""The app factory: configuration over defaults, one sandbox per app, every registered operation routed."""

import importlib
import logging
import pkgutil
import re

from flask import Flask, Response, json, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import BaseConverter, Rule

from . import events, ratelimit, tools, worlds
from .openapi import document, full_path
from .operations import REGISTRY
from .pipeline import current_request, handle
from .problems import BY_STATUS, PayloadTooLarge, Problem, Removed, UnsupportedContentCoding
from .sandbox import Simulator, current_sandbox
from .store import PlatformProblem

DEFAULTS = {
    "PREFIX": "/partner/v2",            # every operation is served under the v2 prefix
    "STATE": ":memory:",                # or a file path: the sandbox survives a restart
    "SECRET": None,                     # token signing key; None: a random one kept in the store
    "SEED": 0,                          # server seed: world ids and seeds derive from it
    "RATE_LIMIT": 100,                  # spec §8: 100 requests per 60 s
    "RATE_WINDOW_SECONDS": 60,
    "OPERATION_LIMITS": {},             # extra limits: {"CreateUser": (10, 60)}
    "MAX_CONTENT_LENGTH": 512 * 1024,   # bodies over 512 KiB get 413 (the API's are small; snapshots have their own)
    "MAX_JSON_CONTAINERS": 20_000,      # objects and arrays in a JSON body (each costs memory to parse); more: 400
    "SYSTEM_TIME": None,                # callable giving microseconds; the simulator's only clock source
    "ADMIN_KEY": None,                  # server-wide authority: new worlds, scenario loads, reset of every world
    "OPEN": False,                      # with an admin key: still let anyone create worlds (a laptop sandbox)
    "MAX_WORLDS": 1000,                 # worlds on this server; the next is a 409 until one is deleted ...
    "WORLD_IDLE_HOURS": 24,             # ... or unless one was not called for this long: it makes room (0: never)
    "ECHO_CAPTURES_PER_BIN": 200,       # the newest are kept
    "ECHO_CAPTURE_MAX_BYTES": 64 * 1024,  # a larger request to the echo receiver is a 413 (webhooks are small)
    "ECHO_TOTAL_BYTES": 16 * 1024 * 1024,  # all captures of the server together; the oldest go first
    "RETENTION_SECONDS": 7 * 86400,     # outbox events, deliveries and captures older than this (world clock) go
    "INITIAL_TOKEN_LIFETIME": 7 * 86400,  # over one hour, so it has an id and can be revoked
    "USER_TOKEN_LIFETIME": 86400,       # a new partner's userTokenExpirySeconds
    "START_SERVICES": True,             # background services (webhook dispatcher)
    "JOURNAL_LIMIT": 1000,              # request journal: entries kept per world (journal/models.py)
    "JOURNAL_RETENTION_SECONDS": 7 * 86400,  # ... and none older than this on the world clock
    "JOURNAL_BODY_LIMIT": 4096,         # ... characters of each body kept
    "WEBHOOK_TIMEOUT_SECONDS": 10,      # whole-attempt deadline of a webhook delivery
    "FLUSH_WAIT_SECONDS": None,         # longest a flush waits for its attempts; None: 3 x the webhook timeout
    "FLUSH_WAITERS_PER_WORLD": 2,       # flushes of one world waiting at once; more answer without waiting
    "FLUSH_WAITERS": 2,                 # ... and of every world of the process: flushes hold at most 2 threads
    "ALLOW_PRIVATE_CALLBACKS": None,    # callbacks to loopback/private addresses; None: allowed (in-process use)
    "SHARED_STORE": False,              # other processes use the store too: request state in the store
}

# Spec §4.2 note 6: earlier paths that are gone. Paths shadowed by a live route of another shape
# (GET and DELETE /users/{name}) are answered 404 by the id lookup itself.
# They are not routes (a route would show in `Allow`); the 404/405 handler recognises them.
REMOVED = [("GET", r"/users/[^/]+/token"), ("PATCH", "/partners")] + [
    (None, f"/webhooks/{old}") for old in ("test-events", "test-account-type-events", "test-account-events",
                                           "test-import-events")]


class IdConverter(BaseConverter):
    """A path id: any segment but `self`, which names the caller (`/partners/self` is not a partner id)."""
    regex = r"(?!self(?:/|$))[^/]+"


class LazyBuildRule(Rule):
    """A route whose URL builder (for `url_for`) is compiled when first used, not when the route is added:
    werkzeug writes and compiles two Python functions per rule, a large share of `create_app` and of the time to
    the first answer. Nothing in the simulator builds URLs from routes, so the builders are never compiled."""

    def _compile_builder(self, append_unknown=True):
        compiled = None

        def build(rule, *args, **kwargs):
            nonlocal compiled
            if compiled is None:        # two threads may both compile it: the same function either way
                compiled = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            return compiled(*args, **kwargs)
        return build


def is_removed(prefix, method, path):
    return any((m is None or m == method) and re.fullmatch(re.escape(prefix) + p, path) for m, p in REMOVED)


def areas():
    """The packages the app is made of, as dotted names below simulator: the packages of simulator/ (the spec's
    areas, the hosted pages they share and the import catch-up; not the store, not the tools), then the sandbox
    tools in `tools.ORDER`. Their `models`, `http` and `service` modules are imported, where they have them."""
    package = importlib.import_module(__package__)
    spec = [m.name for m in pkgutil.iter_modules(package.__path__) if m.ispkg and m.name not in ("tools", "store")]
    on_disk = {m.name for m in pkgutil.iter_modules(tools.__path__) if m.ispkg}
    if on_disk != set(tools.ORDER):
        raise RuntimeError(f"tools.ORDER must name every tool package, and only those: {sorted(on_disk)}")
    return spec + [f"tools.{name}" for name in tools.ORDER]


def create_app(config=None):
    app = Flask(__name__)
    # A path with an empty segment (`/partner/v2//users`) is no operation's: a 404 that says so, not werkzeug's
    # redirect (an HTML 308) to the path with the slashes merged, which hides a client joining URLs wrongly.
    app.url_map.merge_slashes = False
    app.url_rule_class = LazyBuildRule
    app.url_map.converters["id"] = IdConverter
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    schemas = [worlds.SCHEMA, events.SCHEMA, ratelimit.SCHEMA]
    upgrades = {}       # how an older version's rows fill new columns (store.upgrade), by table
    services = []
    for area in areas():
        for part in ("models", "http", "service"):
            try:
                module = importlib.import_module(f"{__package__}.{area}.{part}")
            except ModuleNotFoundError as missing:
                if missing.name != f"{__package__}.{area}.{part}":
                    raise
                continue
            if hasattr(module, "SCHEMA"):
                schemas.append(module.SCHEMA)
                upgrades.update(getattr(module, "UPGRADE", {}))
            if hasattr(module, "attach"):
                services.append(module.attach)
    sandbox = Simulator(app.config, schemas, upgrades)
    app.extensions["ptas"] = sandbox
    route(app)
    for attach in services:     # the spec's areas, then the tools: the order of each stage's hooks (hooks.py)
        attach(app, sandbox)
    sandbox.store.check_current(schemas)      # after the areas' own migrations (echo adds a column it can)
    install_hooks(app, sandbox.hooks)
    install_error_handlers(app)
    return app


def install_hooks(app, hooks):
    """The request stages around the pipeline, in the order hooks.py states: `outermost` around the app, `before`
    (and a `refuse` before routing), then (the pipeline), then `after` and last `record`, each stage's hooks in
    the order they were added. One Flask hook
    each way, so no order depends on which module registered first."""
    for wrap in hooks.outermost:        # first in, last out: around every other stage
        app.wsgi_app = wrap(app.wsgi_app)

    @app.before_request
    def before():
        req = current_request()
        for hook in hooks.before:
            hook(req)
        within_limit(req)
        not_encoded(req)
        for refuse in hooks.refuse:     # before routing: after the journal opened its entry, so it is filed
            instead = refuse("route", None, None)
            if instead is not None:
                return instead
        return None

    @app.after_request
    def after(response):
        req = current_request()
        for hook in hooks.after:
            hook(req, response)
        for hook in hooks.record:
            hook(req, response)
        return response


def within_limit(req):
    """Every body is held to the limit (after the `before` hooks, which may raise it for a snapshot), whether or not
    the operation reads it: an operation that ignores its body must not take 600 kB that one reading it refuses.
    Headers are read from the environ here and below: a request without a body (most GETs) costs a lookup."""
    length = req.content_length
    chunked = length is None and "chunked" in req.environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if length is None and not chunked:
        return
    limit = req.max_content_length
    if limit is None:
        return
    if length is not None:
        if length > limit:
            raise PayloadTooLarge(f"A request body holds at most {limit} bytes here; this one holds {length}.")
    else:
        req.get_data(cache=True)        # reading a chunked body holds it to the limit (413 past it)


def not_encoded(req):
    """A body sent with a content coding (gzip) is refused as such (RFC 9110 15.5.16), not read as it came and
    refused as JSON that is not valid."""
    coding = req.environ.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if coding not in ("", "identity"):
        raise UnsupportedContentCoding(f"The body is read as it is sent; Content-Encoding {coding!r} is not "
                                       "accepted here. Send it uncompressed, without the header.")


def route(app):
    prefix, sandbox = app.config["PREFIX"], app.extensions["ptas"]
    for op in REGISTRY.values():
        rule = re.sub(r"{(\w+)}", r"<id:\1>", full_path(op, prefix))
        app.add_url_rule(rule, endpoint=op.id, view_func=lambda _op=op, **params: handle(sandbox, _op, params),
                         methods=[op.method], provide_automatic_options=False)
    app.add_url_rule("/openapi.json", endpoint="openapi",
                     view_func=lambda: document(prefix, request.host_url.rstrip("/")),
                     provide_automatic_options=False)


def problem_response(problem):
    sandbox = current_sandbox()
    body = problem.body(instance=request.path, trace_id=sandbox.trace_id())
    return Response(json.dumps(body), problem.status, problem.headers, mimetype="application/problem+json")


def install_error_handlers(app):
    @app.errorhandler(Problem)
    def on_problem(problem):
        if isinstance(problem, PlatformProblem):
            current_sandbox().store.outage(problem)
        return problem_response(problem)

    @app.errorhandler(HTTPException)
    def on_http_error(error):
        if error.code == 413:
            # The body is refused unread: whoever reads it after this (the journal, the integration report)
            # finds it empty instead of meeting the same 413 again as a traceback each.
            request._cached_data = b""
        if error.code in (404, 405) and is_removed(app.config["PREFIX"], request.method, request.path):
            return problem_response(Removed(f"{request.method} {request.path} was removed from the interface "
                                            "(spec §4.2 note 6)."))
        cls = BY_STATUS.get(error.code)
        description = error.description
        if error.code == 404 and "//" in request.path:
            description = ("The path has an empty segment (//), which no operation's path has: check how the base "
                           "URL and the path are joined.")
        problem = cls(description) if cls else Problem(description)
        if cls is None:
            problem.status = error.code
        problem.headers = {k: v for k, v in error.get_headers() if k in ("Allow", "Retry-After")}
        return problem_response(problem)

    @app.errorhandler(Exception)
    def on_bug(error):
        platform = current_sandbox().store.platform_problem(error)     # disk full, store gone: not a bug
        if platform is not None:
            current_sandbox().store.outage(platform, error)
            return problem_response(platform)
        logging.getLogger("ptas").exception("unhandled error: a 500 is a bug")
        return problem_response(Problem("The simulator failed on this request; this is a bug, please report it."))
