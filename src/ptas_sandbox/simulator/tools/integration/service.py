"""Notes the report needs that the journal does not keep: partner tokens reaching end-user pages, seen at the
edge. (Retry-After and nextPageReference of answers are journal marks, made by the journal itself.)"""

from ptas_sandbox.jwt_text import JWT

from ...operations import NO_AUTH, REGISTRY
from ...problems import Problem
from . import models


def attach(app, sandbox):
    def note(req, response):
        try:
            notice(sandbox, req, response)
        except Exception:      # a note never turns an answered call into a 500
            app.logger.exception("could not note %s %s for the report", req.method, req.path)
    sandbox.hooks.after.append(note)       # before the journal's record stage, which keeps these notes


def notice(sandbox, request, response):
    op = REGISTRY.get(request.endpoint)
    exposed_where = None
    if op is not None and op.tokens == NO_AUTH and not op.control:     # a page a person's browser opens
        exposed_where = [("the page URL", request.query_string.decode("latin-1")),
                         ("the Authorization header", request.headers.get("Authorization", "")),
                         ("the Referer", request.headers.get("Referer", ""))]
    elif op is not None and not op.control and request.method in ("POST", "PUT", "PATCH") and \
            response.status_code != 413:        # a body refused for its size was never read, nor is it here
        exposed_where = [("the body", request.get_data(cache=True)[:65536].decode("utf-8", "replace"))]
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
