"""The request journal: every API and control call of a world, kept redacted, truncated and bounded.

Contract for other areas (stable; the chaos report and the fixtures rely on it):

    from ptas_sandbox.simulator.tools.journal import models as journal

    journal.entries(store, world_id, **filters) -> list[dict]   # newest first unless order="asc"
    journal.count(store, world_id, **filters) -> int            # WireMock-style verify: how many matched
    journal.get(store, world_id, entry_id) -> dict | None
    journal.mark(store, world_id, entry_id, key, value)         # entry["marks"][key] = value, afterwards
    journal.annotate(key, value)                                # during a request: mark the entry being made

Filters (all optional, combined with AND): `operation` (operationId), `method`, `path` (exact), `path_pattern`
(a regular expression searched in the path), `status` (an int, or "4xx"-style class), `since`/`until` (world
clock, microseconds, inclusive), `token` (token id), `body` (a JSON value the request body must contain:
objects match on the keys given, recursively), `marked` (a mark key that must be present), `after`/`before`
(entry ids, exclusive), `limit`, `order` ("desc", the default, or "asc").

An entry (also the JSON of `GET /_sandbox/requests`):
    {"id": 17, "at": "<world clock>", "wallAt": "<wall clock>", "operationId": "CreateUser", "method": "POST",
     "path": "/partner/v2/users", "query": "", "status": 201, "latencyMs": 3.2,
     "token": {"id": "...", "kind": "partner"} | null,
     "request": {"contentType": ..., "body": <JSON or text, redacted> | null, "truncated": bool},
     "response": {"contentType": ..., "body": ..., "truncated": bool}, "marks": {"injected": {...}}}

`status` is null for a connection the sandbox dropped (mark `dropped`); `operationId` is `UnknownPath`,
`RemovedPath` or `MethodNotAllowed` for a call no operation took. Marks: `injected` (a fault), `dropped`,
`harness` (a setup call of the world's harness, not judged), `tool` (a call of the sandbox's command line, by
command), `retryAfter`, `nextPageReference`.

Marks are free-form JSON per key: the chaos area writes `injected: {...}` for a fault it injected, so the
journal and the report say which failures were made on purpose. Ids count per world and never repeat, across
resets too. Retention: the newest JOURNAL_LIMIT entries of a world, none older than JOURNAL_RETENTION_SECONDS
on its world clock.
"""

import contextvars
import json
import re
import re._parser as sre_parse  # the standard library's own parser of patterns (checked, not matched, here)

from ptas_sandbox.jwt_text import REDACTED, masked

from ...timestamps import render
from ...worlds import next_in_sequence, world_exists

SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    world TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    wall INTEGER NOT NULL,
    operation TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_us INTEGER NOT NULL,
    token_id TEXT,
    token_kind TEXT,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    marks TEXT NOT NULL,
    started_ns INTEGER,
    answered_ns INTEGER,
    PRIMARY KEY (world, seq)
);
CREATE INDEX IF NOT EXISTS journal_by_operation ON journal (world, operation, seq);
CREATE INDEX IF NOT EXISTS journal_by_time ON journal (world, at);
"""

LIMIT = 1000                    # entries kept per world (config JOURNAL_LIMIT)
RETENTION_SECONDS = 7 * 86400   # on the world clock (config JOURNAL_RETENTION_SECONDS)
BODY_LIMIT = 4096               # characters of a body kept (config JOURNAL_BODY_LIMIT)
PARSE_FACTOR = 16               # a body over 16 x that (64 KiB) is not kept: see body_record
# Keys whose string values are secrets; `credentials` (an account's provider login) goes whole.
SECRET_KEYS = {"authorization", "apikey", "api_key", "code", "pin", "otp", "key", "clientsecret", "ticket"}
SECRET_SUFFIXES = ("token", "secret", "password", "passphrase")
WHOLE_KEYS = {"credentials", "credential"}
# The marks of the entry being made for the request this thread handles (set by the recording hook).
PENDING_MARKS = contextvars.ContextVar("ptas_journal_marks", default=None)


PATTERN_MAX = 256               # characters of a pathPattern
PATTERN_STEPS = 20_000_000      # worst-case backtracking steps one path may cost a pathPattern
BOUNDED = {sre_parse.LITERAL, sre_parse.NOT_LITERAL, sre_parse.ANY, sre_parse.IN, sre_parse.AT}
REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT}


class CostlyPattern(ValueError):
    """A pathPattern whose matching could take the server's time from every other caller."""


