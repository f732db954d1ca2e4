"""HTTP layer of the inspector: a small server-rendered web app for one world (tabs, filters, actions, assets).

No build step and no CDN: templates and assets ship in this package; the page's script (live refresh) is a
file served from here, so the Content-Security-Policy allows no inline script at all. Other areas add a tab
with `register_tab` (the chaos area's report), before the app is created.
"""

from dataclasses import dataclass
from importlib import resources
from urllib.parse import parse_qsl, urlencode, urlsplit

from flask import Response, current_app, request
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from .... import durations
from ... import events
from ...auth import world_key_id
from ...operations import NO_AUTH, operation
from ...partners import models as partners
from ...pipeline import Answer, bearer_world
from ...problems import NotFound, Problem
from ...sandbox import current_sandbox
from ...timestamps import parse, render
from ...tokens.models import control_principal, unrevoked
from ...webhooks import samples
from ...worlds import next_in_sequence
from ..integration import http as report  # the chaos area's integration report, as a tab
from ..journal import models as journal
from . import models as access
from . import views

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
           "X-Content-Type-Options": "nosniff"}
BASE = "/_sandbox/inspect"
ENV = Environment(loader=PackageLoader(__name__, "templates"), autoescape=True, trim_blocks=True,
                  lstrip_blocks=True)
ENV.filters["pretty"] = views.pretty
ENV.filters["time"] = render
ENV.globals.update(base=BASE, base_actions=f"{BASE}/actions")
PAGES = {200: "text/html", 401: "text/html", 404: "text/html"}
ASSETS = {"inspector.css": "text/css", "inspector.js": "text/javascript"}


@dataclass
class Tab:
    key: str
    title: str
    render: object      # function(page) -> Markup (or a template name and its values)


TABS = []


def register_tab(key, title, render):
    """Add a tab: `render(page)` gets a Page (its .ctx, .query, .url(...), .csrf) and returns Markup or
    (template name, values); the template may extend "tab.html". Its page is an operation of its own
    (`SandboxInspect<Key>`, below), served by `show_tab`."""
    tab = Tab(key, title, render)
    TABS.append(tab)
    return tab


@dataclass
class Page:
    """What a tab renders from: the viewer, the world's context and the query."""
    viewer: access.Viewer
    ctx: object
    query: dict
    csrf: str

    def url(self, tab, **params):
        if self.viewer.admin and self.ctx is not None:
            params.setdefault("world", self.ctx.world.id)
        clean = {k: v for k, v in params.items() if v not in (None, "")}
        return f"{BASE}/{tab}" + (f"?{urlencode(clean)}" if clean else "")


def html(template, status=200, **values):
    headers = {**HEADERS, "WWW-Authenticate": CHALLENGE} if status == 401 else HEADERS
    return Response(ENV.get_template(template).render(**values), status, headers, mimetype="text/html")


# A 401 names how to authenticate (RFC 9110 §11.6.1): a world's partner token, or the operator's admin key.
CHALLENGE = 'Bearer realm="ptas-sandbox inspector", ApiKey header="X-Sandbox-Admin-Key"'


def viewer_of(sandbox):
    """The viewer of this request (header, admin key or session cookie), or None."""
    if access.admin_key_ok(sandbox.config, request.headers.get(access.ADMIN_HEADER)):
        return pick_world(sandbox, access.Viewer(None, None, admin=True))
    if request.headers.get("Authorization"):
        claims, ctx = bearer_world(sandbox, request.environ)
        control_principal(ctx, claims)
        return access.Viewer(ctx.world, claims["jti"])
    cookie = request.cookies.get(access.COOKIE)
    found = access.read_session(sandbox.signer.session_key, sandbox.system_time(), cookie) if cookie else None
    if found is None:
        return None
    world_id, token_id = found
    if world_id is None:
        return pick_world(sandbox, access.Viewer(None, None, admin=True, session=cookie))
    world = sandbox.worlds.get(world_id)
    if world and token_id == world_key_id(world_id):       # opened with the world key: it is never revoked
        return access.Viewer(world, token_id, session=cookie)
    if not world or unrevoked(sandbox.store, world_id, token_id) is None:
        return None             # reset, wiped or revoked: the session ends with its token
    return access.Viewer(world, token_id, session=cookie)


