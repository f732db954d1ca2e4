"""Learning a deployment profile: the choices a target made where the spec is silent, each with its evidence.

The run's own target and token are used for a short series of probes after the suites (about 30 requests,
paced like the rest of the run): each probe is built to observe one choice, in the target's own words (its
document's paths, operationIds and field names, found as the harness finds them), and the probes delete or
revoke what they made. What the target answers is compared with what the simulator's own document says of the
same operation, so a choice is recorded only where the target differs or shows the same explicitly; what could
not be observed goes under `unknown`, with why.
"""

import json
import re
import uuid
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

from ptas_sandbox import openapi_reading
from ptas_sandbox import profile as profiles

from . import profile_answers as answers
from .bodies import Bodies, NoSchema, identifier, json_type, place
from .client import Exchange, http_date, parse_json
from .redact import excerpt, redact
from .resolver import NotOffered, shape
from .steps.account_types import form_for

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# Response headers worth keeping as evidence (the rest is the target's plumbing).
HEADERS = ("content-type", "location", "retry-after", "ratelimit", "ratelimit-policy", "ratelimit-limit",
           "ratelimit-remaining", "ratelimit-reset", "x-ratelimit-limit", "x-ratelimit-remaining",
           "x-ratelimit-reset")
# A value of each JSON type, standing for a property a document shows (only its type matters).
SAMPLES = {"string": "", "integer": 0, "number": 0.0, "boolean": False, "array": [], "object": {}}
ID_KEY = re.compile(r"(Id|ID|_id|Ref|Reference|Key)$")
# The list operations whose entries the probes can compare with the detail record, by the detail's operation.
LISTS = {"GetUsers": "GetUser", "GetWebhooks": "GetWebhook", "GetPartners": "GetPartner",
         "GetAccountTypes": "GetAccountType", "GetOwnPartnerTokens": None, "GetAccounts": "GetAccount"}
CREATES = ("CreateUser", "CreateWebhook", "CreatePartner", "CreateOwnPartnerToken", "CreatePartnerToken")
DELETES = ("DeleteUser", "DeleteWebhook", "DeleteChildPartner")
REVOKES = ("RevokePartnerOwnToken", "RevokePartnerToken")
# The choices a default run does not observe, and why: each would take requests a partner's staging system should
# not be sent to learn it, and the simulator keeps its own choice.
UNSEEN = {
    "operationLimits": "an operation's own rate limit (spec §8: values not shown) is met only by spending it, and "
                       "the run stays under every limit on purpose",
    "repeatedRevocation": "the run revokes each token once; a token already revoked is not revoked again",
    "pageSizeBeyond": "the run asks for no page larger than the largest a deployment serves (refused or served "
                      "smaller); where the target's document bounds the page size, the bound is learned "
                      "(operations: bounds)",
}
# The names of three records a probe makes, in this order: their name order (ignoring case) is neither the order
# they were made in nor its reverse, nor the order of their code points.
NAMES = ("ptas profile b", "ptas profile C", "ptas profile a")


def simulator_document():
    """The simulator's own document: what each operation answers when no profile says otherwise."""
    from ptas_sandbox.simulator import create_app
    app = create_app({"STATE": ":memory:", "START_SERVICES": False})
    try:
        response = app.test_client().get("/openapi.json")
        return json.loads(response.get_data(as_text=True))
    finally:
        app.extensions["ptas"].close()


SECRET_KEYS = re.compile(r"token|secret|password|credential|apikey|key$|authorization|settings", re.I)


def scrub(value, depth=0):
    """A body fit for a profile: no token, secret or credential (whatever its form: a deployment's tokens may be
    opaque), lists cut to their first three entries."""
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        return {k: ("<redacted>" if SECRET_KEYS.search(k) and isinstance(v, str) and v else
                    scrub(v, depth + 1)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, depth + 1) for v in value[:3]] + ([f"… {len(value) - 3} more"] if len(value) > 3 else [])
    if isinstance(value, str):
        return redact(value)
    return value


def evidence(reply, body=None):
    """The request and the response, tokens and secrets left out, bodies cut to what a person reads."""
    request = {"method": reply.method, "path": redact(reply.path)}
    if body is not None:
        request["body"] = scrub(body)
    headers = {k: redact(v) for k, v in reply.headers.items() if k in HEADERS}
    shown = scrub(reply.body) if reply.body is not None else excerpt(reply.text, 200)
    return {"request": request, "response": {"status": reply.status, "headers": headers, "body": shown}}


