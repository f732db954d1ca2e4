"""Hosted HTML pages (consent page, Account UI, User UI): Jinja templates with autoescape, safe styling.

Everything a page shows goes through Jinja's autoescape; partner styling passes `safe_styling`, which keeps
only known properties with plain values, so no partner setting can inject markup, script or remote CSS.
"""

import re
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Response
from jinja2 import Environment, PackageLoader

from ..problems import NotFound, Problem

ENV = Environment(loader=PackageLoader(__name__, "templates"), autoescape=True, trim_blocks=True,
                  lstrip_blocks=True)

# The pages post forms to themselves; the OAuth2 return step redirects the browser on to the partner's URL,
# which form-action must allow. Keys travel in URLs, so no Referer leaves the page.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                               "form-action 'self' http: https:; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}

# What a page operation answers: the page, or an error page (HTML, never problem+json: a person reads it).
PAGE = {200: "text/html", 400: "text/html", 404: "text/html", 409: "text/html"}
FORM = {**PAGE, 302: None}

# uiSettings.styling: the properties a partner may set, and the value shapes accepted for them.
COLOR = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|rgba?\(\s*[\d.%\s,]+\))$")
LENGTH = re.compile(r"^\d{1,3}(\.\d{1,2})?(px|em|rem|%)?$")
FONT = re.compile(r"^[a-zA-Z0-9 ,'-]{1,80}$")
STYLES = {
    "primaryColor": ("--primary", COLOR), "backgroundColor": ("--background", COLOR),
    "textColor": ("--text", COLOR), "fontFamily": ("--font", FONT), "borderRadius": ("--radius", LENGTH),
    "buttonTextColor": ("--button-text", COLOR),
}


def safe_styling(styling):
    """CSS custom properties from a partner's uiSettings.styling: known keys with safe values, others dropped."""
    if not isinstance(styling, dict):
        return {}
    css = {}
    for key, (variable, shape) in STYLES.items():
        value = styling.get(key)
        if isinstance(value, str) and shape.match(value.strip()):
            css[variable] = value.strip()
    return css


def page(template, http_status=200, headers=None, **values):
    """An HTML response from a template; every value is escaped by the template engine."""
    html = ENV.get_template(template).render(**values)
    return Response(html, http_status, {**HEADERS, **(headers or {})}, mimetype="text/html")


def error_page(problem, headers=None, styling=None):
    """A Problem shown to a person: the same status, the detail as text."""
    return page("error.html", problem.status, headers, title=problem.title, detail=problem.detail,
                status_code=problem.status, styling=styling or {})


def shown(handler):
    """A page operation's handler answers every Problem as an HTML error page (a person reads it), styled
    with what the handler put in `look["styling"]` before the problem arose."""
    def run(call):
        look = {"styling": None}
        try:
            return handler(call, look)
        except Problem as problem:
            return error_page(problem, styling=look["styling"])
    run.__name__, run.__doc__, run.__module__ = handler.__name__, handler.__doc__, handler.__module__
    return run


def hosted(call, look, sessions, what):
    """The open session behind a page's key (`sessions`: its models module) and its world's context; the
    partner's safe styling goes to `look` so any error page wears it too. No session is a 404 page."""
    from ..partners import models as partners
    row = sessions.by_key(call.sandbox.store, call.params["key"])
    if row is None:
        raise NotFound(f"No {what} with this address (is the link complete?).")
    ctx = world_ctx(call.sandbox, row["world"])
    look["styling"] = safe_styling(partners.record(partners.get(ctx, row["partner_id"]))["uiSettings"]
                                   .get("styling"))
    sessions.open_session(ctx, row)
    return ctx, row


def url(call, path):
    """The absolute URL of a path under the service prefix, as the caller reached this sandbox."""
    return call.request.url_root.rstrip("/") + call.sandbox.config["PREFIX"] + path


def world_ctx(sandbox, world_id):
    """The domain context of a page's world (pages carry no token: their key found the row, the row its world)."""
    world = sandbox.worlds.get(world_id)
    if world is None:
        raise NotFound("This page no longer exists (its sandbox world was reset).")
    return sandbox.ctx(world)


@contextmanager
def savepoint(store):
    """A form attempt inside the request's transaction: a refused attempt leaves no trace, the page still
    records what it must (the error shown) and answers 400 instead of rolling the whole request back."""
    store.execute("SAVEPOINT page_form")
    try:
        yield
    except BaseException:
        store.execute("ROLLBACK TO page_form")
        store.execute("RELEASE page_form")
        raise
    store.execute("RELEASE page_form")


def with_query(url, **values):
    """`url` with `values` added to its query string (the partner's own query parameters kept)."""
    parts = urlsplit(url)
    query = urlencode(parse_qsl(parts.query, keep_blank_values=True) + list(values.items()))
    return urlunsplit(parts._replace(query=query))


def redirect(url, headers=None):
    response = Response(status=302, headers={**HEADERS, **(headers or {}), "Location": url})
    response.autocorrect_location_header = False
    return response