def pick_world(sandbox, viewer):
    """The admin sees the list of worlds, or the one named by `?world=`."""
    world_id = request.values.get("world")
    if world_id:
        viewer.world = sandbox.worlds.get(world_id)
        if viewer.world is None:
            raise NotFound(f"No world with id {world_id!r}.")
    return viewer


def signed_in(call):
    """(viewer, page or None): the page for people who are not signed in, 401, when there is no viewer."""
    try:
        viewer = viewer_of(call.sandbox)
    except Problem as problem:
        return None, html("signin.html", 401 if problem.status in (401, 403) else problem.status,
                          reason=problem.detail, base=BASE)
    if viewer is None:
        reason = ("A bearer token in the address is not accepted: it would end up in browser history and logs. "
                  if "token" in request.args else "")
        return None, html("signin.html", 401, reason=reason or None, base=BASE)
    return viewer, None


def page_of(call, viewer):
    ctx = call.sandbox.ctx(viewer.world) if viewer.world is not None else None
    if ctx is not None:
        call.sandbox.catch_up(viewer.world)
        ctx = call.sandbox.ctx(viewer.world)
    return Page(viewer, ctx, request.args.to_dict(), access.csrf_token(call.sandbox.signer.session_key, viewer.session))


def show_tab(call, tab):
    viewer, refusal = signed_in(call)
    if refusal is not None:
        return refusal
    page = page_of(call, viewer)
    if page.ctx is None:
        return worlds_page(call, page)
    result = tab.render(page)
    if isinstance(result, tuple):
        template, values = result
        body = Markup(ENV.get_template(template).render(page=page, **values))
    else:
        body = Markup(result)
    return html("layout.html", page=page, tabs=TABS, active=tab.key, body=body, notice=request.args.get("notice"),
                base=BASE)


def worlds_page(call, page):
    sandbox = call.sandbox
    worlds = [{"id": w.id, "now": render(sandbox.worlds.now(w)), "frozen": w.frozen, "scenario": w.scenario}
              for w in sandbox.worlds.all()[-200:]]
    return html("worlds.html", page=page, worlds=list(reversed(worlds)), base=BASE)


# -- the tabs ------------------------------------------------------------------------------------------------
def requests_tab(page):
    chosen = page.query.get("entry")
    if chosen:
        found = views.entry(page.ctx, chosen)
        if found is None:
            return "entry.html", {"entry": None, "missing": chosen}
        return "entry.html", {"entry": found}
    status = page.query.get("status")
    problem = None
    if status:
        try:
            journal.status_range(status)
        except ValueError as error:
            problem, page.query["status"] = str(error), None
    return "requests.html", {**views.requests(page.ctx, page.query), "problem": problem}


REQUESTS = register_tab("requests", "Requests", requests_tab)
WEBHOOKS = register_tab("webhooks", "Webhooks", lambda page: (
    "webhooks.html", views.webhooks_tab(page.ctx, page.query, current_sandbox().hooks)))
ACCOUNTS = register_tab("accounts", "Accounts & imports",
                        lambda page: ("accounts.html", views.accounts_tab(page.ctx, page.query)))
TOKENS = register_tab("tokens", "Tokens", lambda page: ("tokens.html", views.tokens_tab(page.ctx, page.query)))
CLOCK = register_tab("clock", "Clock", lambda page: ("clock.html", views.clock_tab(page.ctx, page.query)))
REPORT = register_tab("report", "Report", lambda page: ("report.html", {"report": report.report_of(page.ctx)}))
TAB_PAGE = {"tokens": NO_AUTH, "control": True, "responses": PAGES}


@operation("SandboxInspectRequests", "GET", f"{BASE}/requests", **TAB_PAGE,
           summary="The inspector's Requests tab (an HTML page).")
def inspect_requests(call):
    return show_tab(call, REQUESTS)


@operation("SandboxInspectWebhooks", "GET", f"{BASE}/webhooks", **TAB_PAGE,
           summary="The inspector's Webhooks tab (an HTML page).")
