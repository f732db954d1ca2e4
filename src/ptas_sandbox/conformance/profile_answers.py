"""Learning how a deployment dresses its answers, beside the names and shapes of its records (profile_learn.py):
the headers it sends with one value on every answer, what a path the spec removed answers, whether it sends the
null members the spec does not name or leaves them out, the JSON type of each record member, the form of an
invalid body's `errors` and the members its document gives a problem.

Each rule reads what the run met (`Traffic`: every answer the suites and the probes got, seen as they came) or
the answers the probes observed, and compares it with the simulator's own document; it returns the choice's value
and a sentence saying it, or None where what was seen does not tell.
"""

import json
import re

from ptas_sandbox import openapi_reading
from ptas_sandbox import profile as profiles

from .bodies import json_type, types_of
from .client import Exchange, parse_json
from .resolver import CONTROL_PREFIX, NotOffered, shape

# Headers of one message or of its connection, never a deployment's standing choice (RFC 9110, RFC 9112):
# framing and transport, the moment, the content and its validators, cookies, the keys of caches; and the ones
# the simulator sends itself in their situations (a 401's challenge, a 405's methods, a 429's wait), which it
# keeps. Values that change between answers (request ids, remaining budgets) fall out on their own.
PER_MESSAGE = frozenset((
    "date", "content-length", "content-type", "content-encoding", "content-language", "content-range",
    "connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "via", "alt-svc", "server",
    "strict-transport-security", "etag", "last-modified", "expires", "age", "set-cookie", "vary", "location",
    "www-authenticate", "allow", "retry-after"))
# How many answers of the API the run must have met before a header on every one of them is the deployment's
# rule rather than chance.
ENOUGH_ANSWERS = 20
SCALARS = {"string", "number", "integer", "boolean"}
# The simulator's own `errors` of an invalid body: a list of {pointer, detail}.
SIMULATOR_ERRORS = {"form": "list", "keys": "pointer", "pointer": "pointer", "detail": "detail"}


class Traffic:
    """What every answer the run met says beside its body, kept as it passes (nothing else of it is held): the
    headers every answer of the API carried with one value, and the first answers to the paths the spec removed.
    Answers of the API are those of the operations the target's document offers, and of the removed paths."""

    def __init__(self, operations):
        # The paths spec §4.2 note 6 removed that no operation of the spec shares, as the simulator knows them.
        from ptas_sandbox.simulator.app import REMOVED
        shapes = sorted({shape(p) for _, p, _ in operations.entries if CONTROL_PREFIX + "/" not in p + "/"})
        self.api = re.compile("^(?:" + "|".join(re.escape(s).replace(re.escape("{}"), "[^/]+")
                                                 for s in shapes) + ")$") if shapes else None
        self.removed = [(method, re.compile(r"^(?:/.*)?" + path + "$")) for method, path in REMOVED]
        self.answers = 0
        self.constant = None        # {header: value} every answer of the API so far carried
        self.example = None         # the first answer of the API, as evidence
        self.gone = []              # the first answers to removed paths

    def saw(self, method, path, status, headers, text):
        path = path.split("?")[0]
        removed = any(m in (None, method) and pattern.match(path) for m, pattern in self.removed)
        if not removed and not (self.api and self.api.match(path)):
            return
        if removed and len(self.gone) < 8:
            self.gone.append(Exchange(method, path, status, headers, text, parse_json(text)))
        sent = {k: v for k, v in headers.items() if k not in PER_MESSAGE}
        self.constant = sent if self.constant is None else \
            {k: v for k, v in self.constant.items() if sent.get(k) == v}
        self.answers += 1
        if self.example is None:
            self.example = Exchange(method, path, status, headers, text, parse_json(text))


def constant_headers(traffic, operations):
    """The headers the deployment sends with one value on every answer of its API, each with where its document
    lists it (`documented`: the status codes, `*` for every response of every operation) and the schema it gives;
    None when the run met too few answers to tell."""
    if traffic.answers < ENOUGH_ANSWERS:
        return None
    found = {}
    for name, value in sorted((traffic.constant or {}).items()):
        spelled, codes, schema = documented_header(operations, name)
        found[spelled] = {"value": value, **({"documented": codes} if codes else {}),
                          **({"schema": schema} if schema else {})}
    says = ("every answer carries " + "; ".join(f"{k}: {v['value']}" for k, v in found.items())) if found else \
        f"no header beyond the message's own is sent on every answer ({traffic.answers} answers met)"
    return found, says