def path_pattern(text):
    """`text` compiled, with its number of repetitions, once it is known to match in bounded time.

    Python's `re` backtracks, and holds the interpreter while it does: `(a|aa)*$` against a long path of a's
    stalls every request of every world. So a pathPattern is at most PATTERN_MAX characters, has no
    backreference or lookaround, and repeats only what can match in one way (characters, classes, groups of
    them: no repetition or alternation inside a repetition). Its worst case on a path of n characters is then
    about (n + 1) ** (repetitions + 1) steps; `check_cost` refuses a path that would cost more than
    PATTERN_STEPS."""
    if len(text) > PATTERN_MAX:
        raise CostlyPattern(f"it is longer than {PATTERN_MAX} characters")
    compiled = re.compile(text)
    return compiled, _repeats(sre_parse.parse(text), inside=False)


def _repeats(items, inside):
    count = 0
    for op, av in items:
        if op in REPEATS:
            if inside:
                raise CostlyPattern("it repeats a repetition (say `(a+)*`); repeat only characters and classes")
            count += 1 + _repeats(av[2], inside=True)
        elif op is sre_parse.SUBPATTERN:
            count += _repeats(av[3], inside)
        elif op is sre_parse.BRANCH:
            if inside:
                raise CostlyPattern("it repeats an alternation (say `(a|aa)*`); repeat a class like `[ab]*`")
            count += sum(_repeats(branch, inside) for branch in av[1])
        elif op not in BOUNDED:
            raise CostlyPattern(f"it uses {str(op).lower()}: backreferences, lookarounds and conditionals are "
                                "not taken")
    return count


def check_cost(repeats, path):
    if (len(path) + 1) ** (repeats + 1) > PATTERN_STEPS:
        raise CostlyPattern(f"with {repeats} repetitions it is too costly on a path of {len(path)} characters; "
                            "use fewer repetitions (or filter by operationId or path)")


def secret_key(name):
    lowered = str(name).lower()
    return lowered in SECRET_KEYS or lowered.endswith(SECRET_SUFFIXES)


def redact(value, whole=False):
    """A JSON value with secrets replaced: string values of secret-named keys, whole credential objects, and
    any JWT found in any string."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            lowered = str(key).lower()
            if whole or lowered in WHOLE_KEYS:
                out[key] = redact(item, whole=True)
            elif secret_key(key) and not isinstance(item, dict) and item is not None:
                # a list under a secret's name holds secrets; an object (a token record) is redacted field by field
                out[key] = redact(item, whole=True) if isinstance(item, list) else REDACTED
            else:
                out[key] = redact(item)
        return out
    if isinstance(value, list):
        return [redact(item, whole) for item in value]
    if whole and value is not None and not isinstance(value, bool):
        return REDACTED
    if isinstance(value, str):
        return masked(value)
    return value


def redact_query(query):
    """A query string with the values of secret-named parameters (and any JWT) masked."""
    parts = []
    for part in query.split("&") if query else []:
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and secret_key(name) else masked(part))
    return "&".join(parts)


UNPARSED_SECRETS = (*SECRET_SUFFIXES, *WHOLE_KEYS, "apikey", "api_key", "clientsecret", "authorization")
NOT_JSON = object()
MAX_DEPTH = 64      # a body nested deeper is kept as text: json's decoder recurses, and a stored entry is read back


def parsed(text):
    """`text` as JSON, or NOT_JSON when it is none or nests deeper than MAX_DEPTH (a client's pathological body,
    which the API refuses but the journal keeps: parsed, it could not be read back)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON
    if text.count("{") + text.count("[") <= MAX_DEPTH:     # fewer brackets than levels: no walk needed
        return value
    level = [(value, 1)]
    while level:
        node, depth = level.pop()
        if depth > MAX_DEPTH:
            return NOT_JSON
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        level.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return value


def body_record(content_type, raw, limit=BODY_LIMIT):
    """What is kept of a body: parsed JSON redacted (or text with JWTs masked), cut to `limit` characters.

    A body over PARSE_FACTOR x `limit` bytes is not kept at all: redacting it means parsing it whole, which for
    bodies of nested empty containers (refused by the API itself, but journaled) costs many times their size in
    memory; cutting it unparsed could keep a secret unredacted."""
    if not raw:
        return {"contentType": content_type, "body": None, "truncated": False}
    if len(raw) > PARSE_FACTOR * limit:
        return {"contentType": content_type, "body": None, "truncated": True, "bytes": len(raw)}
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    body = None
    if content_type and "json" in content_type:
        value = parsed(text)
        body = None if value is NOT_JSON else redact(value)
    if body is None and content_type and "x-www-form-urlencoded" in content_type:
        text = redact_query(text)
    elif body is None:
        if any(word in text.lower() for word in UNPARSED_SECRETS):
            # Text that is no JSON (a trailing comma, quotes of the wrong kind) cannot be redacted field by field:
            # a secret's name in it is enough not to keep it.
            return {"contentType": content_type, "body": None, "truncated": False, "withheld": True,
                    "bytes": len(raw)}
        text = masked(text)
    if body is not None:
        dumped = json.dumps(body, ensure_ascii=False)
        if len(dumped) <= limit:
            return {"contentType": content_type, "body": body, "truncated": False}
        text = dumped
    return {"contentType": content_type, "body": text[:limit], "truncated": len(text) > limit}