class Learner:
    def __init__(self, target, token=None, sim_document=None, recorder=None):
        self.target = target
        self.recorder = recorder
        self.client = target.client()
        self.token = token
        self.ops = target.operations
        self.bodies = Bodies(self.ops)
        self.sim = sim_document or simulator_document()
        self.sim_ops = openapi_reading.operations(self.sim)
        self.profile = profiles.new(redact(target.name))
        self.seen = {}              # component -> [(context, keys, record, evidence)]
        self.observed = []          # (the simulator's schema, a record as the target answered it, evidence, operation)
        self.undo = []

    # -- recording ------------------------------------------------------------------------------------------
    def know(self, name, value, says, *seen):
        self.profile["choices"][name] = {"value": value, "says": says, "evidence": [s for s in seen if s]}
        self.profile["unknown"].pop(name, None)

    def unknown(self, name, why):
        if name not in self.profile["choices"]:
            self.profile["unknown"].setdefault(name, why)

    def call(self, name, params=None, json=None, token=None, build=None):
        """Call an operation by the spec's name; `build` are spec words placed on the target's own fields."""
        if build is not None:
            json = self.bodies.build(name, build)
        kwargs = {} if json is None else {"json": json}
        reply = self.client.call(name, token=token or self.token, params=params, **kwargs)
        return reply, evidence(reply, json)

    # -- the simulator's side -------------------------------------------------------------------------------
    def deref(self, node):
        return openapi_reading.deref(self.sim, node)

    def sim_response(self, name):
        """(status, schema) of the simulator's success answer to an operation."""
        return openapi_reading.success(self.sim_ops[name][2])

    def list_key(self, name):
        """The property of the simulator's list answer that holds the entries (`users`), and their schema."""
        _, schema = self.sim_response(name)
        properties = self.deref(schema or {}).get("properties", {})
        key = next((k for k, v in properties.items() if v.get("type") == "array"), None)
        return key, (properties.get(key) or {}).get("items")

    # -- records --------------------------------------------------------------------------------------------
    def observe(self, name, reply, seen, context="record"):
        """Walk a success answer along the simulator's schema of the same operation, noting the keys of each
        record (by the simulator's component name)."""
        if not reply.ok or reply.body is None or name not in self.sim_ops:
            return
        _, schema = self.sim_response(name)
        if name in LISTS:
            _, items = self.list_key(name)
            for entry in entries_of(reply.body) or []:
                self.walk(items, entry, seen, name)
                self.observed.append((items, entry, seen, name))
            return
        self.walk(schema, reply.body, seen, name)
        self.observed.append((schema, reply.body, seen, name))

    def walk(self, schema, value, seen, operation):
        """Note the keys of every record of `value` under (operation, the simulator's component name)."""
        if not isinstance(schema, dict):
            return
        component = schema["$ref"].rsplit("/", 1)[-1] if "$ref" in schema else None
        schema = self.deref(schema)
        if isinstance(value, dict):
            if component:
                self.seen.setdefault((operation, component), []).append((list(value), value, seen))
            for key, sub in (schema.get("properties") or {}).items():
                if key in value:
                    self.walk(sub, value[key], seen, operation)
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for entry in value:
                self.walk(schema["items"], entry, seen, operation)

    def renames(self):
        """Per operation and component: the simulator's property -> the target's, where the target names it
        otherwise. A record may leave out properties that are null, so a one-for-one rename (one property
        missing, one extra, of the same type) is judged over every answer of the component."""
        pairs = {}
        by_component = {}
        for (operation, component), observations in self.seen.items():
            by_component.setdefault(component, []).extend(observations)
        for component, observations in by_component.items():
            found, missing, extra, values, properties = self.matches(component, observations)
            left_missing = [m for m in missing if m not in found]
            left_extra = [k for k in extra if k not in found.values()]
            if len(left_missing) == 1 and len(left_extra) == 1 and \
                    json_type(values[left_extra[0]]) in types_of(properties[left_missing[0]]):
                pairs[component] = (left_missing[0], left_extra[0])
        out, evidence_of = {}, {}
        for (operation, component), observations in self.seen.items():
            found, missing, extra, _, _ = self.matches(component, observations)
            pair = pairs.get(component)
            if pair and pair[0] in missing and pair[1] in extra:
                found[pair[0]] = pair[1]
            out.setdefault(operation, {})[component] = found      # {}: observed, named as the simulator's
            if found:
                evidence_of[operation] = observations[0][2]
        return out, evidence_of

    def matches(self, component, observations):
        properties = self.deref({"$ref": f"#/components/schemas/{component}"}).get("properties", {})
        keys, values = [], {}
        for seen_keys, record, _ in observations:
            for key in seen_keys:
                if key not in keys:
                    keys.append(key)
                    values[key] = record[key]
        missing = [p for p in properties if p not in keys]
        extra = [k for k in keys if k not in properties]
        found = {}
        if "id" in missing:
            ids = [k for k in extra if ID_KEY.search(k) and isinstance(values[k], (str, int))]
            if len(ids) == 1:
                found["id"] = ids[0]
        for name in missing:
            if name in found:
                continue
            left = {k: {"type": json_type(values[k])} for k in extra if k not in found.values()}
            target = place(left, name, None, set())
            if target:
                found[name] = target
        return found, missing, extra, values, properties

    # -- the probes -----------------------------------------------------------------------------------------
    def learn(self):
        steps = (self.operations, self.partner_and_put, self.users, self.problems, self.webhooks, self.partners,
                 self.account_types, self.accounts, self.passive, self.dressing, self.records)
        try:
            for step in steps:
                try:
                    step()
                except (NotOffered, NoSchema) as error:
                    self.profile.setdefault("notes", []).append(f"{step.__name__}: {redact(error)}")
        finally:
            self.clean_up()
        for name, why in UNSEEN.items():
            self.unknown(name, why)
        for name in profiles.CHOICES:
            self.unknown(name, "no probe observed it (see notes)")
        return self.profile

    def clean_up(self):
        for action in reversed(self.undo):
            try:
                action()
            except Exception:       # noqa: BLE001 - clean-up is best effort on a shared target
                pass
        self.undo.clear()

    def operations(self):
        """Where each service operation lives in the target's document, and its request field names."""
        found, missing = {}, []
        for name, (method, path, sim_op) in sorted(self.sim_ops.items()):
            if not path.startswith("/partner/v2") or "/pages/" in path or "/consent/" in path:
                continue
            try:
                doc_method, template, spec = self.ops.locate(name)
            except NotOffered:
                missing.append(name)
                continue
            raw = next((p for m, p, s in self.ops.entries if s is spec and m == doc_method), template)
            entry = {"method": doc_method, "path": raw, "operationId": spec.get("operationId") or name}
            fields = self.field_names(name, sim_op)
            if fields:
                entry["fields"] = fields
            entry.update(self.query_parameters(sim_op, spec))
            found[name] = entry
        changed = {n: e for n, e in found.items() if e["operationId"] != n or e["path"] != self.sim_ops[n][1]
                   or e.get("fields") or e.get("parameters") or e.get("bounds")}
        says = (f"{len(found)} operations found in the target's document; {len(changed)} named or placed "
                f"otherwise than the simulator's" + (f"; not in it: {', '.join(missing)}" if missing else ""))
        self.know("operations", found, says, {"document": "/openapi.json"})

    def query_parameters(self, sim_op, spec):
        """The query parameters the target's document names otherwise (`limit` for the simulator's `pageSize`: one
        of the simulator's missing, one of the target's extra, of the same type) and the bounds it sets that the
        simulator's do not (a smaller maximum), or leaves out (None: no maximum)."""
        def query(op, document):
            return {p.get("name"): openapi_reading.deref(document, p.get("schema") or {}) for p in
                    (openapi_reading.deref(document, p) for p in op.get("parameters") or [])
                    if isinstance(p, dict) and p.get("in") == "query"}
        mine, theirs = query(sim_op, self.sim), query(spec, self.ops.document)
        missing = [n for n in mine if n not in theirs]
        extra = [n for n in theirs if n not in mine]
        renames = {}
        if len(missing) == 1 and len(extra) == 1 and mine[missing[0]].get("type") == theirs[extra[0]].get("type"):
            renames[missing[0]] = extra[0]
        bounds = {}
        for name, schema in mine.items():
            other = theirs.get(renames.get(name, name))
            for bound in ("maximum", "minimum") if isinstance(other, dict) else ():
                if isinstance(other.get(bound), int) and other.get(bound) != schema.get(bound):
                    bounds.setdefault(name, {})[bound] = other[bound]
                elif bound not in other and bound in schema:        # the target's document sets none
                    bounds.setdefault(name, {})[bound] = None
        return {**({"parameters": renames} if renames else {}), **({"bounds": bounds} if bounds else {})}

    def field_names(self, name, sim_op):
        """The simulator's request property -> the target's, where they differ."""
        schema = ((sim_op.get("requestBody") or {}).get("content") or {}).get("application/json", {}).get("schema")
        properties = self.deref(schema or {}).get("properties") or {}
        out = {}
        for prop in properties:
            try:
                theirs = self.bodies.placement(name, prop)
            except NoSchema:
                return {}
            if theirs and theirs != prop:
                out[prop] = theirs
        return out

    def partner_and_put(self):
        own, seen = self.call("GetOwnPartner")
        self.observe("GetOwnPartner", own, seen)
        if not own.ok or not isinstance(own.body, dict):
            self.unknown("put", f"GetOwnPartner answered {own.status}")
            return
        email = own.body.get("email") or own.body.get(self.bodies.placement("UpdatePartner", "email") or "email")
        probe_email = "ptas-profile@example.test"
        partial, seen = self.call("UpdatePartner", build={"email": probe_email})
        if partial.ok:
            after, _ = self.call("GetOwnPartner")
            name_key = next((k for k in ("name", "displayName") if k in own.body), "name")
            kept = isinstance(after.body, dict) and after.body.get(name_key) == own.body.get(name_key)
            value = {"mode": "merge" if kept else "replace", "partialStatus": partial.status}
            says = ("PUT merges: properties left out of the body keep their values" if kept else
                    "PUT replaces the record: properties left out of the body are cleared")
        else:
            self.problem("partial-put", partial, seen)
            value = {"mode": "replace", "partialStatus": partial.status}
            says = f"PUT replaces the record: a body that leaves out a property is refused ({partial.status})"
        self.know("put", value, says, seen)
        if partial.ok:       # put the email back as it was, with the whole record
            body = self.bodies.writable("UpdatePartner", {**own.body, "email": email}, nulls=True)
            self.client.call("UpdatePartner", token=self.token, json=body)

    def users(self):
        made = []
        for label in NAMES:
            build = {"name": label, "email": "ptas-profile@example.test"} if not made else {"name": label}
            reply, seen = self.call("CreateUser", build=build)
            if not reply.ok:
                self.unknown("createStatus", f"CreateUser answered {reply.status}")
                return
            user_id = identifier(reply.body, *self.ops.hints("GetUser"))
            made.append((user_id, reply, seen))
            if user_id is not None:
                self.undo.append(lambda uid=user_id: self.delete("DeleteUser", {"id": uid}, record=True))
        (first, created, seen), (second, _, _) = made[:2]
        self.status("createStatus", "CreateUser", created, seen)
        token = created.body.get("token") if isinstance(created.body, dict) else None
        if isinstance(token, str):
            self.know("userToken", "string", "CreateUser answers the first user token as the token itself (a string)",
                      seen)
        elif isinstance(token, dict):
            self.know("userToken", "object", "CreateUser answers the first user token as a token record", seen)
            self.observed.append((self.sim_response("CreateUser")[1], json.loads(json.dumps(created.body)), seen,
                                  "CreateUser"))
            created.body.pop("token")     # its record is the Token component's: observed on its own
            self.walk(self.sim_response("CreateUser")[1], created.body, seen, "CreateUser")
            self.walk({"$ref": "#/components/schemas/Token"}, token, seen, "CreateUser")
        self.ids(first, seen)
        detail, seen_detail = self.call("GetUser", params={"id": first})
        self.observe("GetUser", detail, seen_detail)
        listed, seen_list = self.call("GetUsers")
        self.list_shape("GetUsers", listed, seen_list)
        self.observe("GetUsers", listed, seen_list)
        self.named_order("GetUsers", listed, [m[0] for m in made], "GetUser", seen_list)
        self.name_filter(NAMES[0])
        self.user, self.made_users = first, [m[0] for m in made]
        self.put_clearing(first)

    def named_order(self, name, listed, made, reader, seen):
        """Where three records a probe made, named so that their name order is neither their creation order nor
        its reverse, stand in a list: oldest or newest first, or by name (ignoring case, as people sort)."""
        ids = [identifier(e, *self.ops.hints(reader)) for e in entries_of(listed.body) or []]
        if len(made) < 3 or not all(m in ids for m in made):
            return
        shown = sorted(range(3), key=lambda i: ids.index(made[i]))
        way = {(0, 1, 2): "oldest first", (2, 1, 0): "newest first"}.get(tuple(shown))
        if way is None and [NAMES[i] for i in shown] == sorted(NAMES, key=str.casefold):
            way = "by name"
        if way is None:
            return
        entry = self.profile["choices"].setdefault("listOrder", {"value": {}, "says": "", "evidence": []})
        entry["value"][name] = way
        entry["evidence"].append(seen)
        entry["says"] = "; ".join(f"{op} shows the {way}" if "first" in way else f"{op} is sorted {way}"
                                  for op, way in entry["value"].items())
        self.profile["unknown"].pop("listOrder", None)

    def name_filter(self, label):
        """How GetUsers' `name` matches: the whole name exactly, or ignoring case."""
        exact, _ = self.list_named(label)
        other, seen = self.list_named(label.swapcase())
        if not exact.ok or not other.ok or len(entries_of(exact.body) or []) != 1:
            return
        matching = "ignores case" if len(entries_of(other.body) or []) == 1 else "exact"
        self.know("filters", {"GetUsers": {"name": matching}},
                  f"GetUsers' name filter matches the whole name{' ignoring case' if matching != 'exact' else ''}",
                  seen)

    def list_named(self, label):
        reply = self.client.call("GetUsers", token=self.token, query={"name": label})
        return reply, evidence(reply)

    def put_clearing(self, user):
        """UpdateUser with the name only, on a user that has an email: kept (merge), cleared, or refused."""
        before, _ = self.call("GetUser", params={"id": user})
        email_key = self.bodies.placement("UpdateUser", "email") or "email"
        if not before.ok or not isinstance(before.body, dict) or not before.body.get(email_key):
            return
        partial, seen = self.call("UpdateUser", params={"id": user}, build={"name": NAMES[0] + " again"})
        entry = self.profile["choices"].get("put")
        if entry is None:
            return
        if partial.ok:
            after, _ = self.call("GetUser", params={"id": user})
            kept = isinstance(after.body, dict) and after.body.get(email_key) == before.body.get(email_key)
            value = {"mode": "merge" if kept else "replace", "partialStatus": partial.status}
        else:
            value = {"mode": "replace", "partialStatus": partial.status}
        if value["mode"] != entry["value"].get("mode") or value["partialStatus"] != entry["value"].get("partialStatus"):
            entry["value"].setdefault("operations", {})["UpdateUser"] = value      # its own rule, told apart
            entry["evidence"].append(seen)
            entry["says"] += ("; UpdateUser " + ("merges" if value["mode"] == "merge" else "clears what a body leaves "
                              "out" if partial.ok else f"refuses a partial body ({partial.status})"))

    def ids(self, record_id, seen):
        fmt = "uuid" if isinstance(record_id, str) and UUID.match(record_id) else "other"
        malformed, seen_bad = self.call("GetUser", params={"id": "not-an-id"})
        self.problem("malformed-id", malformed, seen_bad)
        value = {"format": fmt, "malformedStatus": malformed.status}
        says = f"ids are {'UUIDs' if fmt == 'uuid' else 'not UUIDs'}; a malformed id answers {malformed.status}"
        order, seen_order = self.check_order(malformed.status) if malformed.status not in (401, 403, 404) else ({}, [])
        if order:
            value["checks"] = order
            says += "; the id's form is checked " + ", ".join(
                f"{'before' if first else 'after'} the {what}" for what, first in
                (("token", order.get("beforeToken")), ("scope", order.get("beforeScope"))) if first is not None)
        self.know("ids", value, says, seen, seen_bad, *seen_order)

    def check_order(self, status):
        """Which the deployment checks first, where a malformed id has an answer of its own: the id's form or
        the token (a malformed id with no token), the id's form or the scope (with a token lacking GetUser's
        scope)."""
        order, seen = {}, []
        method, path = self.ops.resolve("GetUser", {"id": "not-an-id"})
        bare = self.client.request(method, path, operation="GetUser")
        if bare.status in (status, 401):
            order["beforeToken"] = bare.status == status
            seen.append(evidence(bare))
        narrow, _ = self.call("CreateOwnPartnerToken", build={"name": "ptas profile narrow", "scope": "partner:read",
                                                              "expiresIn": 3600})
        secret = narrow.body.get("accessToken") if narrow.ok and isinstance(narrow.body, dict) else None
        if secret:
            scoped = self.client.request(method, path, token=secret, operation="GetUser")
            if scoped.status in (status, 403):
                order["beforeScope"] = scoped.status == status
                seen.append(evidence(scoped))
            narrow_id = identifier(narrow.body)
            if narrow_id is not None:
                self.call("RevokePartnerOwnToken", params={"tokenId": narrow_id})
        return order, seen

    def id_forms(self, renames):
        """The form of the ids of each kind of record the run saw (a record's id, and the ids it refers to):
        UUIDs, integers (JSON numbers or strings of digits), or a prefix (`usr_`) before a UUID, digits or a
        string of fixed length. Kept only where some kind's ids are not UUIDs."""
        samples = {}
        for (operation, component), observations in self.seen.items():
            id_key = (renames.get(operation, {}).get(component) or {}).get("id", "id")
            for _, record, _ in observations:
                if isinstance(record, dict) and profiles.COMPONENT_KIND.get(component):
                    samples.setdefault(profiles.COMPONENT_KIND[component], []).append(record.get(id_key))
                for key, kind in profiles.KEY_KIND.items():
                    if key.endswith("Id") and isinstance(record, dict):
                        samples.setdefault(kind, []).append(record.get(key))
        forms = {}
        for kind, values in samples.items():
            found = [form for form in map(id_form, values) if form is not None]
            if found and all(f.get("form") == found[0]["form"] and f.get("prefix") == found[0].get("prefix")
                             for f in found):
                form = dict(found[0])
                if "length" in form and len({f.get("length") for f in found}) > 1:
                    form["length"] = None
                forms[kind] = form
        suffixes = "".join(v[len(id_form(v)["prefix"]):] for values in samples.values() for v in values
                           if (id_form(v) or {}).get("rest") == "string")
        for form in forms.values():
            if form.get("rest") == "string":
                form["alphabet"] = alphabet_of(suffixes)
        entry = self.profile["choices"].get("ids")
        if entry is None or all(f["form"] == "uuid" for f in forms.values()):
            return
        kinds = sorted({f["form"] for f in forms.values()})
        entry["value"]["format"] = kinds[0] if len(kinds) == 1 else "mixed"
        entry["value"]["kinds"] = forms
        numbers = {kind: {str(v) for v in samples[kind] if id_form(v)} for kind, f in forms.items()
                   if f["form"] == "integer"}
        if len(numbers) > 1 and sum(map(len, numbers.values())) >= 6 and \
                len(set().union(*numbers.values())) == sum(map(len, numbers.values())):
            entry["value"]["sequence"] = "shared"      # no number ever stood for two kinds of record
        grouped = {}
        for kind, form in sorted(forms.items()):
            grouped.setdefault(describe_id(form), []).append(f"{kind} {form['prefix']!r}" if form.get("prefix")
                                                             else kind)
        entry["says"] = "ids are " + "; ".join(f"{way} ({', '.join(kinds)})" for way, kinds in grouped.items()) + \
            ("; one sequence numbers every kind" if entry["value"].get("sequence") else "") + \
            f"; a malformed id answers {entry['value']['malformedStatus']}"

    def problems(self):
        unknown, seen = self.call("GetUser", params={"id": self.unknown_id()})
        self.problem("not-found", unknown, seen)
        bad, seen_bad = self.call("CreateUser", json=self.invalid_user())
        self.problem("invalid-body", bad, seen_bad)
        if bad.status in (400, 422):
            value, says = {"status": bad.status}, f"an invalid request body answers {bad.status}"
            method, path = self.ops.resolve("CreateUser")
            garbled = self.client.request(method, path, token=self.token, data=b"{not json",
                                          headers={"Content-Type": "application/json"}, operation="CreateUser")
            if 400 <= garbled.status < 500 and garbled.status not in (401, 403, 404):
                value["notJson"] = garbled.status
                says += f", a body that is not JSON {garbled.status}"
            form = answers.errors_form((bad.body or {}).get("errors") if isinstance(bad.body, dict) else None,
                                       self.bodies.placement("CreateUser", "name") or "name")
            if form and form != answers.SIMULATOR_ERRORS:
                value["errors"] = form
                says += f"; its errors are {answers.describe_errors(form)}"
            self.know("invalidBody", value, says, seen_bad, evidence(garbled))
        else:
            self.unknown("invalidBody", f"an invalid CreateUser body answered {bad.status}")
        reply = self.client.request("GET", self.ops.resolve("GetOwnPartner")[1], token="not-a-token",
                                    operation="GetOwnPartner")
        self.problem("unauthorized", reply, evidence(reply))

    def unknown_id(self):
        """An id no record has, in the form of the deployment's own (a malformed one is another situation)."""
        known = getattr(self, "user", None)
        form = id_form(known) or {"form": "uuid"}
        if form["form"] == "integer":
            return "987654321"
        if form["form"] == "prefixed":
            rest = str(known)[len(form["prefix"]):]
            return form["prefix"] + ("0" * len(rest) if form["rest"] != "uuid" else str(uuid.UUID(int=0x5EED)))
        return str(uuid.UUID(int=0x5EED))

    def compose_problems(self):
        """Every problem the probes met, by situation: the members and type URI of each."""
        problems = self.profile.get("_problems", {})
        if problems:
            members = sorted({m for p in problems.values() for m in p["members"]})
            types = {k: p["type"] for k, p in problems.items() if p.get("type") is not None}
            absolute = all(str(t).startswith(("http://", "https://")) for t in types.values())
            situations = {k: p["members"] for k, p in problems.items()}
            value = {"members": members, "types": types, "situations": situations}
            says = (f"ProblemDetails carry {', '.join(members)}; type URIs are "
                    f"{'absolute URLs' if absolute else 'not URLs'} (e.g. {next(iter(types.values()), '-')})")
            media = {p["media"] for p in problems.values()}
            if len(media) == 1 and None not in media:
                value["mediaType"] = media.pop()
                says += f"; served as {value['mediaType']}"
            # A title that is the status's HTTP reason in every situation (RFC 9457 §3.1.3 for about:blank) is
            # the deployment's rule, where the simulator titles each situation in its own words.
            if len(problems) >= 2 and all(p["title"] == reason(p["status"]) for p in problems.values()):
                value["titles"] = "reason"
                says += "; titled with the HTTP reason phrase"
            documented = answers.problem_properties(self.ops, self.sim)
            if documented:
                value["properties"] = documented
                says += f"; its document gives a problem {', '.join(sorted(documented))}"
            self.know("problems", value, says, *[p["evidence"] for p in problems.values()][:4])
        self.profile.pop("_problems", None)

    def invalid_user(self):
        name = self.bodies.placement("CreateUser", "name") or "name"
        return {name: 12345}

    def problem(self, situation, reply, seen):
        body = reply.body if isinstance(reply.body, dict) else None
        if reply.ok or body is None:
            return
        problems = self.profile.setdefault("_problems", {})
        media = (reply.headers.get("content-type") or "").split(";")[0].strip().lower() or None
        problems[situation] = {"status": reply.status, "members": sorted(body), "type": body.get("type"),
                               "title": body.get("title"), "media": media, "evidence": seen}

    def webhooks(self):
        made, seen = self.call("CreateWebhook", build={"callbackUrl": "https://partner.example/ptas-profile",
                                                       "events": ["AccountCreated"]})
        if not made.ok:
            self.unknown("records", f"CreateWebhook answered {made.status}")
            return
        self.status("createStatus", "CreateWebhook", made, seen)
        self.observe("CreateWebhook", made, seen)
        hook = identifier(made.body, *self.ops.hints("GetWebhook"))
        listed, seen_list = self.call("GetWebhooks")
        self.list_shape("GetWebhooks", listed, seen_list)
        self.observe("GetWebhooks", listed, seen_list)
        for name in sorted(n for n, (_, path, _) in self.sim_ops.items() if "/testevents/" in path):
            try:
                sent, seen_sent = self.call(name, json={})
            except NotOffered:
                continue
            self.status("testEventStatus", name, sent, seen_sent)
        if hook is not None:
            one, seen_one = self.call("GetWebhook", params={"id": hook})
            self.observe("GetWebhook", one, seen_one)
            self.delete("DeleteWebhook", {"id": hook}, record=True)

    def partners(self):
        child, seen = self.call("CreatePartner", build={"name": NAMES[0],
                                                        "email": "ptas-profile@example.test"})
        if not child.ok:
            self.unknown("deployTokens", f"CreatePartner answered {child.status} (the token lacks partner:create?)")
            return
        self.status("createStatus", "CreatePartner", child, seen)
        self.observe("CreatePartner", child, seen)
        child_id = identifier(child.body, *self.ops.hints("GetPartner"))
        if child_id is not None:
            self.undo.append(lambda: self.delete("DeleteChildPartner", {"id": child_id}, record=True))
        children = [child_id]
        for label in NAMES[1:]:
            more, _ = self.call("CreatePartner", build={"name": label, "email": "ptas-profile@example.test"})
            more_id = identifier(more.body, *self.ops.hints("GetPartner")) if more.ok else None
            if more_id is not None:
                children.append(more_id)
                self.undo.append(lambda i=more_id: self.delete("DeleteChildPartner", {"id": i}))
        detail, seen_detail = self.call("GetPartner", params={"id": child_id})
        self.observe("GetPartner", detail, seen_detail)
        listed, seen_list = self.call("GetPartners")
        self.list_shape("GetPartners", listed, seen_list)
        self.observe("GetPartners", listed, seen_list)
        self.named_order("GetPartners", listed, children, "GetPartner", seen_list)
        deploy, seen_deploy = self.call("CreateOwnPartnerToken",
                                        build={"name": "ptas profile deploy", "scope": "partner:create",
                                               "expiresIn": 7200})
        self.status("createStatus", "CreateOwnPartnerToken", deploy, seen_deploy)
        self.observe("CreateOwnPartnerToken", deploy, seen_deploy)
        secret = deploy.body.get("accessToken") if isinstance(deploy.body, dict) else None
        token_id = identifier(deploy.body) if isinstance(deploy.body, dict) else None
        if secret and child_id is not None:
            attempt, seen_attempt = self.call("CreatePartnerToken", params={"id": child_id}, token=secret,
                                              build={"name": "ptas profile", "scope": "partner:read",
                                                     "expiresIn": 7200})
            strict = attempt.status == 403
            self.problem("deploy-token", attempt, seen_attempt)
            self.know("deployTokens", {"createsChildTokens": not strict, "status": attempt.status},
                      "a deploy token creates child partners only, not their tokens (403)" if strict else
                      "a deploy token may create tokens for the child partners it made", seen_attempt)
            child_token = identifier(attempt.body) if attempt.ok and isinstance(attempt.body, dict) else None
            if child_token is not None:
                revoked, seen_revoked = self.call("RevokePartnerToken", params={"id": child_id,
                                                                                "tokenId": child_token})
                self.status("revokeStatus", "RevokePartnerToken", revoked, seen_revoked)
        if child_id is not None and "RevokePartnerToken" not in (profiles.known(self.profile, "revokeStatus") or {}):
            made, _ = self.call("CreatePartnerToken", params={"id": child_id},
                                build={"name": "ptas profile", "scope": "partner:read", "expiresIn": 7200})
            made_id = identifier(made.body) if made.ok and isinstance(made.body, dict) else None
            if made_id is not None:
                revoked, seen_revoked = self.call("RevokePartnerToken", params={"id": child_id, "tokenId": made_id})
                self.status("revokeStatus", "RevokePartnerToken", revoked, seen_revoked)
        if token_id is not None:
            revoked, seen_revoked = self.call("RevokePartnerOwnToken", params={"tokenId": token_id})
            self.status("revokeStatus", "RevokePartnerOwnToken", revoked, seen_revoked)
        tokens, seen_tokens = self.call("GetOwnPartnerTokens")
        self.list_shape("GetOwnPartnerTokens", tokens, seen_tokens)
        listed = [e.get("name") for e in entries_of(tokens.body) or [] if isinstance(e, dict)]
        initial = next((n for n in listed if n != "ptas profile deploy"), None) if len(listed) == 2 else None
        self.order("GetOwnPartnerTokens", listed, initial, "ptas profile deploy", seen_tokens)

    def account_types(self):
        listed, seen_list = self.call("GetAccountTypes")
        self.list_shape("GetAccountTypes", listed, seen_list)
        self.observe("GetAccountTypes", listed, seen_list)
        first = (entries_of(listed.body) or [None])[0]
        type_id = identifier(first, *self.ops.hints("GetAccountType"))
        if type_id is not None:
            one, seen_one = self.call("GetAccountType", params={"id": type_id})
            self.observe("GetAccountType", one, seen_one)

    def accounts(self):
        """An account of the probe's user, from its account type's fields (Dummy where there is one)."""
        user = getattr(self, "user", None)
        types, _ = self.call("GetAccountTypes")
        ids = [identifier(e, *self.ops.hints("GetAccountType")) for e in entries_of(types.body) or []]
        type_id = "dummy" if "dummy" in ids else next((i for i in ids if i is not None), None)
        if user is None or type_id is None:
            return
        detail, _ = self.call("GetAccountType", params={"id": type_id})
        if not detail.ok or not isinstance(detail.body, dict):
            return
        made, seen = self.call("CreateAccount", build={"accountTypeId": type_id, "userId": user,
                                                       "credentials": form_for(detail.body),
                                                       "name": NAMES[0]})
        if not made.ok:
            self.profile.setdefault("notes", []).append(f"accounts: CreateAccount answered {made.status}")
            return
        self.status("createStatus", "CreateAccount", made, seen)
        self.observe("CreateAccount", made, seen)
        account = identifier(made.body, *self.ops.hints("GetAccount"))
        if account is None:
            return
        self.undo.append(lambda: self.delete("DeleteAccount", {"id": account}, record=True))
        accounts = [account]
        for label, owner in zip(NAMES[1:], getattr(self, "made_users", [])[1:]):    # one account per user and type
            more, _ = self.call("CreateAccount", build={"accountTypeId": type_id, "userId": owner,
                                                        "credentials": form_for(detail.body), "name": label})
            more_id = identifier(more.body, *self.ops.hints("GetAccount")) if more.ok else None
            if more_id is not None:
                accounts.append(more_id)
                self.undo.append(lambda i=more_id: self.delete("DeleteAccount", {"id": i}))
        one, seen_one = self.call("GetAccount", params={"id": account})
        self.observe("GetAccount", one, seen_one)
        listed, seen_list = self.call("GetAccounts")
        self.list_shape("GetAccounts", listed, seen_list)
        self.observe("GetAccounts", listed, seen_list)
        self.named_order("GetAccounts", listed, accounts, "GetAccount", seen_list)
        self.sessions(user, account)

    def sessions(self, user, account):
        """The records of the hosted pages' sessions and of an import, as the deployment shows them (their ids'
        form above all): each a probe of its own, skipped where the target offers no such operation."""
        try:
            imports = self.client.call("GetDataImports", token=self.token, query={"accountId": account})
            self.observe("GetDataImports", imports, evidence(imports))
        except NotOffered:
            pass
        probes = (("CreateAccountUiSession", {"userId": user, "accountId": account}, "GetAccountUiSession"),
                  ("CreateUserUiSession", {}, "GetUserUiSession"))
        for name, build, reader in probes:
            try:
                made, seen = self.call(name, build=build)
            except (NotOffered, NoSchema) as error:
                self.profile.setdefault("notes", []).append(f"sessions: {name}: {redact(error)}")
                continue
            self.observe(name, made, seen)
            self.location(name, made, seen)
            made_id = identifier(made.body, *self.ops.hints(reader)) if made.ok else None
            if made_id is not None:
                try:
                    one, seen_one = self.call(reader, params={"id": made_id})
                except NotOffered:
                    continue
                self.observe(reader, one, seen_one)

    def documented(self):
        """Records no probe saw (data imports, reports, UI sessions): named as the target's document names them
        in the answers of the operations that return them. Only for components no answer showed, so what the
        target answered always outweighs what its document says."""
        answered = {component for _, component in self.seen}
        for name in sorted(self.sim_ops):
            if not self.sim_ops[name][1].startswith("/partner/v2") or any(op == name for op, _ in self.seen):
                continue
            try:
                theirs = self.ops.response_schema(name)
            except NotOffered:
                continue
            self.walk_schemas(self.sim_response(name)[1], theirs, name, answered)

    def walk_schemas(self, mine, theirs, name, answered, depth=0):
        if depth > 6 or not isinstance(mine, dict) or not isinstance(theirs, dict):
            return
        component = mine["$ref"].rsplit("/", 1)[-1] if "$ref" in mine else None
        mine = self.deref(mine)
        properties = theirs.get("properties")
        if component and component not in answered and isinstance(properties, dict) and properties:
            sample = {k: SAMPLES.get(next(iter(sorted(types_of(v) - {"null"})), "string"), "")
                      for k, v in properties.items() if isinstance(v, dict)}
            where = {"document": f"the response schema of {self.ops.operation_id(name)}"}
            self.seen.setdefault((name, component), []).append((list(sample), sample, where))
        for key, sub in (mine.get("properties") or {}).items():
            if isinstance(properties, dict) and key in properties:
                self.walk_schemas(sub, properties[key], name, answered, depth + 1)
        if isinstance(mine.get("items"), dict) and isinstance(theirs.get("items"), dict):
            self.walk_schemas(mine["items"], theirs["items"], name, answered, depth + 1)

    def records(self):
        self.compose_problems()
        self.documented()
        renames, evidence_of = self.renames()
        self.id_forms(renames)
        if evidence_of:
            self.know("records", renames, "records name these fields otherwise: " + "; ".join(
                f"{op} {c} {', '.join(f'{a} as {b}' for a, b in r.items())}"
                for op, by in sorted(renames.items()) for c, r in by.items() if r), *list(evidence_of.values())[:4])
        else:
            self.know("records", renames, "records use the simulator's field names",
                      *[obs[0][2] for obs in list(self.seen.values())[:3]])
        summaries = {}
        for list_op, detail_op in LISTS.items():
            _, items = self.list_key(list_op) if list_op in self.sim_ops else (None, None)
            component = (items or {}).get("$ref", "").rsplit("/", 1)[-1]
            in_list = self.seen.get((list_op, component), [])
            detail = self.seen.get((detail_op, component), [])
            if not in_list or not detail:
                continue
            listed_keys = set().union(*(set(o[0]) for o in in_list))
            detail_keys = set().union(*(set(o[0]) for o in detail))
            if listed_keys < detail_keys:
                summaries[list_op] = {"keys": [k for k in in_list[0][0]]}
        observed = [op for op in LISTS if any(key[0] == op for key in self.seen)]
        if observed:
            seen = [obs[0][2] for key, obs in self.seen.items() if key[0] in observed][:3]
            self.know("listEntries", summaries, ("lists show summaries: " + "; ".join(
                f"{op} {', '.join(v['keys'])}" for op, v in summaries.items())) if summaries else
                f"lists show the whole record ({', '.join(observed)})", *seen)

    # -- helpers --------------------------------------------------------------------------------------------
    def location(self, name, reply, seen):
        """Whether a create names the new record in a Location header (its address: the record's id in it)."""
        made = identifier(reply.body) if reply.ok and isinstance(reply.body, dict) else None
        if made is None:
            return
        where = reply.headers.get("location") or ""
        entry = self.profile["choices"].setdefault("locations", {"value": {}, "says": "", "evidence": []})
        entry["value"][name] = bool(where) and str(made) in where
        entry["evidence"].append(seen)
        named = [op for op, told in entry["value"].items() if told]
        entry["says"] = (f"creates name the new record in Location ({', '.join(named)})" if named else
                         "creates answer no Location")
        self.profile["unknown"].pop("locations", None)

    def status(self, choice, name, reply, seen):
        if choice == "createStatus":
            self.location(name, reply, seen)
        if not reply.ok:
            return
        self.empty(name, reply, seen)
        entry = self.profile["choices"].setdefault(choice, {"value": {}, "says": "", "evidence": []})
        entry["value"][name] = reply.status
        entry["evidence"].append(seen)
        entry["says"] = ", ".join(f"{op} {status}" for op, status in entry["value"].items())
        self.profile["unknown"].pop(choice, None)

    def empty(self, name, reply, seen):
        """The operations whose success the deployment answers without a body (a 204, or another status with
        nothing after it): served so, without a Content-Type."""
        entry = self.profile["choices"].setdefault("emptyAnswers", {"value": [], "says": "", "evidence": []})
        if not reply.text.strip() and name not in entry["value"]:
            entry["value"].append(name)
            entry["evidence"].append(seen)
        elif not entry["evidence"]:
            entry["evidence"].append(seen)
        entry["says"] = (f"answered without a body: {', '.join(entry['value'])}" if entry["value"] else
                         "every success the probes met had a body")
        self.profile["unknown"].pop("emptyAnswers", None)

    def delete(self, name, params, record=False):
        reply, seen = self.call(name, params=params)
        if reply.ok:
            self.empty(name, reply, seen)
        if record and reply.ok:
            entry = self.profile["choices"].setdefault("deleteStatus", {"value": {}, "says": "", "evidence": []})
            entry["value"][name] = {"status": reply.status, "body": reply.body is not None}
            if isinstance(reply.body, dict):
                entry["value"][name]["answer"] = deleted_answer(reply.body, str(next(iter(params.values()))))
            entry["evidence"].append(seen)
            entry["says"] = ", ".join(f"{op} {v['status']}{' with a body' if v['body'] else ''}"
                                      for op, v in entry["value"].items())
        return reply

    def order(self, name, listed, older, newer, seen):
        """Where the newer of two entries a probe made stands in a list."""
        if older not in listed or newer not in listed:
            return
        newest = listed.index(newer) < listed.index(older)
        entry = self.profile["choices"].setdefault("listOrder", {"value": {}, "says": "", "evidence": []})
        entry["value"][name] = "newest first" if newest else "oldest first"
        entry["evidence"].append(seen)
        entry["says"] = "; ".join(f"{op} shows the {way}" for op, way in entry["value"].items())
        self.profile["unknown"].pop("listOrder", None)

    def list_shape(self, name, reply, seen):
        if not reply.ok or name not in self.sim_ops:
            return
        body = reply.body
        if isinstance(body, list):
            shape = {"shape": "array"}
        elif isinstance(body, dict):
            keys = [k for k, v in body.items() if isinstance(v, list)]
            if len(keys) != 1:
                return
            shape = {"shape": "object", "key": keys[0]}
            counts = [k for k, v in body.items() if type(v) is int and v == len(body[keys[0]])]
            if len(counts) == 1:        # the number of entries beside them
                shape["count"] = counts[0]
        else:
            return
        entry = self.profile["choices"].setdefault("lists", {"value": {}, "says": "", "evidence": []})
        entry["value"][name] = shape
        entry["evidence"].append(seen)
        entry["says"] = "; ".join(f"{op} answers {'a bare array' if s['shape'] == 'array' else repr(s['key'])}" +
                                  (f" with {s['count']!r}" if s.get("count") else "")
                                  for op, s in entry["value"].items())
        self.profile["unknown"].pop("lists", None)

    @staticmethod
    def page_order(pages):
        """(the order of the transactions in the pages the run read: oldest or newest first, the evidence of a
        page), where every page of two or more agrees; (None, None) otherwise. The simulator pages them the same
        way, its references leading on in that order."""
        read = [r for r in pages if r.ok and isinstance(r.body, dict)]
        orders = {created_order(entries_of(r.body) or []) for r in read} - {None}
        return (orders.pop(), evidence(read[0])) if len(orders) == 1 else (None, None)

    def dressing(self):
        """How the target dresses its answers (profile_answers.py): the headers on every answer, a removed path's
        status, null members, the JSON types of record members."""
        traffic = self.recorder.traffic if self.recorder else answers.Traffic(self.ops)
        headers = answers.constant_headers(traffic, self.ops)
        if headers:
            self.know("headers", *headers, evidence(traffic.example))
        else:
            self.unknown("headers", f"the run met {traffic.answers} answers of the API, fewer than the "
                                    f"{answers.ENOUGH_ANSWERS} a header on every one needs")
        gone = answers.removed_status(traffic)
        if gone:
            self.know("removedPaths", *gone, evidence(traffic.gone[0]))
        else:
            self.unknown("removedPaths", "the run called no path the spec removed (the versioning scenarios do)")
        nulls = answers.null_members(self.observed, self.sim)
        if nulls:
            self.know("nulls", *nulls)
        else:
            self.unknown("nulls", "no answer held a null member the spec does not name, nor left one out")
        first = [o[2] for o in self.observed[:1]]     # the evidence of a choice no record told apart
        left_out, seen = answers.members_left_out(self.observed, self.sim)
        self.know("membersLeftOut", left_out, ("members no answer carried: " + "; ".join(
            f"{c} {', '.join(m)}" for c, m in left_out.items())) if left_out else
            "every member the simulator answers was answered", *(seen[:3] or first))
        by_operation, seen = answers.members_left_out_by_operation(self.observed, self.sim)
        self.know("operationMembersLeftOut", by_operation, ("members only some operations answer: " + "; ".join(
            f"{op} without {c} {', '.join(m)}" for op, found in by_operation.items() for c, m in found.items()))
            if by_operation else "every operation answers the members the others do",
            *(seen[:3] or first))
        types, seen = answers.member_types(self.observed, self.sim, self.ops)
        self.know("memberTypes", types, ("members of another JSON type than the simulator's: " + "; ".join(
            f"{c} {m} as {k['type']}" for c, found in types.items() for m, k in found.items())) if types else
            "record members have the simulator's JSON types", *(seen or first))

    def documented_retry_after(self):
        """(form, where) of the Retry-After the target's document gives its 429 answers, where one form is named
        (a run stays under the limits on purpose, so the document is the evidence then)."""
        forms = {}
        for name in self.sim_ops:
            try:
                responses = self.ops.locate(name)[2].get("responses") or {}
            except NotOffered:
                continue
            limited = openapi_reading.deref(self.ops.document, responses.get("429") or {})
            headers = {k.lower(): v for k, v in (limited.get("headers") or {}).items()}
            form = retry_after_form(openapi_reading.deref(self.ops.document, headers.get("retry-after") or {}))
            if form:
                forms.setdefault(form, self.ops.operation_id(name))
        return (next(iter(forms)), f"/openapi.json, the 429 of {next(iter(forms.values()))}") \
            if len(forms) == 1 else None

    def passive(self):
        """What the run met without asking for it (Recorder): a 429, pages of transactions."""
        met = list(self.recorder.replies) if self.recorder else []
        limited = next((r for r in met + self.client.replies if r.status == 429), None)
        if limited is not None:
            headers = sorted(k for k in limited.headers if k in HEADERS and k != "content-type")
            value = {"status": 429, "headers": headers,
                     "members": sorted(limited.body) if isinstance(limited.body, dict) else []}
            wait = limited.headers.get("retry-after", "").strip()
            if wait:        # RFC 9110 §10.2.3: seconds, or an HTTP date
                value["retryAfter"] = "seconds" if wait.isdigit() else "http-date" if http_date(wait) else "other"
            if self.documented_retry_after():
                value["documented"] = True      # its document names the header on its 429s
            self.know("rateLimit", value, f"a 429 carries {', '.join(headers) or 'no rate-limit header'}" +
                      (f" (Retry-After in {value['retryAfter']})" if wait else ""), evidence(limited))
        elif self.documented_retry_after():
            form, where = self.documented_retry_after()
            self.know("rateLimit", {"status": 429, "headers": ["retry-after"], "retryAfter": form, "documented": True},
                      f"a 429 carries retry-after (in {form}, as its document says; the run met no 429)",
                      {"document": where})
        else:
            self.unknown("rateLimit", "the run met no 429 (the probes stay under the limit on purpose; the @slow "
                                      "§8 scenario, with --slow, spends a window and shows one)")
        pages = [r for r in met if r.operation == "GetTransactions"]
        for page in pages[:2]:
            self.observe("GetTransactions", page, evidence(page))
        order, seen_order = self.page_order(pages)
        full = [r for r in pages if r.query is not None and "pageSize" not in r.query and r.ok
                and isinstance(r.body, dict) and r.body.get("nextPageReference")]
        full.sort(key=lambda r: "pageReference" in r.query)        # a first page says the most
        if full:
            full = full[0]
            reference = full.body["nextPageReference"]
            size = len(entries_of({k: v for k, v in full.body.items() if isinstance(v, list)}) or [])
            form = reference_form(reference, size, first="pageReference" not in full.query, sent=full.query)
            prefixes = reference_prefixes(pages) if form["referenceForm"] == "opaque" and "url" not in form else {}
            if prefixes:
                form["prefixes"] = prefixes
            self.know("paging", {"pageSize": size, "reference": reference_kind(reference), **form,
                                 **({"order": order} if order else {})},
                      f"a page holds {size} transactions when the client names no page size; page references "
                      f"are {reference_kind(reference)}" + describe_form(form) +
                      (f"; pages hold the {order}" if order else ""), evidence(full))
        elif order:
            self.know("paging", {"order": order}, f"pages hold the {order} (the run read no full page: their size "
                                                  "and references stay the simulator's)", seen_order)
        else:
            self.unknown("paging", "the run read no full page of transactions (a deployment's data arrives in its "
                                   "own time: run the transactions scenarios, with --slow, on a world with data)")