def documented_header(operations, name):
    """(the header's name as the document spells it, the status codes under which every operation that answers
    them lists it, or `*` where every response lists it, the schema it gives) of a header in the target's
    document."""
    document, spelled, schema = operations.document, "-".join(p.capitalize() for p in name.split("-")), None
    listed: dict[str, int] = {}
    answered: dict[str, int] = {}
    for _, path, op in operations.entries:
        if CONTROL_PREFIX + "/" in path + "/":
            continue
        for code, response in (op.get("responses") or {}).items():
            headers = (openapi_reading.deref(document, response) or {}).get("headers") or {}
            mine = next((k for k in headers if k.lower() == name), None)
            answered[str(code)] = answered.get(str(code), 0) + 1
            if mine is not None:
                listed[str(code)] = listed.get(str(code), 0) + 1
                spelled = mine
                schema = schema or openapi_reading.deref(document, headers[mine]).get("schema")
    codes = sorted(code for code, count in listed.items() if count == answered[code])
    if codes and listed == answered:
        codes = ["*"]
    return spelled, codes, schema


def removed_status(traffic):
    """The status the paths the spec removed answer (§4.2 note 6 says they are removed, not how), where every
    one the run called answered the same."""
    statuses = {reply.status for reply in traffic.gone if not reply.ok}
    if len(statuses) != 1:
        return None
    status = statuses.pop()
    return {"status": status}, f"a path the spec removed answers {status}"


def null_members(observed, sim):
    """Whether the deployment sends null members the spec does not name (profile.SPEC_MEMBERS) or leaves them out:
    "sent" at the first such null; "omitted" where it sent none and left out a member the simulator's schema
    lets be null, one it showed with a value in another record of the same kind. None where nothing told."""
    valued: set[tuple] = set()          # (record, member) shown with a value
    left_out: dict[tuple, dict] = {}    # (record, member) left out, with the evidence of the first
    for schema, body, seen, *_ in observed:
        for component, member, record, key, sub in openapi_reading.members(sim, schema, body, absent=True):
            if component is None or profiles.spec_names(component, member):
                continue
            if key not in record:
                if "null" in types_of(openapi_reading.deref(sim, sub) or {}):
                    left_out.setdefault((component, member), seen)
            elif record[key] is None:
                return "sent", f"null members are sent ({component} {member})", seen
            else:
                valued.add((component, member))
    shown = [pair for pair in left_out if pair in valued]
    if not shown:
        return None
    return "omitted", ("members the spec does not name are left out when null (" +
                       ", ".join(f"{c} {m}" for c, m in shown[:4]) + ")"), left_out[shown[0]]


LEFT_OUT_SEEN = 3       # records of a kind without a member, none with it, before it counts as never answered
ONLY_SOME_SEEN = 2      # records without a member, from operations that never answer it, where others do


def countable_members(observed, sim):
    """(record, member, shown, evidence, operation) for each member of each record the deployment answered that
    could tell a member left out: one the spec does not name (profile.SPEC_MEMBERS), declared by the simulator's
    schema and never null there (the `nulls` choice's otherwise), of the record itself (`statistics.first` is the
    record's own). A record holding a member the simulator does not declare may name one of its own members
    otherwise (a rename, `records`): its missing members tell nothing."""
    for schema, body, seen, operation in observed:
        walked = list(openapi_reading.members(sim, schema, body, absent=True))
        renamed = {id(record) for component, _, record, _, sub in walked if sub is None}
        for component, member, record, key, sub in walked:
            if component is None or sub is None or "." in member or "[" in member or \
                    profiles.spec_names(component, member):
                continue
            if key in record:
                yield component, member, True, seen, operation
            elif id(record) not in renamed and "null" not in types_of(openapi_reading.deref(sim, sub) or {}):
                yield component, member, False, seen, operation


