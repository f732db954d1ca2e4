"""Records every API and control call of a world in its journal, around the request pipeline.

A call belongs to the world of its bearer token (any token signed for a world, expired or revoked included:
a refused call is what a partner most needs to see; the world key too), or, for `SandboxCreatePartner`, to the
world it created. Every answer is journaled, routed or not: unknown and removed paths (operationId
`UnknownPath`, `RemovedPath`), wrong methods (`MethodNotAllowed`), bodies too large (413, their body not read),
and a connection the sandbox dropped on purpose (status null, mark `dropped`). The bearer token is read by the
pipeline's own parser (`pipeline.bearer_claims`), so a call the service answers is never missing here. Calls with
no world (no or a foreign token, health, echo captures, hosted pages) are not journaled, nor are reads of the
journal itself and the inspector's own pages, so that watching never fills what is watched. A call carrying
the world's key in `X-Sandbox-World-Key` (a fixture's setup) is marked `harness`: the report does not judge it.
A call of the sandbox's own command line (`X-Sandbox-Tool: ptas listen`, ...) is marked `tool`: the journal's
readers, the inspector and the report leave it out unless asked; `ptas listen`'s polling for due notifications
is not journaled at all (twice a second, it would push the partner's calls out of the journal's 1000 entries).
An answer with Retry-After is marked `retryAfter` (its seconds), and a 429 of the rate limiter `rateLimit` (the
limit that refused it: "global", or the operationId of an operation's own limit).
"""

import logging
import re
import time

from ptas_sandbox.jwt_text import JWT

from ...auth import WORLD_KEY
from ...hooks import PARTNER_REQUEST
from ...operations import NO_AUTH, REGISTRY
from ...pipeline import bearer_claims, request_world
from ...problems import Problem
from ...ratelimit import REFUSED_BY
from ...serving import REQUEST_COMPLETE_NS
from . import models

ENTRY = "ptas.journal"      # the entry `start_entry` opened, in its request's environ
NOT_JOURNALED = {"SandboxRequests", "SandboxCountRequests", "SandboxHealth"}
HARNESS_HEADER = "X-Sandbox-World-Key"
TOOL_HEADER = "X-Sandbox-Tool"
# The two headers as the WSGI environ names them: read there, as request_bytes reads the body's, since werkzeug's
# header lookup costs several times more
HARNESS_KEY, TOOL_KEY = (f"HTTP_{name.upper().replace('-', '_')}" for name in (HARNESS_HEADER, TOOL_HEADER))
TOOL_POLLS = {"SandboxFlushWebhooks", "SandboxEchoCaptures"}   # what a tool polls: not journaled when a tool calls it
NEXT_PAGE = re.compile(rb'"nextPageReference":\s*(null|")')
PAGE_BYTES = 4 * 1024 * 1024     # answers larger than this are not searched for nextPageReference


def attach(app, sandbox):
    config = app.config
    # Entries go to the store now, or written behind in batches when the process owns its store (requeststate.memory):
    # the journal's readers are operations that settle it first.
    entries = sandbox.state.write_behind(record_batch)

    def start_entry(request):
        op = REGISTRY.get(request.endpoint)
        if op is not None and (op.id in NOT_JOURNALED or op.id.startswith("SandboxInspect")):
            return
        if op is None and request.path.startswith(("/_sandbox/inspect", "/_sandbox/echo")):
            return
        tool = request.environ.get(TOOL_KEY, "").strip()[:40]
        if tool and op is not None and op.id in TOOL_POLLS:
            return
        request.environ[ENTRY] = entry = {"op": op, "started": time.perf_counter_ns(), "wall": sandbox.system_time(),
                                  "marks": {"tool": tool} if tool else {}}
        models.PENDING_MARKS.set(entry["marks"])
        REFUSED_BY.set(None)            # a limit that refused this request sets it again
        claims = bearer_claims(sandbox, request.environ)
        if claims is None and (op is None or op.tokens != NO_AUTH):
            where, claims = misplaced(sandbox, request)
            if claims is not None:
                entry["marks"]["credentials"] = where
        if claims is None:
            return
        if token_in_query(sandbox, request):
            entry["marks"]["credentials"] = "the query string, beside the Authorization header"
        world = request_world(sandbox, request.environ, claims["wld"])     # read once, for the pipeline too
        if world is not None:
            entry.update(world=world.id, at=sandbox.worlds.now(world), token=claims["jti"], kind=claims["knd"])
            key = verified(sandbox, request.environ.get(HARNESS_KEY))
            if key is not None and key["knd"] == WORLD_KEY and key["wld"] == world.id:
                entry["marks"]["harness"] = True

    def finish_entry(request, response):
        entry = request.environ.pop(ENTRY, None)
        if entry is None:
            return
        models.PENDING_MARKS.set(None)
        try:
            write(sandbox, config, entry, request, response, entries)
        except Exception:      # the journal never turns an answered call into a 500; say so loudly instead
            logging.getLogger("ptas").exception("could not journal %s %s", request.method, request.path)

    sandbox.hooks.before.append(start_entry)
    sandbox.hooks.record.append(finish_entry)      # last: it keeps the marks the `after` stage noted