def created_order(entries):
    """Whether records stand oldest or newest first by their createdAt (the spec's name of when a transaction came),
    None where fewer than two have one or they stand in neither order."""
    stamps = [e["createdAt"] for e in entries if isinstance(e, dict) and isinstance(e.get("createdAt"), str)]
    if len(stamps) < 2 or len(stamps) < len(entries) or len(set(stamps)) < 2:
        return None
    if stamps == sorted(stamps):
        return "oldest first"
    return "newest first" if stamps == sorted(stamps, reverse=True) else None


def retry_after_form(header):
    """The form of Retry-After a document's header object names: an HTTP date or seconds."""
    schema = (header or {}).get("schema") or {}
    if schema.get("format") in ("http-date", "date-time") or "date" in str(header.get("description", "")).lower():
        return "http-date"
    return "seconds" if schema.get("type") in ("integer", "number") else None


LATER_PAGE = re.compile(r'"previousPageReference"\s*:\s*"')


class Recorder:
    """The run's own exchanges as it runs, for what the probes do not ask for: the first 429s and the pages of
    transactions the suites read (a few of each, so memory stays bounded on a long run), and what every answer
    says beside its body (profile_answers.Traffic: its headers, the answers to removed paths)."""

    KEEP = 5

    def __init__(self, target):
        self.replies = []
        self.traffic = answers.Traffic(target.operations)
        transport, send = target.transport, target.transport.send
        transactions = None
        try:
            transactions = shape(target.operations.locate("GetTransactions")[1])
        except NotOffered:
            pass

        def recording(method, path, headers, data, query):
            status, response_headers, text = send(method, path, headers, data, query)
            self.traffic.saw(method, path, status, response_headers, text)
            operation = "GetTransactions" if method == "GET" and shape_of(path, transactions) else None
            kind = "429" if status == 429 else operation
            if operation and LATER_PAGE.search(text or ""):
                kind = "later page"         # one with a previous page: the only place its reference is seen
            if kind and sum(1 for r in self.replies if r.kind == kind) < self.KEEP:
                reply = Exchange(method, path, status, response_headers, text, parse_json(text), operation)
                reply.query, reply.kind = dict(query or {}), kind
                self.replies.append(reply)
            return status, response_headers, text
        transport.send = recording