def members_left_out(observed, sim):
    """{record: [member]}: countable members (countable_members) the deployment left out of every record it
    answered that declares a member of that name, LEFT_OUT_SEEN of them at least in all (write-only credentials:
    an account as read and as a create answers it); and the evidence of the first."""
    shown: set[str] = set()                 # members the deployment answered, in any record
    absent: dict[tuple, list] = {}          # (record, member) -> the evidence of the records that lacked it
    for component, member, present, seen, _ in countable_members(observed, sim):
        if present:
            shown.add(member)
        else:
            absent.setdefault((component, member), []).append(seen)
    lacking: dict[str, int] = {}
    for (_, member), seen in absent.items():
        lacking[member] = lacking.get(member, 0) + len(seen)
    found: dict[str, list] = {}
    evidence = []
    for (component, member), seen in sorted(absent.items()):
        if member not in shown and lacking[member] >= LEFT_OUT_SEEN:
            found.setdefault(component, []).append(member)
            evidence.append(seen[0])
    return found, evidence


def members_left_out_by_operation(observed, sim):
    """{operation: {record: [member]}}: countable members (countable_members) that some operations' answers carry
    and others' never do, ONLY_SOME_SEEN records at least lacking it in all (a webhook's secret in the create's
    answer alone: a read and a list without it); and the evidence of the first."""
    shown: dict[tuple, set] = {}            # (record, member) -> the operations that answered it
    absent: dict[tuple, dict] = {}          # (record, member) -> {operation: [evidence of the records lacking it]}
    for component, member, present, seen, operation in countable_members(observed, sim):
        if present:
            shown.setdefault((component, member), set()).add(operation)
        else:
            absent.setdefault((component, member), {}).setdefault(operation, []).append(seen)
    found: dict[str, dict] = {}
    evidence = []
    for (component, member), lacking in sorted(absent.items()):
        answered = shown.get((component, member), set())
        never = {op: seen for op, seen in lacking.items() if op not in answered}
        if answered and sum(len(seen) for seen in never.values()) >= ONLY_SOME_SEEN:
            for operation, seen in sorted(never.items()):
                found.setdefault(operation, {}).setdefault(component, []).append(member)
                evidence.append(seen[0])
    return found, evidence


def member_types(observed, sim, operations):
    """{record: {member: {"type", "fractionDigits", "schema"}}} where every value the deployment showed of a member
    has another JSON type than the simulator's schema gives it, and converts to it without loss (a number as a
    decimal string, an integer as a string of digits, a boolean as "true"/"false", and back), with the schema the
    target's document gives it; and the evidence of each. Ids are the `ids` choice's."""
    values: dict[tuple, tuple] = {}     # (record, member) -> (the simulator's type, the values shown, evidence)
    for schema, body, seen, *_ in observed:
        for component, member, record, key, sub in openapi_reading.members(sim, schema, body):
            if component is None or sub is None or record.get(key) is None or key == "id" or \
                    key in profiles.KEY_KIND:
                continue
            mine = types_of(openapi_reading.deref(sim, sub) or {}) - {"null"}
            if len(mine) == 1 and mine <= SCALARS:
                values.setdefault((component, member), (mine.pop(), [], seen))[1].append(record[key])
    found: dict[str, dict] = {}
    evidence = []
    for (component, member), (mine, shown, seen) in values.items():
        kind = converted(mine, shown)
        if kind:
            schema = documented_type(sim, operations, (component, member))
            found.setdefault(component, {})[member] = {**kind, **({"schema": schema} if schema else {})}
            evidence.append(seen)
    return found, evidence


def converted(mine, shown):
    """The deployment's type of a member the simulator types `mine`, where every value shown has it and converts
    without loss; None where it is the simulator's type."""
    theirs = {json_type(v) for v in shown}
    if theirs == {"integer", "number"}:
        theirs = {"number"}
    if len(theirs) != 1:
        return None
    theirs_type = theirs.pop()
    if theirs_type == mine or (mine, theirs_type) == ("number", "integer"):
        return None
    if mine in ("number", "integer") and theirs_type == "string" and all(profiles.DECIMAL.fullmatch(v) for v in shown):
        digits = {len(v.partition(".")[2]) for v in shown}
        if mine == "integer" and digits != {0}:
            return None
        return {"type": "string", "fractionDigits": digits.pop() if len(digits) == 1 else None}
    if mine == "boolean" and theirs_type == "string" and set(shown) <= {"true", "false"}:
        return {"type": "string"}
    if mine == "string" and theirs_type in ("number", "integer", "boolean"):
        return {"type": theirs_type}
    return None