def verified(sandbox, token):
    """The claims of a token this sandbox signed, or None."""
    if not token:
        return None
    try:
        return sandbox.signer.verify(token.strip())
    except Problem:
        return None


def misplaced(sandbox, request):
    """A token of this sandbox sent where the service does not read it (another scheme, another header, the
    query string): (where, its claims), or (None, None). The service answers 401; the journal still files the
    call under the token's world, so the partner sees why."""
    header = request.headers.get("Authorization", "")
    places = [("the Authorization header without the Bearer scheme", header)]
    places += [(f"the {name} header", value) for name, value in request.headers.items()
               if name.lower() not in ("authorization", HARNESS_HEADER.lower())]
    places.append(("the query string", request.query_string.decode("latin-1")))
    for where, text in places:
        for candidate in JWT.findall(text):
            claims = verified(sandbox, candidate)
            if claims is not None and claims["knd"] != WORLD_KEY:
                return where, claims
    return None, None


def token_in_query(sandbox, request):
    """A token of this sandbox in the query string of a call whose header was read: served, yet in every log the
    URL reaches."""
    query = request.query_string
    return bool(query) and any(verified(sandbox, candidate) is not None
                               for candidate in JWT.findall(query.decode("latin-1")))


def retry_after_mark(response, status):
    """What an error asked of the client: the seconds of its Retry-After, and for a 429 of the rate limiter which
    limit refused it (`rateLimit`: "global" for spec §8's, which holds for every request, or the operationId of
    an operation's own limit), as marks. An injected 429 has no `rateLimit`: it holds for its operation."""
    retry_after = response.headers.get("Retry-After") if status >= 400 else None
    if not retry_after or not retry_after.isdigit():
        return {}
    refused_by = REFUSED_BY.get() if status == 429 else None
    return {"retryAfter": int(retry_after), **({"rateLimit": refused_by} if refused_by else {})}


def next_page_mark(content_type, raw):
    """A JSON page the operation answered with a next page to follow, as a mark: searched in the bytes, no second
    parse of a page of a thousand records."""
    if content_type == "application/json" and raw and len(raw) < PAGE_BYTES:
        found = NEXT_PAGE.search(raw)
        if found and found.group(1) != b"null":
            return {"nextPageReference": True}
    return {}


def operation_of(entry, response, partner=None):
    """The operationId of the call (the deployment's, where a profile named it), or what an unrouted call was."""
    if partner is not None and partner["operationId"]:
        return partner["operationId"]
    if entry["op"] is not None and partner is None:
        return entry["op"].id
    if response.status_code in (404, 405) and response.mimetype == "application/problem+json" \
            and b'problem:removed"' in response.get_data()[:400]:
        return "RemovedPath"
    return "MethodNotAllowed" if response.status_code == 405 else "UnknownPath"


def request_bytes(config, limit, request):
    """What the request body is to the journal, unredacted: (content type, bytes or None, bytes refused unread).
    A body over the server's limit was refused unread, one over PARSE_FACTOR x `limit` is not kept either.
    Read from the WSGI environ: werkzeug's parsed properties cost more than the rest of the entry."""
    environ = request.environ
    content_type = environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
    length = environ.get("CONTENT_LENGTH")
    if not length or not length.isdigit() or not int(length):
        return content_type, b"", 0
    if config.get("MAX_CONTENT_LENGTH") and int(length) > config["MAX_CONTENT_LENGTH"]:
        return content_type, None, int(length)
    return kept(content_type, request.get_data(cache=True), limit)


def request_body_type(request):
    return request.environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()


def kept(content_type, raw, limit):
    """(content type, the bytes the batch will redact, or None and their number where they are too many)."""
    if len(raw) > models.PARSE_FACTOR * limit:
        return content_type, None, len(raw)
    return content_type, raw, 0


def body_of(body, limit):
    """An entry's body as the journal keeps it (redacted, cut), from what `write` took."""
    content_type, raw, unread = body
    if raw is None:
        return {"contentType": content_type, "body": None, "truncated": True, "bytes": unread}
    return models.body_text(content_type, raw, limit)