def inspect_webhooks(call):
    return show_tab(call, WEBHOOKS)


@operation("SandboxInspectAccounts", "GET", f"{BASE}/accounts", **TAB_PAGE,
           summary="The inspector's Accounts & imports tab (an HTML page).")
def inspect_accounts(call):
    return show_tab(call, ACCOUNTS)


@operation("SandboxInspectTokens", "GET", f"{BASE}/tokens", **TAB_PAGE,
           summary="The inspector's Tokens tab (an HTML page).")
def inspect_tokens(call):
    return show_tab(call, TOKENS)


@operation("SandboxInspectClock", "GET", f"{BASE}/clock", **TAB_PAGE,
           summary="The inspector's Clock tab (an HTML page).")
def inspect_clock(call):
    return show_tab(call, CLOCK)


@operation("SandboxInspectReport", "GET", f"{BASE}/report", **TAB_PAGE,
           summary="The inspector's Report tab (an HTML page).")
def inspect_report(call):
    return show_tab(call, REPORT)


@operation("SandboxInspect", "GET", BASE, tokens=NO_AUTH, control=True, responses={**PAGES, 303: None},
           query={"world": {"type": "string", "description": "with the admin key: the world to show"}})
def inspect(call):
    """The inspector: the requests tab of the viewer's world, the admin's list of worlds, or how to sign in."""
    viewer, refusal = signed_in(call)
    if refusal is not None:
        return refusal
    if viewer.world is None:
        return worlds_page(call, page_of(call, viewer))
    return Response(status=303, headers={"Location": page_of(call, viewer).url("requests")})


@operation("SandboxInspectorLink", "POST", f"{BASE}/links", tokens=NO_AUTH, control=True,
           responses={201: {"type": "object", "properties": {
               "url": {"type": "string", "format": "uri"}, "expiresAt": {"type": "string", "format": "date-time"}},
               "required": ["url", "expiresAt"]}, 401: "ProblemDetails", 403: "ProblemDetails"})
def link(call):
    """A short-lived, single-use link that opens the inspector of the caller's world in a browser (with the
    admin key in X-Sandbox-Admin-Key: the server-wide view). The link, not the token, goes in the address."""
    sandbox = call.sandbox
    if access.admin_key_ok(sandbox.config, request.headers.get(access.ADMIN_HEADER)):
        world_id = token_id = None
    else:
        claims, ctx = bearer_world(sandbox, request.environ)
        control_principal(ctx, claims)
        world_id, token_id = ctx.world.id, claims["jti"]
    ticket, expires = access.mint_ticket(sandbox.store, sandbox.system_time(), world_id, token_id)
    url = f"{request.host_url.rstrip('/')}{BASE}/login?{urlencode({'ticket': ticket})}"
    return Answer(201, {"url": url, "expiresAt": render(expires)})


@operation("SandboxInspectorLogin", "GET", f"{BASE}/login", tokens=NO_AUTH, control=True,
           query={"ticket": {"type": "string"}}, responses={303: None, 401: "text/html"})
def login(call):
    """Follow a link from SandboxInspectorLink: sets the session cookie and opens the inspector."""
    sandbox = call.sandbox
    found = access.redeem_ticket(sandbox.store, sandbox.system_time(), call.query.get("ticket"))
    if found is None:
        return html("signin.html", 401, reason="This inspector link has expired or was already used.", base=BASE)
    world_id, token_id = found
    cookie = access.session_cookie(sandbox.signer.session_key, sandbox.system_time(), world_id, token_id)
    response = Response(status=303, headers={"Location": f"{BASE}/requests" if world_id else BASE, **HEADERS})
    response.set_cookie(access.COOKIE, cookie, max_age=access.SESSION_SECONDS, path=BASE, httponly=True,
                        samesite="Lax", secure=request.is_secure)
    return response


@operation("SandboxInspectorAsset", "GET", f"{BASE}/assets/{{name}}", tokens=NO_AUTH, control=True,
           responses={200: "text/plain", 404: "text/html"})