def documented_type(sim, operations, wanted):
    """The schema the target's document gives a record member (`wanted`: (record, member)), from the answer of an
    operation that holds it."""
    for name, (_, _, op) in sorted(openapi_reading.operations(sim).items()):
        try:
            theirs = operations.response_schema(name)
        except NotOffered:
            continue
        found = documented_member(sim, openapi_reading.success(op)[1], operations.document, theirs, wanted)
        if found is not None:
            return found
    return None


def documented_member(sim, mine, document, theirs, wanted, owner=None, path="", depth=0):
    """The target document's schema of a record member (`wanted`: (record, member)), found by walking its response
    schema beside the simulator's; None where the two part."""
    if depth > 10 or not isinstance(mine, dict) or not isinstance(theirs, dict):
        return None
    if "$ref" in mine:
        owner, path = mine["$ref"].rsplit("/", 1)[-1], ""
        mine = openapi_reading.deref(sim, mine)
    theirs = openapi_reading.deref(document, theirs)
    for key, sub in (mine.get("properties") or {}).items():
        other = (theirs.get("properties") or {}).get(key)
        member = f"{path}.{key}" if path else key
        if not isinstance(other, dict):
            continue
        if (owner, member) == wanted:
            return openapi_reading.deref(document, other)
        found = documented_member(sim, sub, document, other, wanted, owner, member, depth + 1)
        if found is not None:
            return found
    if isinstance(mine.get("items"), dict) and isinstance(theirs.get("items"), dict):
        return documented_member(sim, mine["items"], document, theirs["items"], wanted, owner, path + "[]",
                                 depth + 1)
    return None


def errors_form(errors, member):
    """The form of the `errors` a problem gives for a body whose `member` broke the schema: an object of member
    paths (`name`, `redirectUrls[0]`) or JSON pointers to a list of messages or to one (ASP.NET Core's
    ValidationProblemDetails), or a list of entries naming the place and the message (the simulator's
    {pointer, detail}, under the deployment's member names). None for another form."""
    def keys(where):
        return "pointer" if str(where).startswith("/") else "path"
    if isinstance(errors, dict) and errors:
        lists = all(isinstance(v, list) and all(isinstance(m, str) for m in v) for v in errors.values())
        strings = all(isinstance(v, str) for v in errors.values())
        if lists or strings:
            return {"form": "object", "keys": keys(next(iter(errors))), "messages": "list" if lists else "string"}
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        entry = errors[0]
        where = next((k for k, v in entry.items() if v in (member, "/" + member)), None)
        detail = next((k for k, v in entry.items() if k != where and isinstance(v, str)), None)
        if where and detail:
            return {"form": "list", "keys": keys(entry[where]), "pointer": where, "detail": detail}
    return None


def describe_errors(form):
    if form["form"] == "object":
        return (f"an object of {'JSON pointers' if form['keys'] == 'pointer' else 'member paths'} to "
                f"{'lists of messages' if form['messages'] == 'list' else 'a message'}")
    return f"a list of {{{form['pointer']}, {form['detail']}}}"


def problem_properties(operations, sim, name="CreateUser"):
    """The members the target's document gives a problem (the schema of an invalid body's answer to `name`),
    where they are not the simulator's ProblemDetails'."""
    try:
        responses = operations.locate(name)[2].get("responses") or {}
    except NotOffered:
        return None
    document = operations.document
    for code, response in sorted(responses.items(), key=lambda item: str(item[0])):
        if not str(code).startswith("4"):
            continue
        content = (openapi_reading.deref(document, response) or {}).get("content") or {}
        schema = openapi_reading.deref(document, next((m.get("schema") for m in content.values()
                                                        if isinstance(m, dict) and m.get("schema")), None) or {})
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(properties, dict) and properties:
            theirs = {k: openapi_reading.deref(document, v) for k, v in properties.items()}
            mine = sim["components"]["schemas"]["ProblemDetails"].get("properties") or {}
            return None if json.dumps(theirs, sort_keys=True) == json.dumps(mine, sort_keys=True) else theirs
    return None
