"""Hosted HTML pages (consent page, Account UI, User UI): Jinja templates with autoescape, safe styling.

Everything a page shows goes through Jinja's autoescape; partner styling passes `safe_styling`, which keeps
only known properties with plain values, so no partner setting can inject markup, script or remote CSS.

A page may be framed only by the origins its partner lists in `uiSettings.frameAncestors` (none by default).
Every form carries a token bound to a cookie the page sets (double submit): a post from another site has
neither, and one whose Origin or Sec-Fetch-Site names another site is refused too.
"""

import functools
import hashlib
import hmac
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Response, current_app, g, request
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from ..partners import models as partners
from ..partners.models import ORIGIN
from ..problems import NotFound, Problem
from ..webhooks.signatures import same_text
from . import models

ENV = Environment(loader=PackageLoader(__package__, "templates"), autoescape=True, trim_blocks=True,
                  lstrip_blocks=True)

# The pages post forms to themselves; the OAuth2 return step redirects the browser on to the partner's URL,
# which form-action must allow. Keys travel in URLs, so no Referer leaves the page.
POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self' http: https:; "
          "base-uri 'none'; frame-ancestors {}")
HEADERS = {
    "Content-Security-Policy": POLICY.format("'none'"),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}

# What a page operation answers: the page, or an error page (HTML, never problem+json: a person reads it).
PAGE = {200: "text/html", 400: "text/html", 403: "text/html", 404: "text/html", 409: "text/html"}
FORM = {**PAGE, 302: None}

# uiSettings.styling: the CSS custom property of each property a partner may set (shapes: partners.models).
STYLES = {"primaryColor": "--primary", "backgroundColor": "--background", "textColor": "--text",
          "fontFamily": "--font", "borderRadius": "--radius", "buttonTextColor": "--button-text"}


def safe_styling(styling):
    """CSS custom properties from a partner's uiSettings.styling: known keys with safe values, others dropped."""
    if not isinstance(styling, dict):
        return {}
    css = {}
    for key, variable in STYLES.items():
        value = styling.get(key)
        # Refused when set (partners.styling); checked again here for a state written before that.
        if partners.safe_style(key, value):
            # Checked against a shape with no <, >, &, ;, {, }, \ or newline, so it is written into <style> as
            # is: HTML-escaping there turned the quotes of "Open Sans" into &#34;, which CSS does not read.
            css[variable] = Markup(value.strip())
    return css


def framing(ui_settings):
    """Headers letting the partner's listed origins, and no one else, frame a page."""
    # checked when the partner set them; checked again for the header
    origins = [o for o in (ui_settings or {}).get("frameAncestors") or [] if isinstance(o, str) and ORIGIN.match(o)]
    if not origins:
        return {}
    return {"Content-Security-Policy": POLICY.format(" ".join(origins)), "X-Frame-Options": None}


# --- forms: a token bound to a cookie (double submit) ---------------------------------------------------------

COOKIE = "ptas_form"
TOKEN_FIELD = "csrfToken"


class FormRefused(Problem):
    status, slug, title = 403, "form-refused", "The form was refused"


def _form_key():
    signer = current_app.extensions["ptas"].signer
    return (signer.secret if signer else "ptas-sandbox").encode()


def form_token(cookie):
    return hmac.new(_form_key(), f"form/{cookie}".encode(), hashlib.sha256).hexdigest()


def _cookie():
    value = request.cookies.get(COOKIE, "")
    return value if re.fullmatch(r"[A-Za-z0-9_-]{32,64}", value) else None


def check_form(call):
    """Refuse a form post that did not come from the page itself: another site's Origin or Sec-Fetch-Site,
    or no token matching the page's cookie."""
    headers = call.request.headers
    own = call.request.host_url.rstrip("/")
    origin = headers.get("Origin")
    if headers.get("Sec-Fetch-Site") in ("cross-site", "same-site") or (origin not in (None, "null", own)):
        raise FormRefused("This form was sent from another website, so it was not accepted. Open the page "
                          "again from the application you came from.")
    cookie = _cookie()
    sent = call.request.form.get(TOKEN_FIELD, "")
    if cookie is None or not same_text(sent, form_token(cookie)):
        raise FormRefused("This form has expired or was not sent from its page. Go back, reload the page and "
                          "try again.")