def asset(call):
    """The inspector's stylesheet and script, from the package."""
    name = call.params["name"]
    if name not in ASSETS:
        return html("signin.html", 404, reason="No such asset.", base=BASE)
    body = resources.files(__package__).joinpath("static", name).read_bytes()
    return Response(body, 200, {"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"},
                    mimetype=ASSETS[name])


# -- actions (forms; CSRF-protected) --------------------------------------------------------------------------
def seconds(text):
    """A duration typed in the clock form (ptas_sandbox.durations: the CLI's reading and words)."""
    return durations.seconds(text)


def act(call, viewer, action, form):
    """Do one action on the viewer's world; a sentence for the page."""
    sandbox, world = call.sandbox, viewer.world
    if action == "clock":
        if "advance" in form:
            amount = seconds(form["advance"])
            world = sandbox.worlds.move(world, advance=round(amount * 1_000_000))
        elif "set" in form:
            world = sandbox.worlds.move(world, set_to=parse(form["set"]))
        elif "freeze" in form:
            world = sandbox.worlds.move(world, freeze=form["freeze"] == "true")
        sandbox.catch_up(world)
        return f"Clock: {render(sandbox.worlds.now(world))}{' (frozen)' if world.frozen else ''}."
    if action == "test-event":
        kind = form.get("kind")
        if kind not in events.ACTIVE:
            raise ValueError(f"unknown event kind {kind!r}")
        ctx = sandbox.ctx(world)
        partner = sandbox.store.one("SELECT partner_id FROM tokens WHERE id = ?", (viewer.token_id,)) \
            if viewer.token_id else None
        partner_id = partner["partner_id"] if partner else partners.root_of(sandbox.store, world.id)
        with sandbox.store.transaction():
            data = samples.data_for(kind, ctx, next_in_sequence(ctx.store, world.id, "test-event"))
            event = events.emit(ctx, kind, partner_id, data, test=True)
        return f"Test {kind} event {event['id']} recorded; flush to deliver it now."
    if action == "flush":
        attempted = current_app.extensions["ptas.webhooks"].flush(world)
        return f"Flushed: {attempted} delivery attempt(s)."
    raise LookupError(action)


@operation("SandboxInspectorAction", "POST", f"{BASE}/actions/{{action}}", tokens=NO_AUTH, control=True,
           body={"type": "object", "properties": {
               "csrf": {"type": "string", "description": "the page's CSRF token (with a session cookie)"},
               "next": {"type": "string", "description": "the inspector page to go back to"},
               "advance": {"type": "string", "description": "clock: 90, 15m, 1h, 2d, 1w"},
               "set": {"type": "string", "format": "date-time"}, "freeze": {"enum": ["true", "false"]},
               "kind": {"type": "string", "description": "test-event: an event kind"}}},
           example={"advance": "1h", "next": "/_sandbox/inspect/clock"},
           body_required=False, consumes="application/x-www-form-urlencoded",
           atomic=False, responses={303: None, 401: "text/html", 403: "text/html", 404: "text/html"})
def action(call):
    """A button of the inspector (clock, test-event, flush): a form post with the page's CSRF token."""
    viewer, refusal = signed_in(call)
    if refusal is not None:
        return refusal
    form = request.form.to_dict()
    if not access.csrf_ok(call.sandbox.signer.session_key, viewer, form.pop("csrf", None)):
        return html("signin.html", 403, reason="This form has expired: reload the page and try again.", base=BASE)
    if viewer.world is None:
        return html("signin.html", 404, reason="Choose a world first.", base=BASE)
    back = form.pop("next", "")
    if not back.startswith(BASE + "/") or "//" in back:
        back = f"{BASE}/requests"
    try:
        notice = act(call, viewer, call.params["action"], form)
    except LookupError:
        return html("signin.html", 404, reason="No such action.", base=BASE)
    except (ValueError, Problem) as error:
        notice = f"Not done: {getattr(error, 'detail', error)}"
    parts = urlsplit(back)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "notice"] + [("notice", notice)]
    return Response(status=303, headers={"Location": f"{parts.path}?{urlencode(query)}"})

