"""Notes the report needs that the journal does not keep: Retry-After and nextPageReference of answers (as
journal marks), and, at the edge, calls to removed paths and partner tokens reaching end-user pages."""

import re

from flask import request

from ...operations import NO_AUTH, REGISTRY
from ...pipeline import bearer_claims
from ...problems import Problem
from ..journal import models as journal
from . import models

NEXT_PAGE = re.compile(rb'"nextPageReference":\s*(null|")')
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+")
PAGE_BYTES = 4 * 1024 * 1024     # answers larger than this are not searched for nextPageReference


def attach(app, sandbox):
    def note(response):
        try:
            notice(sandbox, response)
        except Exception:      # a note never turns an answered call into a 500
            app.logger.exception("could not note %s %s for the report", request.method, request.path)
    sandbox.hooks.after.append(note)       # before the journal's record stage, which keeps these notes


def notice(sandbox, response):
    op = REGISTRY.get(request.endpoint)
    retry_after = response.headers.get("Retry-After")
    if retry_after and retry_after.isdigit():
        journal.annotate("retryAfter", int(retry_after))
    if op is not None and request.method == "GET" and response.status_code == 200 and not response.is_streamed \
            and response.mimetype == "application/json" and response.content_length \
            and response.content_length < PAGE_BYTES:
        found = NEXT_PAGE.search(response.get_data())      # no second parse of a page of a thousand records
        if found and found.group(1) != b"null":
            journal.annotate("nextPageReference", True)
    if op is None and response.status_code in (404, 405) and b":removed" in response.get_data()[:400]:
        claims = bearer_claims(sandbox, request.headers)
        world = sandbox.worlds.get(claims["wld"]) if claims else None
        if world is not None:
            with sandbox.store.transaction():
                models.observe(sandbox.store, world.id, "removed-path", sandbox.worlds.now(world), request.method,
                               request.path, "removed from the interface", status=response.status_code)
    exposed_where = None
    if op is not None and op.tokens == NO_AUTH and not op.control:     # a page a person's browser opens
        exposed_where = [("the page URL", request.query_string.decode("latin-1")),
                         ("the Authorization header", request.headers.get("Authorization", "")),
                         ("the Referer", request.headers.get("Referer", ""))]
    elif op is not None and not op.control and request.method in ("POST", "PUT", "PATCH"):
        exposed_where = [(f"the body of {op.id}", request.get_data(cache=True)[:65536].decode("utf-8", "replace"))]
    for where, text in exposed_where or ():
        for candidate in JWT.findall(text):
            claims = claims_of(sandbox, candidate)
            if claims and claims["knd"] == "partner":
                world = sandbox.worlds.get(claims["wld"])
                if world is not None:
                    with sandbox.store.transaction():
                        models.observe(sandbox.store, world.id, "partner-token-exposed", sandbox.worlds.now(world),
                                       request.method, request.path, f"a partner token in {where} of "
                                       f"{op.id}", operation=op.id, status=response.status_code)
                    return


def claims_of(sandbox, token):
    try:
        return sandbox.signer.verify(token)
    except Problem:
        return None