# Text in which `redact` may find something: a key that is a secret's name or ends as one (`accessToken"`), a
# credential, a JWT, or an escape that could spell one. Searched for in the lower-cased text (as str: searching
# bytes takes twice as long): a body with none of them is kept as it came.
SECRET_SHAPED = (*(f'{suffix}"' for suffix in SECRET_SUFFIXES), *(f'"{key}"' for key in SECRET_KEYS), '"credential',
                 "eyj", "\\")


def body_text(content_type, raw, limit=BODY_LIMIT):
    """`body_record` as the JSON text the journal stores. A JSON body of at most `limit` characters with nothing
    secret-shaped in it (most answers) is checked to be JSON and kept verbatim: redacting and dumping it again
    would give the same body."""
    text = "null" if not raw else verbatim(content_type, raw, limit)
    if text is None:
        return json.dumps(body_record(content_type, raw, limit))
    return f'{{"contentType": {json.dumps(content_type)}, "body": {text}, "truncated": false}}'


def verbatim(content_type, raw, limit):
    """The body as its own JSON text, when it is JSON of at most `limit` characters with nothing secret-shaped in
    it; else None."""
    if len(raw) > limit or not content_type or "json" not in content_type or not isinstance(raw, bytes):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lowered = text.lower()
    if any(shape in lowered for shape in SECRET_SHAPED) or parsed(text) is NOT_JSON:
        return None
    return text


def record(store, world_id, *, at, wall, operation, method, path, query, status, latency_us, token_id=None,
           token_kind=None, request=None, response=None, marks=None, limit=LIMIT,
           retention_seconds=RETENTION_SECONDS, started_ns=None, answered_ns=None):
    """Append an entry (bodies through `body_record` or `body_text`) and drop what falls outside retention.
    `started_ns`/`answered_ns` are the machine's monotonic clock (the same for every worker process): when the
    request had arrived whole (the HTTP front's stamp, serving.REQUEST_COMPLETE_NS; without a front, when its
    handling began) and when its answer was ready. The report tells from them which calls were already in
    flight when an answer went out, and how long a client really waited where the world clock stood still."""
    def append():
        with store.transaction():
            if not world_exists(store, world_id):     # deleted while its entries waited
                return None
            seq = next_in_sequence(store, world_id, "journal")
            store.insert("journal", world=world_id, seq=seq, at=at, wall=wall, operation=operation,
                         method=method, path=path, query=redact_query(query), status=status,
                         latency_us=latency_us, token_id=token_id, token_kind=token_kind,
                         request=_text(request), response=_text(response),
                         marks=json.dumps(marks or {}), started_ns=started_ns, answered_ns=answered_ns)
            store.execute("DELETE FROM journal WHERE world = ? AND (seq <= ? OR at < ?)",
                          (world_id, seq - limit, at - retention_seconds * 1_000_000))
        return seq
    return store.retrying(append)


def _text(body):
    """A body as the journal stores it: the JSON text `body_text` made, or a `body_record` dumped here."""
    return body if isinstance(body, str) else json.dumps(body or {})


def record_many(store, world_id, entries):
    """Append a world's entries (each the keyword arguments of `record`, in order) in one statement each for
    their ids, rows and retention: what `record` does for each, for a batch written behind (requeststate.memory)."""
    with store.transaction():
        if not world_exists(store, world_id):     # deleted while its entries waited
            return
        last = next_in_sequence(store, world_id, "journal", len(entries))
        first = last - len(entries) + 1
        store.insert_many(
            "journal", ("world", "seq", "at", "wall", "operation", "method", "path", "query", "status", "latency_us",
                        "token_id", "token_kind", "request", "response", "marks", "started_ns", "answered_ns"),
            [(world_id, first + n, e["at"], e["wall"], e["operation"], e["method"], e["path"],
              redact_query(e["query"]), e["status"], e["latency_us"], e.get("token_id"), e.get("token_kind"),
              _text(e.get("request")), _text(e.get("response")), json.dumps(e.get("marks") or {}),
              e.get("started_ns"), e.get("answered_ns"))
             for n, e in enumerate(entries)])
        limit = min(e.get("limit", LIMIT) for e in entries)
        retention = min(e.get("retention_seconds", RETENTION_SECONDS) for e in entries)
        store.execute("DELETE FROM journal WHERE world = ? AND (seq <= ? OR at < ?)",
                      (world_id, last - limit, max(e["at"] for e in entries) - retention * 1_000_000))