def shape_of(path, template):
    """Whether a concrete path is an instance of a template's shape (`/accounts/{}/transactions`)."""
    if not template:
        return False
    pattern = "^" + re.escape(template).replace(re.escape("{}"), "[^/]+") + "$"
    return re.match(pattern, path.split("?")[0]) is not None


def reference_form(reference, size, first=True, sent=()):
    """The form of a next page's reference: `offset` (the page size, after a first page), `page` (a page number:
    "2" after the first page when pages count from 1, "1" from 0: `firstPage`), else `opaque`; `url` where it is
    a link (absolute or a path) whose query parameter `parameter` holds one of those."""
    text, extra = str(reference), {}
    if text.startswith(("http://", "https://", "/")):
        link = urlsplit(text)
        params = parse_qsl(link.query, keep_blank_values=True)
        names = [k for k, _ in params if k == "pageReference"] or [k for k, _ in params if k not in sent]
        if names:
            extra["url"] = {"absolute": bool(link.scheme), "parameter": names[-1]}
            text = dict(params)[names[-1]]
    if text.isdigit() and first and size > 2 and int(text) in (1, 2):
        return {"referenceForm": "page", "firstPage": int(text) - 1, **extra}
    return {"referenceForm": "offset" if text.isdigit() else "opaque", **extra}