def page(template, http_status=200, headers=None, frame=None, **values):
    """An HTML response from a template; every value is escaped by the template engine. Its forms get the
    token of the browser's form cookie (set here when it has none); `frame`: the partner's uiSettings."""
    frame = frame if frame is not None else g.get("page_frame")
    cookie = _cookie() or secrets.token_urlsafe(32)
    html = ENV.get_template(template).render(csrf_token=form_token(cookie), **values)
    merged = {**HEADERS, **framing(frame), **(headers or {})}
    response = Response(html, http_status, {k: v for k, v in merged.items() if v is not None},
                        mimetype="text/html")
    if request.cookies.get(COOKIE) != cookie:
        # Lax: sent when the person navigates here, never with another site's post. A page its partner lets
        # others frame is posted from a third-party context, where only SameSite=None (and Secure) cookies go.
        framed = "X-Frame-Options" in merged and merged["X-Frame-Options"] is None
        response.set_cookie(COOKIE, cookie, httponly=True, path="/", secure=framed,
                            samesite="None" if framed else "Lax")
    return response


HEADINGS = {400: "Something is not right", 403: "This form was not accepted", 404: "Page not found",
            409: "This is already done"}


def error_page(problem, headers=None, styling=None):
    """A Problem shown to a person: the same status, a plain heading (not the API's problem title), the detail
    as text."""
    heading = getattr(problem, "heading", None) or HEADINGS.get(problem.status, "Something went wrong")
    return page("error.html", problem.status, headers, title=heading, detail=problem.detail,
                status_code=problem.status, styling=styling or {})


def shown(handler):
    """A page operation's handler answers every Problem as an HTML error page (a person reads it), styled
    with what the handler put in `look["styling"]` before the problem arose."""
    @functools.wraps(handler)       # the registry and the operation index name the handler, not this wrapper
    def run(call):
        look = {"styling": None}
        try:
            return handler(call, look)
        except Problem as problem:
            return error_page(problem, styling=look["styling"])
    return run


def hosted(call, look, sessions, what):
    """The open session behind a page's key (`sessions`: its models module) and its world's context; the
    partner's safe styling goes to `look` so any error page wears it too. No session is a 404 page."""
    row = sessions.get_by_key(call.sandbox.store, call.params["key"])
    if row is None:
        raise NotFound(f"No {what} with this address (is the link complete?).")
    ctx = world_ctx(call.sandbox, row["world"])
    partner = models.partner_of(ctx, row["partner_id"])
    look["styling"] = safe_styling(partner["uiSettings"].get("styling"))
    look["partner"] = partner["name"]
    mine(call, partner)
    sessions.open_session(ctx, row)
    return ctx, row


def mine(call, partner):
    """The page belongs to `partner`: it may be framed by the partner's origins, and a form posted to it must
    come from the page itself."""
    g.page_frame = partner["uiSettings"]
    if call.request.method == "POST":
        check_form(call)


def url(call, path):
    """The absolute URL of a path under the service prefix, as the caller reached this sandbox."""
    return call.request.url_root.rstrip("/") + call.sandbox.config["PREFIX"] + path


def world_ctx(sandbox, world_id):
    """The domain context of a page's world (pages carry no token: their key found the row, the row its world)."""
    world = sandbox.worlds.get(world_id)
    if world is None:
        raise NotFound("This page no longer exists (its sandbox world was reset).")
    sandbox.worlds.writes(world.id)     # what a page writes is its world's alone
    return sandbox.ctx(world)


def with_query(url, **values):
    """`url` with `values` added to its query string (the partner's own query parameters kept)."""
    parts = urlsplit(url)
    query = urlencode(parse_qsl(parts.query, keep_blank_values=True) + list(values.items()))
    return urlunsplit(parts._replace(query=query))


def redirect(url, headers=None):
    response = Response(status=302, headers={**HEADERS, **(headers or {}), "Location": url})
    response.autocorrect_location_header = False
    return response
