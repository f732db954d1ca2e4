"""The inspector page (/_sandbox/inspect): worlds and their clocks, echo captures and a world's deliveries.

Everything shown comes from requests other people sent, so every value goes through `html.escape`; the page
carries no script and a Content-Security-Policy that forbids any. Deliveries hold partner data and are shown
only to a holder of a partner token of their world.
"""

from html import escape

from ..pipeline import control_principal
from ..problems import Problem
from ..timestamps import render
from ..webhooks import models as webhooks
from . import models

WORLDS_SHOWN = 50
CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;width:100%;
margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}pre{white-space:pre-wrap;word-break:break-all;margin:0;max-height:16em;overflow:auto}
.ok{color:#17692b}.bad{color:#a3171b}.muted{color:#777}"""


def table(headings, rows, empty):
    if not rows:
        return f'<p class="muted">{escape(empty)}</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def pre(text, limit=4000):
    text = "" if text is None else str(text)
    return f"<pre>{escape(text[:limit])}{'…' if len(text) > limit else ''}</pre>"


def world_of(sandbox, credential):
    """The world a partner token belongs to, or (None, reason)."""
    if not credential:
        return None, "Give ?token=<partner token> (or an Authorization header) to see that world's deliveries."
    token = credential.split(" ", 1)[1] if credential.lower().startswith("bearer ") else credential
    try:
        claims = sandbox.signer.verify(token.strip())
        world = sandbox.worlds.get(claims["wld"])
        if world is None:
            return None, "That token's world no longer exists."
        control_principal(sandbox.ctx(world), claims)
        return world, None
    except Problem as problem:
        return None, f"The token was not accepted: {problem.detail}"


def worlds_section(sandbox):
    rows = []
    for world in sandbox.worlds.all()[-WORLDS_SHOWN:]:
        hooks = sandbox.store.one("SELECT COUNT(*) AS n FROM webhooks WHERE world = ?", (world.id,))["n"]
        rows.append([escape(world.id), escape(render(sandbox.worlds.now(world))),
                     "frozen" if world.frozen else "running", escape(world.scenario or ""), str(hooks)])
    return (f"<h2>Worlds (the latest {WORLDS_SHOWN})</h2>"
            + table(["world", "clock", "", "scenario", "webhooks"], rows, "No worlds yet."))


def captures_section(sandbox, bin_):
    try:
        items = models.captures(sandbox.store, bin_) if bin_ else models.recent(sandbox.store)
    except Problem as problem:
        return f"<h2>Echo captures</h2><p class=bad>{escape(problem.detail)}</p>"
    rows = [[escape(c["receivedAt"]), escape(c["bin"]), escape(c["method"]), escape(c["contentType"] or ""),
             pre("\n".join(f"{k}: {v}" for k, v in c["headers"].items())), pre(c["body"])] for c in items]
    title = f"Echo captures in bin {escape(bin_)}" if bin_ else "Latest echo captures (all bins)"
    return f"<h2>{title}</h2>" + table(["received", "bin", "method", "content type", "headers", "body"], rows,
                                       "Nothing captured yet: point a webhook at /_sandbox/echo/<bin>.")


def deliveries_section(sandbox, credential):
    world, reason = world_of(sandbox, credential)
    if world is None:
        return f"<h2>Deliveries</h2><p class=muted>{escape(reason)}</p>"
    rows = []
    for d in reversed(webhooks.log(sandbox.store, world.id, limit=100)):
        outcome = " ".join(filter(None, [d["response"] and f"HTTP {d['response']['status']}", d["error"]]))
        css = "ok" if d["status"] == "succeeded" else "bad" if d["status"] == "failed" else "muted"
        event = escape(d["eventType"]) + (" (test)" if d["isTest"] else "")
        rows.append([escape(d["attemptedAt"] or d["dueAt"]), event,
                     str(d["attempt"]), escape(d["url"]), f'<span class="{css}">{escape(d["status"])}</span>',
                     escape(outcome), escape("" if d["durationMs"] is None else f"{d['durationMs']:.1f} ms"),
                     escape(d["nextRetryAt"] or ""), pre(d["request"]["body"])])
    return (f"<h2>Deliveries of world {escape(world.id)}</h2>"
            + table(["at", "event", "attempt", "callback", "status", "outcome", "duration", "next retry", "body"],
                    rows, "No delivery attempts yet."))


def page(sandbox, credential, bin_=None):
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>ptas-sandbox inspector</title>"
            f"<style>{STYLE}</style></head><body><h1>ptas-sandbox inspector</h1>"
            + worlds_section(sandbox) + deliveries_section(sandbox, credential) + captures_section(sandbox, bin_)
            + "</body></html>")