PREFIX = re.compile(r"^([A-Za-z]{1,12}[.:~])(?=.)")


def reference_prefixes(pages):
    """The prefix each kind of page reference starts with (`next.`, `prev.`), where every one seen of that kind
    starts with the same one and the two kinds differ: a direction the deployment writes into its references."""
    found = {}
    for field in ("nextPageReference", "previousPageReference"):
        seen = {(PREFIX.match(str(r.body[field])) or [None, None])[1] for r in pages
                if r.ok and isinstance(r.body, dict) and r.body.get(field)}
        if len(seen) == 1 and None not in seen:
            found[field] = seen.pop()
    return found if len(set(found.values())) == len(found) == 2 else {}


def describe_form(form):
    kind = {"page": f" (page numbers from {form.get('firstPage')})", "offset": " (offsets)"}.get(
        form["referenceForm"], "")
    link = form.get("url")
    return kind + (f", inside {'absolute links' if link['absolute'] else 'paths'} (their "
                   f"{link['parameter']!r} parameter)" if link else "")


def reference_kind(reference):
    text = str(reference)
    if UUID.match(text):
        return "UUIDs"
    if text.isdigit():
        return "integers (offsets or page numbers)"
    if re.fullmatch(r"[A-Za-z0-9_-]+=*", text):
        return f"opaque base64url-like strings ({len(text)} characters)"
    return f"opaque strings ({len(text)} characters)"