def record_batch(store, items):
    """Entries written behind, each world's in one go (or one entry as it is made). Their bodies are redacted
    here, not while the request is answered: a batch redacts what no reader has seen yet, and the caller
    waits for none of it."""
    worlds = {}
    for world, fields, limit, page in items:
        content_type, raw, _ = fields["response"]
        if page and raw is not None:
            fields["marks"].update(next_page_mark(content_type, raw))
        # a new dict: a batch the store refused is written again item by item, from the items as they came
        worlds.setdefault(world, []).append(dict(fields, request=body_of(fields["request"], limit),
                                                 response=body_of(fields["response"], limit)))
    for world, fields in worlds.items():
        if len(fields) == 1:
            models.record(store, world, **fields[0])
        else:
            models.record_many(store, world, fields)


def write(sandbox, config, entry, request, response, entries):
    op = entry["op"]
    world_id = entry.get("world")
    if world_id is None and op is not None and op.id == "SandboxCreatePartner" and response.status_code == 201:
        world_id = (response.get_json(silent=True) or {}).get("world", {}).get("id")
    # A control call may have wiped its world (read it again); any other call's world is the one it read.
    steered = op is None or op.control or "world" not in entry
    world = world_id and (sandbox.worlds.get(world_id) if steered else
                          request_world(sandbox, request.environ, world_id))
    if not world:                           # no world, or one wiped by this very call
        return
    at = entry["at"] if "at" in entry else sandbox.worlds.now(world)
    limit = config["JOURNAL_BODY_LIMIT"]
    streamed = response.is_streamed or response.direct_passthrough
    status = response.status_code
    content_type = response.mimetype
    raw = b"" if streamed else response.get_data()
    marks = entry["marks"]
    page = entry["op"] is not None and request.method == "GET" and status == 200
    response_body = kept(content_type, raw, limit)
    marks.update(retry_after_mark(response, status))
    if page and response_body[1] is None:   # a page the journal keeps is searched by the batch that writes it
        marks.update(next_page_mark(content_type, raw))
    if (marks.get("injected") or {}).get("type") == "drop" and streamed:
        # No answer reached the client: no status (stored as 0). A drop after the work shapes only an answer the
        # operation gave; a refusal before it (a 429 of the rate limit, a 4xx) went out as it was.
        marks["dropped"] = True
        status = 0
    # Bodies as they are: the batch writing them redacts them and searches the page (record_batch), off the
    # request's path.
    # A profiled request is filed as the partner sent it (hooks.py: outermost), not in the simulator's words.
    partner = request.environ.get(PARTNER_REQUEST)
    request_body = request_bytes(config, limit, request) if partner is None else \
        kept(request_body_type(request), partner["body"], limit)
    if partner is not None and op is not None:      # what the simulator made of it: the report judges by that
        marks["simulator"] = {"operationId": op.id, "method": request.method, "path": request.path}
    arrived = request.environ.get(REQUEST_COMPLETE_NS)
    if arrived is not None:
        marks["arrival"] = "http"           # started_ns is when the request arrived whole, not when it was handled
    fields = dict(
        at=at, wall=entry["wall"], operation=operation_of(entry, response, partner),
        method=partner["method"] if partner else request.method, path=partner["path"] if partner else request.path,
        query=partner["query"] if partner else request.query_string.decode("latin-1"), status=status,
        latency_us=(time.perf_counter_ns() - entry["started"]) // 1000, token_id=entry.get("token"),
        token_kind=entry.get("kind"), request=request_body, response=response_body, marks=marks,
        limit=config["JOURNAL_LIMIT"], retention_seconds=config["JOURNAL_RETENTION_SECONDS"],
        started_ns=arrived or entry["started"], answered_ns=time.perf_counter_ns())
    if partner is None:
        entries.add((world.id, fields, limit, page), size=len(request_body[1] or b"") + len(response_body[1] or b""))
        return

    def answered(status, content_type, raw):
        """The answer as the outermost stage gave it to the partner (hooks.py: PARTNER_REQUEST)."""
        answer = kept(content_type, raw, limit)
        fields.update(status=status if fields["status"] else 0, response=answer,
                      latency_us=(time.perf_counter_ns() - entry["started"]) // 1000,
                      answered_ns=time.perf_counter_ns())
        entries.add((world.id, fields, limit, page and status == 200),
                    size=len(request_body[1] or b"") + len(answer[1] or b""))
    partner["answered"] = answered