def entry(row, internal=False):
    found = {"id": row["seq"], "at": render(row["at"]), "wallAt": render(row["wall"]),
            "operationId": row["operation"], "method": row["method"], "path": row["path"], "query": row["query"],
            "status": row["status"] or None, "latencyMs": round(row["latency_us"] / 1000, 3),
            "token": {"id": row["token_id"], "kind": row["token_kind"]} if row["token_id"] else None,
            "request": json.loads(row["request"]), "response": json.loads(row["response"]),
            "marks": json.loads(row["marks"])}
    if internal:
        found["monotonic"] = (row["started_ns"], row["answered_ns"])
    return found


def contains(actual, expected):
    """JSON containment: objects match on the keys expected (recursively), anything else on equality."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and contains(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            contains(a, e) for a, e in zip(actual, expected))
    return actual == expected


def status_range(status):
    """(low, high) for 404 or "404", or for a class such as "4xx"; ValueError otherwise."""
    if isinstance(status, float) and status.is_integer():     # JSON's 404.0 is the integer 404
        status = int(status)
    text = str(status).strip().lower()
    if re.fullmatch(r"[1-5]xx", text):
        low = int(text[0]) * 100
        return low, low + 99
    if re.fullmatch(r"[1-5]\d\d", text):
        return int(text), int(text)
    raise ValueError(f"a status is a code such as 404 or a class such as 4xx, not {status!r}")


def _select(store, world_id, operation=None, method=None, path=None, status=None, since=None, until=None,
            token=None, after=None, before=None, order="desc", limit=None):
    where, params = ["world = ?"], [world_id]
    for column, value in (("operation", operation), ("method", method and method.upper()), ("path", path),
                          ("token_id", token)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if status is not None:
        low, high = status_range(status)
        where.append("status BETWEEN ? AND ?")
        params += [low, high]
    for clause, value in (("at >= ?", since), ("at <= ?", until), ("seq > ?", after), ("seq < ?", before)):
        if value is not None:
            where.append(clause)
            params.append(value)
    direction = "ASC" if order == "asc" else "DESC"
    sql = f"SELECT * FROM journal WHERE {' AND '.join(where)} ORDER BY seq {direction}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return store.all(sql, tuple(params))


def entries(store, world_id, *, path_pattern=None, body=None, marked=None, limit=100, internal=False, tools=True,
            **filters):
    """Entries of a world matching every filter given (see the module docstring); `tools=False` leaves out the
    calls of the sandbox's own command line (mark `tool`) unless `marked` asks for them."""
    tools = tools or marked == "tool"
    refine = path_pattern is not None or body is not None or marked is not None or not tools
    rows = _select(store, world_id, limit=None if refine else limit, **filters)
    found = []
    pattern, repeats = path_pattern_of(path_pattern) if path_pattern is not None else (None, 0)
    if pattern is not None:
        for row in rows:        # refused before any matching: an answer is all or nothing
            check_cost(repeats, row["path"])
    for row in rows:
        item = entry(row, internal)
        if pattern is not None and not pattern.search(item["path"]):
            continue
        if body is not None and not contains(item["request"].get("body"), body):
            continue
        if marked is not None and marked not in item["marks"]:
            continue
        if not tools and "tool" in item["marks"]:
            continue
        found.append(item)
        if limit is not None and len(found) >= limit:
            break
    return found


path_pattern_of = path_pattern      # `entries` takes a parameter of that name


def count(store, world_id, **filters):
    """How many entries match (WireMock's verify); the same filters as `entries`, with no limit."""
    return len(entries(store, world_id, limit=None, **filters))


def get(store, world_id, entry_id):
    row = store.one("SELECT * FROM journal WHERE world = ? AND seq = ?", (world_id, entry_id))
    return entry(row) if row else None


def mark(store, world_id, entry_id, key, value):
    """Add or replace one mark of an entry; False when the entry is gone (retention) or of another world."""
    with store.transaction():
        row = store.one("SELECT marks FROM journal WHERE world = ? AND seq = ?", (world_id, entry_id))
        if row is None:
            return False
        marks = json.loads(row["marks"])
        marks[key] = value
        store.update("journal", {"world": world_id, "seq": entry_id}, marks=json.dumps(marks))
    return True


def annotate(key, value):
    """Mark the entry of the request being handled (a no-op outside a recorded request)."""
    marks = PENDING_MARKS.get()
    if marks is not None:
        marks[key] = value