PREFIXED = re.compile(r"^([A-Za-z]{1,12}[_-])([0-9a-fA-F-]{36}|[A-Za-z0-9]+)$")


def id_form(value):
    """The form of one id as a partner sees it, or None for no id."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, int):
        return {"form": "integer", "json": "integer"}
    if not isinstance(value, str):
        return None
    if UUID.match(value):
        return {"form": "uuid"}
    if value.isdigit() and (value == "0" or not value.startswith("0")):
        return {"form": "integer", "json": "string"}
    prefixed = PREFIXED.match(value)
    if prefixed:
        prefix, rest = prefixed.groups()
        if UUID.match(rest):
            return {"form": "prefixed", "prefix": prefix, "rest": "uuid"}
        if rest.isdigit() and not rest.startswith("0"):
            return {"form": "prefixed", "prefix": prefix, "rest": "integer"}
        return {"form": "prefixed", "prefix": prefix, "rest": "string", "length": len(rest)}
    if re.fullmatch(r"(?=.*[0-9])[A-Za-z0-9]{4,64}", value):     # a bare string (hex, a ULID, zero-padded)
        return {"form": "prefixed", "prefix": "", "rest": "string", "length": len(value)}
    return {"form": "other"}


def alphabet_of(text):
    """The smallest of the usual alphabets that holds every character the ids' suffixes used."""
    chars = set(text)
    return next((name for name, alphabet in profiles.ALPHABETS.items() if chars <= set(alphabet)), "base62")


