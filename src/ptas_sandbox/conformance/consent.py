"""The OAuth2 return step on any target: something must answer the provider's page (spec §1, step 2).

A simulator's dummy provider, or any provider page with a form the harness recognises, is answered as a browser
would (hidden fields kept, the button or option for the decision chosen), following the redirects until the
return step: the response that carries X-Service-Auth* or sends the user to the partner's redirect URL. Where no
form is recognised, `--oauth-consent COMMAND` hands the page to the QA engineer's own driver (a Playwright
script, say), and `--oauth-consent interactive` to a person at the terminal; otherwise the scenario is not
checked, with that said.

The hook's contract: it runs with PTAS_OAUTH_URL (the provider URL), PTAS_OAUTH_DECISION (approve, notfound or
error) and PTAS_OAUTH_RETURN_URL (where the user should end, empty for the service's own page) in its
environment, and prints the return step's response: an optional status line (`HTTP/1.1 302`), then its headers
(`Location: …`, `X-Service-AuthStatus: …`), as a browser's network panel shows them.
"""

import os
import re
import shlex
import subprocess
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

from .client import Exchange
from .resolver import NotOffered

HOOK_SECONDS = 300
MAX_REDIRECTS = 5
# What a decision's control says on a provider's page (its value, id or name, without case).
WORDS = {"approve": ("approve", "allow", "accept", "authorize", "authorise", "grant", "consent"),
         "notfound": ("notfound", "not_found", "not-found", "unknown"),
         "error": ("error", "fail")}


class Forms(HTMLParser):
    """The forms of a page: action, method, hidden fields, and the controls a decision can choose."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append({"action": attrs.get("action", ""), "method": attrs.get("method", "get").lower(),
                               "hidden": {}, "choices": [], "checked": {}})
        elif self.forms and tag in ("input", "button"):
            form, kind, name = self.forms[-1], attrs.get("type", "submit" if tag == "button" else "text"), \
                attrs.get("name", "")
            if kind == "hidden" and name:
                form["hidden"][name] = attrs.get("value", "")
            elif kind in ("submit", "radio"):
                form["choices"].append((name, attrs.get("value", ""), attrs.get("id", ""), kind))
                if kind == "radio" and "checked" in attrs:
                    form["checked"][name] = attrs.get("value", "")


def choose(html, decision):
    """(form, fields) answering `decision` on a page, or None when no form has a control that says it."""
    parser = Forms()
    parser.feed(html or "")
    words = WORDS[decision]
    for form in parser.forms:
        if form["method"] != "post":
            continue
        for name, value, ident, kind in form["choices"]:
            said = f"{value} {ident}".lower()
            if name and any(word in said for word in words):
                fields = {**form["hidden"], **form["checked"], name: value}
                return form, fields
    return None


def drive(scene, redirect_url, decision, return_url):
    """The return step's reply after answering the provider's page with `decision`."""
    hook = scene.target.options.get("oauth_consent")
    if hook == "interactive":
        return by_person(redirect_url, decision, return_url)
    if hook:
        return by_hook(hook, redirect_url, decision, return_url)
    return by_form(scene, redirect_url, decision, return_url)


def by_form(scene, redirect_url, decision, return_url):
    client = scene.client
    page = client.request("GET", local(scene, redirect_url), headers={"Accept": "text/html"}, record=False)
    chosen = choose(page.text, decision) if page.ok else None
    if chosen is None:
        raise NotOffered(f"the provider's page ({page.status}) shows no form the harness recognises for "
                         f"'{decision}': drive it with --oauth-consent COMMAND (or interactive)")
    form, fields = chosen
    url = urljoin(redirect_url, form["action"] or redirect_url)
    reply = client.request("POST", local(scene, url), data=urlencode(fields),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    for _ in range(MAX_REDIRECTS):
        location = reply.headers.get("location", "")
        if is_return(reply, return_url) or reply.status not in (301, 302, 303, 307) or not location:
            return reply
        reply = client.request("GET", local(scene, urljoin(url, location)), headers={"Accept": "text/html"})
    return reply


def is_return(reply, return_url):
    location = reply.headers.get("location", "")
    return "x-service-authstatus" in reply.headers or bool(return_url and location.startswith(return_url))


def local(scene, url):
    """The path of a URL on the target (the transport adds the target's base); another host cannot be reached
    through the target's transport."""
    parts = urlsplit(url)
    base = urlsplit(getattr(scene.target.transport, "base_url", "") or "")
    if parts.netloc and base.netloc and parts.netloc != base.netloc:
        raise NotOffered(f"the provider's page is on {parts.netloc}, not on the target: drive it with "
                         "--oauth-consent COMMAND (or interactive)")
    path = parts.path
    if base.path and path.startswith(base.path):
        path = path[len(base.path):] or "/"
    return path + (f"?{parts.query}" if parts.query else "")


def by_hook(command, redirect_url, decision, return_url):
    env = {**os.environ, "PTAS_OAUTH_URL": redirect_url, "PTAS_OAUTH_DECISION": decision,
           "PTAS_OAUTH_RETURN_URL": return_url or ""}
    try:
        done = subprocess.run(shlex.split(command), env=env, capture_output=True, text=True, timeout=HOOK_SECONDS,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise AssertionError(f"--oauth-consent {command!r} did not complete: {error.__class__.__name__}") from None
    if done.returncode != 0:
        raise AssertionError(f"--oauth-consent {command!r} ended with status {done.returncode}: "
                             f"{done.stderr.strip()[-300:]}")
    return response_of(done.stdout, redirect_url)


def response_of(text, url):
    """An exchange from a status line and headers as the hook printed them."""
    status, headers = None, {}
    for line in text.splitlines():
        first = re.match(r"\s*HTTP/[\d.]+\s+(\d{3})", line)
        if first:
            status = int(first.group(1))
        elif ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if status is None:
        status = 302 if "location" in headers else 200
    return Exchange("GET", urlsplit(url).path, status, headers, "", None, "OAuth2 return step")


def by_person(redirect_url, decision, return_url, terminal="/dev/tty"):
    """A person answers the page; the harness sees only where the browser ended, never the headers. The terminal
    is opened directly: pytest holds stdin and stdout while the suites run."""
    said = {"approve": "allow access", "notfound": "make the sign-in fail as 'account not found'",
            "error": "make the sign-in fail with an error"}[decision]
    try:
        with open(terminal, "a", encoding="utf-8") as screen, open(terminal, encoding="utf-8") as keyboard:
            screen.write(f"\nOAuth2 step 2: open {redirect_url}\n  and {said}; then paste the address the browser "
                         "ended on (empty when it shows the service's own page):\n> ")
            screen.flush()
            landed = keyboard.readline().strip()
    except OSError:
        raise NotOffered("--oauth-consent interactive needs a terminal, and this run has none") from None
    headers = {"location": landed} if landed else {}
    return Exchange("GET", urlsplit(redirect_url).path, 302 if landed else 200, headers, "", None,
                 "OAuth2 return step (interactive: its headers are not seen)")