def describe_id(form):
    if form["form"] == "prefixed":
        rest = {"uuid": "a UUID", "integer": "a number"}.get(form["rest"]) or \
            f"{form.get('length') or 'some'} {form.get('alphabet', '')} characters"
        return f"a prefix and {rest}" if form["prefix"] else rest
    if form["form"] == "integer":
        return "integers" + (" (strings of digits)" if form.get("json") == "string" else "")
    return {"uuid": "UUIDs"}.get(form["form"], "of another form (not imitated)")


def deleted_answer(body, record_id):
    """What a DELETE answers with: the record as it was, or a fixed body naming the id (kept as a template)."""
    if len(body) > 2 and record_id in [str(v) for v in body.values()]:
        return "record"
    return {"template": json.loads(json.dumps(scrub(body)).replace(record_id, "{id}"))}


def entries_of(body):
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        lists = [v for v in body.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return None


def types_of(schema):
    kind = (schema or {}).get("type")
    kinds = set(kind) if isinstance(kind, list) else ({kind} if kind else {"string", "object", "array", "integer",
                                                                           "number", "boolean"})
    return kinds | ({"number"} if "integer" in kinds else set())


def reason(status):
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return None


def learn(target, token=None, recorder=None):
    """The profile of `target`; on a simulator without a token, a fresh world of its own is used."""
    if token is None and target.simulator:
        token, _ = target.new_world(target.client(), name="Profile probe")
    return Learner(target, token, recorder=recorder).learn()


def write(target, token, path, out, recorder=None):
    """`--profile-out`: learn, write the file, and print the profile on one screen."""
    print("ptas conform: learning the target's profile (where the spec is silent) ...", file=out, flush=True)
    learned = learn(target, None if target.simulator else token, recorder)
    profiles.dump(learned, path)
    print(profiles.show(learned), file=out)
    print(f"ptas conform: profile written to {path} (`ptas serve --profile {path}` serves it)", file=out, flush=True)
    return learned
