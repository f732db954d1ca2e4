"""The profile layer: the simulator's answers rewritten to follow a deployment profile (docs/profiles.md).

The outermost stage of a request (hooks.py), compiled once at start-up into a plan per operation: a request
is taken in the deployment's words (its paths, field names, id rules), handed to the simulator in the
simulator's, and the answer given back in the deployment's shapes, statuses and problem types;
`/openapi.json` says the same. Its own refusals are answered inside, at the point of the request where the
deployment gives them (hooks.py: refuse), and it makes no request of its own. What the profile does not
know stays the simulator's own choice. State, rules and scope checks remain the simulator's: the layer only
changes what the spec leaves open.
"""

import copy
import io
import json
import re
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from flask import Response, request
from werkzeug.test import run_wsgi_app

from ptas_sandbox import openapi_reading
from ptas_sandbox.profile import COMPONENT_KIND, SEGMENT_KIND
from ptas_sandbox.simulator.hooks import PAGE_ORDER, PARTNER_REQUEST
from ptas_sandbox.simulator.openapi import document
from ptas_sandbox.simulator.operations import REGISTRY, Answer
from ptas_sandbox.simulator.problems import InvalidParameter, Problem

from . import dressing
from .ids import MALFORMED, Ids, key_kind
from .models import page_at, remember_page

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
SIM_TYPE = "urn:ptas-sandbox:problem:"
METHODS = ("get", "put", "post", "patch", "delete")
# The simulator's kind of problem nearest to a refusal of the layer's own.
FALLBACK = {"partial-put": "invalid-body", "deploy-token": "forbidden", "malformed-id": "not-found"}
# The members any problem may carry; a situation's own extension members (`parameter`, `limit`) are not these.
COMMON_MEMBERS = ("type", "title", "status", "detail", "instance", "traceId")
# What the stage tells the app of a request it translated (its refusal, its reads), in the request's environ.
STAGE = "ptas.profile"


def reason(status):
    """The HTTP reason phrase of a status (RFC 9110), as http.HTTPStatus knows them."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def known(profile, name):
    entry = profile.get("choices", {}).get(name)
    return entry.get("value") if isinstance(entry, dict) else None


def common_prefix(types):
    """`https://problems.example/` when every learned type is that prefix and the simulator's own slug of the
    same situation: then the deployment names the situations it was not seen in the same way."""
    named = [(slug, str(uri)) for slug, uri in types.items() if str(uri).endswith(slug)]
    prefixes = {uri[: len(uri) - len(slug)] for slug, uri in named}
    return prefixes.pop() if len(named) > 1 and len(prefixes) == 1 else None


def counted(shape):
    """The schema of a list's count beside its entries, where the deployment gives one."""
    return {shape["count"]: {"type": "integer", "minimum": 0, "description": "the number of entries"}} \
        if shape.get("count") else {}


def one_type(types):
    """The one type every learned situation has (`about:blank`), where there is one: then every problem has it."""
    values = {str(uri) for uri in types.values()}
    return values.pop() if len(types) > 1 and len(values) == 1 else None


def parses(raw):
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def shape(path):
    return re.sub(r"{[^}]+}", "{}", path)


def fill(template, record_id):
    return json.loads(json.dumps(template).replace("{id}", json.dumps(record_id)[1:-1]))


def component_of(schema):
    """The name of the component a schema refers to (`$ref`), or None."""
    return schema["$ref"].rsplit("/", 1)[-1] if "$ref" in schema else None


def json_of(data):
    try:
        return json.loads(data)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Plan:
    """What the profile makes of one of the simulator's operations, compiled once at start-up."""
    method: str
    path: str                   # the simulator's
    list_key: str | None        # the member its list answer holds the entries in
    paged: bool                 # its answers are pages (a `pageReference` parameter)
    created_list: bool          # a list of records a partner makes, by creation (the account types are a catalogue)
    record_id: bool             # its `{id}` is a record's (not an account type's name, not a page key)
    id_check: str | None        # where the form of that id is checked (hooks.py: refuse), where it is
    reader: str | None          # the GET at its path (the record a DELETE answers, a partial PUT is judged against)
    creates_reader: str | None  # the GET of one record under its path (a create's Location)
    record_kind: str | None     # the kind of record it answers with
    delete_template: Any        # the acknowledgement a DELETE answers ({id} for the id)
    delete_body: bool
    put: dict                   # how a PUT treats what its body leaves out
    shape: dict | None          # its list's shape
    order: str | None           # its list's order
    token_field: str | None     # the member of its answer that holds a new user token given as a string
    statuses: dict              # the deployment's status for each of the simulator's success statuses
    locates: bool               # its answer names the new record in Location
    empty: bool                 # its success is answered without a body
    page_order: str | None      # the order of its pages' entries, where the deployment pages otherwise


class Route:
    def __init__(self, method, template, name, sim_template):
        self.method, self.template, self.name, self.sim_template = method, template, name, sim_template
        self.regex = re.compile("^" + re.sub(r"\\{[^}]+\\}", "([^/]+)", re.escape(template)) + "$")
        self.fixed = -template.count("{")

    def match(self, method, path):
        found = self.regex.match(path) if method == self.method else None
        return list(found.groups()) if found else None


class ProfileLayer:
    def __init__(self, app, profile, claims, store=None, trace=None, system_time=None, prefix="/partner/v2"):
        """`claims(authorization header)`: the verified claims of the caller's token, {} when it has none;
        `trace()`: a trace id for a problem of the layer's own; `system_time()`: the system clock in
        microseconds, which a Retry-After given as a date counts from."""
        self.app, self.claims, self.trace = app, claims, trace
        self.choices = {name: known(profile, name) for name in profile.get("choices", {})}   # read once
        self.system_time, self.prefix = system_time, prefix
        self.ids = Ids(self.known("ids"), store)
        self.malformed = (self.known("ids") or {}).get("malformedStatus") or 404     # the answer to a bad id
        self.store = store

    def wrap(self, app):
        """The outermost stage (hooks.py) around the app, compiled now that the app is complete."""
        self.app = app
        self.compile()
        return self

    def known(self, name):
        """What the profile learned of a choice, or None."""
        return self.choices.get(name)

    def compile(self):
        """The profile against the simulator's operations, once, at start-up: its document, the routes, and a
        plan per operation (what every request of it needs: no request reads the profile again)."""
        self.sim = copy.deepcopy(document(self.prefix, "http://localhost"))     # its schemas are the registry's
        self.renaming = {}      # renames_within, by (operation, id of a schema of self.sim, depth)
        self.number_ids(self.sim)
        dressing.publish_types(self.sim, self.known("memberTypes"))
        if self.known("nulls") == "omitted":
            dressing.publish_without_nulls(self.sim)
        left_out, by_operation = self.known("membersLeftOut") or {}, self.known("operationMembersLeftOut") or {}
        dressing.publish_without(self.sim, left_out)
        dressing.publish_optional(self.sim, by_operation)
        # what each operation's answers leave out: the members no answer carries, and those only it does not
        self.left_out = {name: dressing.joined(left_out, members) for name, members in by_operation.items()}
        self.left_out[None] = left_out
        self.sim_ops = openapi_reading.operations(self.sim)
        self.operations = self.known("operations") or {}
        routes = []
        for name, (method, path, _) in self.sim_ops.items():
            where = self.operations.get(name) if not path.startswith("/_sandbox") else None   # never profiled
            if where:
                routes.append(Route(where["method"], where["path"], name, path))
            elif path.startswith(self.prefix):
                routes.append(Route(method, path, name, path))
        self.routes = sorted(routes, key=lambda r: r.fixed, reverse=True)
        # Where the deployment serves an operation elsewhere, the simulator's own path is not there.
        self.moved = [Route(method, path, name, path) for name, (method, path, _) in self.sim_ops.items()
                      if name in self.operations and not path.startswith("/_sandbox")
                      and (self.operations[name]["method"], shape(self.operations[name]["path"]))
                      != (method, shape(path))]
        self.records = self.known("records") or {}
        self.defaults = self.default_renames()
        self.plans = {}         # while they are made, a plan's parts are found (the lookups below)
        self.plans = {name: self.plan(name) for name in self.sim_ops}
        self.document = self.publish(copy.deepcopy(self.sim))

    def plan(self, name):
        """What the profile makes of one operation."""
        method, path, _ = self.sim_ops[name]
        list_key = self.find_list_key(name)
        kind = SEGMENT_KIND.get(path.rstrip("/").rsplit("/", 1)[-1])
        before_id = path.split("{id}")[0].rstrip("/").rsplit("/", 1)[-1] if "{id}" in path else None
        record_id = before_id is not None and before_id in SEGMENT_KIND
        ids = self.known("ids") or {}
        checks_form = ids.get("format") == "uuid" and ids.get("malformedStatus") not in (None, 404)
        return Plan(
            method=method, path=path, list_key=list_key, paged="pageReference" in REGISTRY[name].query,
            created_list=bool(list_key) and kind is not None and "pageReference" not in REGISTRY[name].query,
            record_id=record_id, id_check=self.id_checked_at(ids) if record_id and checks_form else None,
            reader=self.find_reader_of(name), creates_reader=self.find_reader_at(name),
            record_kind=self.find_record_kind(name), delete_template=self.find_delete_template(name),
            delete_body=self.find_delete_body(name), put=self.find_put_for(name), shape=self.find_list_shape(name),
            order=self.find_list_order(name), token_field=self.find_token_field(name),
            statuses={int(code): self.find_status_for(name, int(code))
                      for code in self.sim_ops[name][2].get("responses", {}) if str(code).isdigit()
                      and 200 <= int(code) < 300},
            locates=self.find_locates(name), empty=name in (self.known("emptyAnswers") or ()),
            page_order=self.find_page_order(name))

    # what the plan of an operation says (before the plans are made: found)
    def planned(self, name, part, find):
        """`part` of the plan of operation `name`; while the plans are being made, `find(name)` finds it."""
        plan = self.plans.get(name)
        return getattr(plan, part) if plan is not None else find(name)

    def list_key(self, name):
        return self.planned(name, "list_key", self.find_list_key)

    def reader_of(self, name):
        return self.planned(name, "reader", self.find_reader_of)

    def reader_at(self, name):
        return self.planned(name, "creates_reader", self.find_reader_at)

    def record_kind(self, name):
        return self.planned(name, "record_kind", self.find_record_kind)

    def delete_template(self, name):
        return self.planned(name, "delete_template", self.find_delete_template)

    def delete_body(self, name):
        return self.planned(name, "delete_body", self.find_delete_body)

    def put_for(self, name):
        return self.planned(name, "put", self.find_put_for)

    def status_for(self, name, status):
        plan = self.plans.get(name)
        if plan is not None and status in plan.statuses:
            return plan.statuses[status]
        return self.find_status_for(name, status)      # a status the operation does not document

    def locates(self, name):
        return self.planned(name, "locates", self.find_locates)

    def list_shape(self, name):
        return self.planned(name, "shape", self.find_list_shape)

    def list_order(self, name):
        return self.planned(name, "order", self.find_list_order)

    def find_token_field(self, name):
        """The property of an operation's answer that holds a new user token, where the deployment gives the
        token itself there (`userToken`: a string) instead of the simulator's token record."""
        if self.known("userToken") != "string":
            return None
        _, schema = self.response_schema(name)
        for part in [self.deref(schema or {})] + self.deref(schema or {}).get("allOf", []):
            properties = self.deref(part).get("properties") or {}
            for key, prop in properties.items():
                if str(prop.get("$ref", "")).endswith("/Token"):
                    return key
        return None

    def number_ids(self, document):
        """Records whose ids the deployment shows as JSON numbers say so in the document: their `id`, and the
        properties that refer to one (`userId`)."""
        for component, schema in document.get("components", {}).get("schemas", {}).items():
            properties = schema.get("properties") or {}
            for key, prop in properties.items():
                kind = COMPONENT_KIND.get(component) if key == "id" else key_kind(key)
                form = self.ids.form(kind) if kind else None
                if form and form["form"] == "integer" and form.get("json") == "integer" and isinstance(prop, dict):
                    nullable = isinstance(prop.get("type"), list) and "null" in prop["type"]
                    prop["type"] = ["integer", "null"] if nullable else "integer"
                    prop.pop("format", None)
                    prop.pop("pattern", None)

    # -- the simulator's side -------------------------------------------------------------------------------
    def deref(self, node):
        return openapi_reading.deref(self.sim, node)

    def response_schema(self, name):
        return openapi_reading.success(self.sim_ops[name][2])

    def request_properties(self, name):
        body = self.sim_ops[name][2].get("requestBody") or {}
        schema = ((body.get("content") or {}).get("application/json") or {}).get("schema")
        return self.deref(schema or {}).get("properties") or {}

    def find_list_key(self, name):
        _, schema = self.response_schema(name)
        properties = self.deref(schema or {}).get("properties", {})
        if len(properties) != 1:
            return None
        key, value = next(iter(properties.items()))
        return key if value.get("type") == "array" else None

    # -- what the profile says, with its defaults -----------------------------------------------------------
    def default_renames(self):
        """A component's renames where every observed operation that answered it agreed: they apply to the
        operations the run did not observe (a deployment names a record one way)."""
        by_component = {}
        for by in self.records.values():
            for component, renames in by.items():
                by_component.setdefault(component, []).append(renames)
        return {c: found[0] for c, found in by_component.items() if found[0] and all(f == found[0] for f in found)}

    def renames_for(self, name, component):
        if component in self.records.get(name, {}):
            return self.records[name][component]
        return self.defaults.get(component, {})

    def find_status_for(self, name, status):
        creates = self.known("createStatus") or {}
        deletes = self.known("deleteStatus") or {}
        others = {**(self.known("revokeStatus") or {}), **(self.known("testEventStatus") or {})}
        if name in creates:
            return creates[name]
        if name in deletes:
            return deletes[name]["status"]
        if name in others:
            return others[name]
        method = self.sim_ops[name][0]
        if status == 201 and creates and len(set(creates.values())) == 1:
            return next(iter(creates.values()))
        if method == "DELETE" and status == 204 and deletes and len({d["status"] for d in deletes.values()}) == 1:
            return next(iter(deletes.values()))["status"]
        return status

    def find_delete_template(self, name):
        """The fixed body a DELETE answers (`{id}` for the id), where the deployment answers one."""
        deletes = self.known("deleteStatus") or {}
        answers = [d.get("answer") for d in ([deletes[name]] if name in deletes else deletes.values())]
        templates = [a["template"] for a in answers if isinstance(a, dict)]
        return templates[0] if templates and len(templates) == len(answers) else None

    def find_delete_body(self, name):
        deletes = self.known("deleteStatus") or {}
        if name in deletes:
            return deletes[name].get("body", False)
        return bool(deletes) and all(d.get("body") for d in deletes.values()) and self.sim_ops[name][0] == "DELETE"

    def find_list_order(self, name):
        if "pageReference" in REGISTRY[name].query:
            return None         # pages are ordered as `paging` says (find_page_order), not as lists of records
        orders = self.known("listOrder") or {}
        if name in orders:
            return orders[name]
        return next(iter(orders.values())) if len(set(orders.values())) == 1 else None

    def find_page_order(self, name):
        """The order of the entries of a paged list (transactions): oldest or newest first."""
        return (self.known("paging") or {}).get("order") if "pageReference" in REGISTRY[name].query else None

    def find_list_shape(self, name):
        lists = self.known("lists") or {}
        if name in lists:
            return lists[name]
        if lists and all(s["shape"] == "array" for s in lists.values()):
            return {"shape": "array"}
        return None

    # -- a request ------------------------------------------------------------------------------------------
    def route(self, method, path):
        for route in self.routes:
            values = route.match(method, path)
            if values is not None:
                return route, values
        return None, None

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/_sandbox"):        # the sandbox's own control API answers as it always does
            return self.app(environ, start_response)
        if path == "/openapi.json" and environ["REQUEST_METHOD"] == "GET":
            data = json.dumps(self.document).encode()
            return self.answer(start_response, 200, [("Content-Type", "application/json")], data)
        route, values = self.route(environ["REQUEST_METHOD"], path)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        api = route is not None or path.startswith(self.prefix + "/")
        if api and self.known("headers"):
            start_response = self.dressed(start_response)
        if route is None:
            if any(old.match(environ["REQUEST_METHOD"], path) is not None for old in self.moved):
                raw = environ["wsgi.input"].read(length) if length else b""
                return self.refused(environ, start_response, raw, None, "route",
                                    self.problem(404, "not-found", f"No operation at {path}.", path))
            if api and environ["REQUEST_METHOD"] in ("GET", "PUT", "POST", "PATCH", "DELETE"):
                return self.unrouted(environ, start_response, length)
            return self.app(environ, start_response)
        name = route.name
        raw = partner_raw = environ["wsgi.input"].read(length) if length else b""
        world, literals, shown_values = None, {}, list(values)
        if self.ids.active:
            world = self.claims(environ.get("HTTP_AUTHORIZATION", "")).get("wld")
            values = self.path_ids(route, world, values, literals)
            if values is None:
                return self.refused(environ, start_response, raw, name, "route",
                                    self.problem(self.malformed, "malformed-id", "not an id", path))
        refusal = self.refuse(name, values, environ) or self.out_of_bounds(name, environ)
        sim_path = route.sim_template
        for value in values:
            sim_path = re.sub(r"{[^}]+}", lambda _m, v=value: v, sim_path, count=1)
        body = json_of(raw) if raw else None
        fields = (self.operations.get(name) or {}).get("fields") or {}
        if fields and isinstance(body, dict):
            back = {theirs: mine for mine, theirs in fields.items()}
            body = {back.get(k, k): v for k, v in body.items()}
            raw = json.dumps(body).encode()
        if isinstance(body, dict) and self.clears(name):
            body = self.clear_absent(name, body)
            raw = json.dumps(body).encode()
        if self.ids.active and isinstance(body, dict):
            raw = json.dumps(self.ids.request(world, body, literals)).encode()
        before, reads = None, None
        if self.sim_ops[name][0] == "DELETE" and self.delete_body(name):
            template = self.delete_template(name)
            if template is not None:
                before = fill(template, shown_values[-1])
            else:           # the record as it was, read in the DELETE's own transaction (refuse_at)
                reads = self.reader_of(name)
        query = self.query(name, self.query_names(name, environ.get("QUERY_STRING", "")))
        if self.ids.active:
            query = self.query_ids(world, query, literals)
        query = self.unprefixed(name, query)
        query, paging = self.page_request(name, sim_path, query, environ)
        query, matching = self.own_filters(name, query)
        inner = {**environ, "PATH_INFO": sim_path, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw)),
                 "QUERY_STRING": query, PARTNER_REQUEST: self.partner(environ, name, partner_raw),
                 STAGE: {"refusal": refusal, "reads": reads, "put": self.put_check(name, partner_raw, path)}}
        if self.plans[name].page_order == "newest first":
            inner[PAGE_ORDER] = "newest first"
        chunks, status_line, answered = run_wsgi_app(self.app, inner, buffered=True)
        data = b"".join(chunks)
        status, headers = int(status_line.split()[0]), answered.to_wsgi_list()
        if inner[STAGE].get("answered"):        # the stage's own refusal, in the deployment's words already
            return self.answer(start_response, status, headers, data, inner[PARTNER_REQUEST])
        if reads is not None and inner[STAGE].get("record") is not None and 200 <= status < 300:
            before = inner[STAGE]["record"]
        if self.ids.active:     # in the simulator's words still: its field names say which ids are which
            headers, data = self.answer_ids(name, world, headers, data, literals)
            if before is not None and self.delete_template(name) is None:
                before = self.ids.answer(world, self.record_kind(name), before, literals)
        if matching and 200 <= status < 300:
            data = self.filtered(name, data, matching)
        status, headers, data = self.respond(name, status, headers, data, before, paging,
                                             not_json=bool(raw.strip()) and not parses(raw))
        return self.answer(start_response, status, headers, data, inner[PARTNER_REQUEST])

    # -- what a request leaves out, and how a filter matches ------------------------------------------------
    def find_put_for(self, name):
        """How a PUT treats what its body leaves out: the operation's own rule, else the one learned of PUTs."""
        put = self.known("put") or {}
        return (put.get("operations") or {}).get(name) or put

    def clears(self, name):
        put = self.put_for(name) if self.sim_ops[name][0] == "PUT" else {}
        return put.get("mode") == "replace" and put.get("partialStatus", 200) < 400

    def clear_absent(self, name, body):
        """A replacing PUT that accepts a partial body: every optional property it leaves out is cleared."""
        schema = ((self.sim_ops[name][2].get("requestBody") or {}).get("content") or {}).get("application/json", {})
        required = set(self.deref(schema.get("schema") or {}).get("required") or [])
        return {**{k: None for k in self.request_properties(name) if k not in body and k not in required}, **body}

    def own_filters(self, name, query):
        """The list filters the deployment matches otherwise than the simulator (ignoring case): taken from the
        query, to be applied to the simulator's unfiltered answer."""
        rules = (self.known("filters") or {}).get(name) or {}
        pairs = parse_qsl(query, keep_blank_values=True)
        matching = {k: v for k, v in pairs if rules.get(k) == "ignores case"}
        if not matching:
            return query, None
        return urlencode([(k, v) for k, v in pairs if k not in matching]), matching

    def filtered(self, name, data, matching):
        body, key = json_of(data), self.list_key(name)
        if not isinstance(body, dict) or not isinstance(body.get(key), list):
            return data
        body[key] = [e for e in body[key] if isinstance(e, dict) and all(
            str(e.get(field, "")).casefold() == wanted.casefold() for field, wanted in matching.items())]
        return json.dumps(body).encode()

    def query_names(self, name, query):
        """The query in the simulator's parameter names; a simulator name the deployment does not have is, like
        any parameter unknown to it, ignored."""
        renames = (self.operations.get(name) or {}).get("parameters") or {}
        if not renames:
            return query
        back = {theirs: mine for mine, theirs in renames.items()}
        pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in renames or k in back]
        return urlencode([(back.get(k, k), v) for k, v in pairs])

    def out_of_bounds(self, name, environ):
        """A query parameter beyond a bound the deployment sets and the simulator does not: refused as the
        simulator refuses a parameter beyond its own."""
        where = self.operations.get(name) or {}
        renames = where.get("parameters") or {}
        sent = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        for mine, bound in (where.get("bounds") or {}).items():
            theirs = renames.get(mine, mine)
            value = sent.get(theirs, "")
            if not re.fullmatch(r"-?\d+", value):
                continue
            low, high = bound.get("minimum"), bound.get("maximum")
            if (high is not None and int(value) > high) or (low is not None and int(value) < low):
                return "admitted", self.problem(
                    400, "invalid-parameter", f"Query parameter `{theirs}` is not valid: {value!r} "
                    f"(expected {'' if low is None else low}..{'' if high is None else high}).",
                    environ["PATH_INFO"], title=InvalidParameter.title, parameter=theirs)
        return None

    def find_reader_at(self, name):
        """The GET of one record under a create's path (`/users/{id}` for POST /users)."""
        path = self.sim_ops[name][1]
        return next((n for n, (m, p, _) in self.sim_ops.items()
                     if m == "GET" and re.fullmatch(re.escape(path) + r"/{[^}/]+}", p)), None)

    def find_locates(self, name):
        """Whether a create's answer names the new record in Location: as learned of it, else as every create
        seen (with a record to read) did."""
        told = self.known("locations") or {}
        if self.sim_ops[name][0] != "POST" or self.reader_at(name) is None:
            return False
        if name in told:
            return told[name]
        seen = [v for op, v in told.items() if op in self.sim_ops and self.reader_at(op)]
        return bool(seen) and all(seen) and any(s == "201" for s in self.sim_ops[name][2].get("responses", {}))

    def location(self, name, body):
        reader = self.reader_at(name)
        template = (self.operations.get(reader) or {}).get("path") or self.sim_ops[reader][1]
        return re.sub(r"{[^}]+}$", str(body.get("id")), template)

    # -- ids in the deployment's form -----------------------------------------------------------------------
    def path_ids(self, route, world, values, literals):
        """The path's ids as the simulator's UUIDs; None when one is not of the deployment's form."""
        out, previous, kinds = [], None, []
        for segment in route.sim_template.split("/"):
            param = re.fullmatch(r"{([^}]+)}", segment)
            if param:
                kinds.append(SEGMENT_KIND.get(previous or "") if param.group(1) == "id" else key_kind(param.group(1)))
            previous = segment
        for value, kind in zip(values, kinds):
            found = self.ids.back(world, kind, value) if kind and value != "self" else value
            if found is MALFORMED and self.malformed != 404:
                return None
            if found is MALFORMED:      # answered as an unknown id is: the simulator's own not-found
                found = self.ids.nowhere(world, kind, value)
            if found != value:
                literals[found] = value
            out.append(found)
        return out

    def query_ids(self, world, query, literals):
        pairs = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            kind = key_kind(key)
            found = self.ids.back(world, kind, value) if kind else value
            if found is not MALFORMED and found != value:
                literals[found] = value
                value = found
            pairs.append((key, value))
        return urlencode(pairs)

    def find_record_kind(self, name):
        """The kind of record an operation answers with (its own `id` is of that kind)."""
        _, schema = self.response_schema(name)
        component = component_of(schema or {})
        if component in COMPONENT_KIND:
            return COMPONENT_KIND[component]
        return next((SEGMENT_KIND[s] for s in reversed(self.sim_ops[name][1].split("/")) if s in SEGMENT_KIND), None)

    def answer_ids(self, name, world, headers, data, literals):
        kind = next((v for k, v in headers if k.lower() == "content-type"), "")
        headers = [(k, self.ids.text(world, v, literals, self.record_kind(name)) if k.lower() == "location" else v)
                   for k, v in headers]
        body = json_of(data) if data and "json" in kind else None
        if body is None:
            return headers, data
        if "problem+json" in kind:
            body = self.ids.texts(world, body, literals)
        else:
            body = self.ids.answer(world, self.record_kind(name), body, literals)
        return headers, json.dumps(body).encode()

    def query(self, name, query):
        """The deployment's page size where the client names none (the simulator's pages hold 100)."""
        size = (self.known("paging") or {}).get("pageSize")
        if self.plans[name].paged and size and not re.search(r"(^|&)pageSize=", query):
            return f"{query}&pageSize={size}" if query else f"pageSize={size}"
        return query

    def paging_form(self):
        """(offset | page | opaque, the first page's number, the link the reference is in or None)."""
        paging = self.known("paging") or {}
        form = {"integer": "offset"}.get(paging.get("referenceForm"), paging.get("referenceForm"))
        return form, paging.get("firstPage", 1), paging.get("url")

    def prefixes(self):
        """The prefix the deployment writes before each kind of page reference (`next.`, `prev.`)."""
        return (self.known("paging") or {}).get("prefixes") or {}

    def unprefixed(self, name, query):
        """The simulator's reference inside one of the deployment's prefixed ones. A reference without either
        prefix is not one the deployment gave: it goes on marked, so the simulator refuses it as malformed."""
        prefixes = tuple(self.prefixes().values())
        if not self.plans[name].paged or not prefixes:
            return query
        pairs = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            if key == "pageReference":
                prefix = next((p for p in prefixes if value.startswith(p)), None)
                value = value[len(prefix):] if prefix else "~" + value
            pairs.append((key, value))
        return urlencode(pairs)

    def page_request(self, name, sim_path, query, environ):
        """The simulator's reference for the one the client sent in the deployment's form: an offset or a page
        number this layer gave (one it never gave goes on as it came, and the simulator refuses it), the reference
        inside a link (sent back as pageReference, or the link followed); and what the answer needs to give
        references of that form."""
        form, first, link = self.paging_form()
        if not self.plans[name].paged or (form not in ("offset", "page") and not link):
            return query, None
        parameter = (link or {}).get("parameter", "pageReference")
        pairs = parse_qsl(query, keep_blank_values=True)
        given = next((v for k, v in pairs if k == parameter), None)
        if given is None:
            given = next((v for k, v in pairs if k == "pageReference"), None)
        if link and given is not None and given.startswith(("http://", "https://", "/")):
            given = dict(parse_qsl(urlsplit(given).query)).get(parameter, given)
        rest = sorted((k, v) for k, v in pairs if k not in ("pageReference", parameter))
        key, position = f"{form} {sim_path}?{urlencode(rest)}", (first if form == "page" else 0)
        world = self.claims(environ.get("HTTP_AUTHORIZATION", "")).get("wld")
        reference = given
        if form in ("offset", "page") and given is not None and given.isdigit() and len(given) < 19 and world:
            found = page_at(self.store, world, key, int(given))
            if found is not None:
                reference, position = found, int(given)
        size = dict(rest).get("pageSize", "")
        shown = [(k, v) for k, v in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
                 if k not in ("pageReference", parameter)]
        base = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', 'localhost')}" \
            if (link or {}).get("absolute") else ""
        return urlencode(rest + ([("pageReference", reference)] if given is not None else [])), {
            "key": key, "world": world, "form": form, "position": position, "first": first, "link": link,
            "size": int(size) if size.isdigit() else None, "href": (base + environ.get("PATH_INFO", ""), shown)}

    def page_answer(self, body, paging):
        """A page's references in the deployment's form: offsets (the next page starts after this one's entries,
        the previous one a page size before it) or page numbers, each remembered for the simulator's own
        reference; inside a link to the page where the deployment's references are links."""
        entries = next((v for v in body.values() if isinstance(v, list)), [])
        form, position = paging["form"], paging["position"]
        size = paging["size"] or max(len(entries), 1)
        positions = {"offset": {"nextPageReference": position + len(entries),
                                "previousPageReference": max(0, position - size)},
                     "page": {"nextPageReference": position + 1,
                              "previousPageReference": max(paging["first"], position - 1)}}.get(form, {})
        for field in ("nextPageReference", "previousPageReference"):
            if not body.get(field):
                continue
            value = body[field]
            if field in positions and paging["world"]:
                remember_page(self.store, paging["world"], paging["key"], positions[field], value)
                value = str(positions[field])
            if paging["link"]:
                path, shown = paging["href"]
                value = f"{path}?{urlencode(shown + [(paging['link']['parameter'], value)])}"
            body[field] = value
        return body

    def refuse(self, name, values, environ):
        """The deployment's own refusals that need no record: (the point of the request it comes at, (status,
        headers, body)), or None. The simulator answers them at that point (hooks.py: refuse), so they are
        journaled, and counted where they come after the admission, like any answer."""
        point = self.plans[name].id_check
        if point is not None:
            first = values[self.sim_ops[name][1].split("{id}")[0].count("{")]
            if first != "self" and not UUID.match(first):
                return point, self.problem(self.malformed, "malformed-id", f"{first!r} is not an id",
                                           environ["PATH_INFO"])
        deploy = self.known("deployTokens") or {}
        if name == "CreatePartnerToken" and deploy.get("createsChildTokens") is False:
            if self.claims(environ.get("HTTP_AUTHORIZATION", "")).get("scope") == "partner:create":
                # a refusal of the token's scope: where the simulator refuses a scope, before the token is used
                return "scope", self.problem(deploy.get("status", 403), "deploy-token",
                                             "a deploy token creates child partners only", environ["PATH_INFO"])
        return None

    def put_check(self, name, raw, path):
        """What a replacing PUT that refuses a partial body needs to judge one against the record (refuse_at):
        the simulator's names of the properties sent."""
        put = self.put_for(name)
        if not (put.get("mode") == "replace" and self.sim_ops[name][0] == "PUT" and put.get("partialStatus", 200)
                >= 400):
            return None
        body = json_of(raw) if raw else None
        if not isinstance(body, dict):
            return None
        fields = (self.operations.get(name) or {}).get("fields") or {}
        back = {theirs: mine for mine, theirs in fields.items()}
        return {"name": name, "sent": {back.get(k, k) for k in body}, "status": put["partialStatus"], "path": path}

    def refuse_at(self, point, op, call):
        """The refuse stage (hooks.py): this request's refusal where it comes; once admitted, in the operation's
        own transaction, the record a partial PUT is judged against and the record a DELETE answers, read in
        process (no request of the stage's own: none is journaled or counted as the partner's)."""
        stage = request.environ.get(STAGE)
        if stage is None:
            return None
        refusal = stage.get("refusal")
        if refusal is not None and refusal[0] == point:
            stage["answered"] = True
            status, headers, data = refusal[1]
            return Response(data, status, headers)
        if point != "admitted" or call is None:
            return None
        put = stage.get("put")
        if put is not None and self.reader_of(put["name"]):
            record = self.read_in_process(self.reader_of(put["name"]), call)
            if isinstance(record, dict):
                fields = (self.operations.get(put["name"]) or {}).get("fields") or {}
                missing = sorted(fields.get(k, k) for k in self.request_properties(put["name"])
                                 if record.get(k) is not None and k not in put["sent"])
                if missing:
                    stage["answered"] = True
                    status, headers, data = self.problem(
                        put["status"], "partial-put", f"PUT replaces the record: {', '.join(missing)} missing from "
                        "the body", put["path"])
                    return Response(data, status, headers)
        if stage.get("reads"):
            stage["record"] = self.read_in_process(stage["reads"], call)
        return None

    @staticmethod
    def read_in_process(reader, call):
        """The answer of the GET `reader` at the same path, by its handler in this request's transaction: the
        caller's own view of the record, or None where it sees none."""
        try:
            result = REGISTRY[reader].handler(call)
        except Problem:
            return None
        body = result.body if isinstance(result, Answer) else result
        return json.loads(json.dumps(body)) if isinstance(body, dict) else None

    def through_app(self, environ, raw, name, **stage):
        """(status, headers, body, the partner's request) of the app's answer to the request as it came, its body
        `raw`; the journal files it as the partner sent it."""
        inner = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw)),
                 PARTNER_REQUEST: self.partner(environ, name, raw), **({STAGE: stage} if stage else {})}
        chunks, status_line, answered = run_wsgi_app(self.app, inner, buffered=True)
        return int(status_line.split()[0]), answered.to_wsgi_list(), b"".join(chunks), inner[PARTNER_REQUEST]

    def refused(self, environ, start_response, raw, name, point, answer):
        """A refusal of the stage's own that needs no operation: handed to the app, which answers it at `point`
        with the other stages around it (the journal files it)."""
        return self.answer(start_response, *self.through_app(environ, raw, name, refusal=(point, answer)))

    def unrouted(self, environ, start_response, length):
        """A path of the API that is no operation's (one the spec removed, a mistyped one): the simulator's answer,
        its problem in the deployment's words (a removed path's status with them)."""
        raw = environ["wsgi.input"].read(length) if length else b""
        status, headers, data, partner = self.through_app(environ, raw, None)
        if "problem+json" in next((v for k, v in headers if k.lower() == "content-type"), ""):
            status, headers, data = self.restyle_problem(status, headers, data)
        return self.answer(start_response, status, headers, data, partner)

    def dressed(self, start_response):
        """start_response giving every answer the headers the deployment sends on every answer."""
        learned = self.known("headers")

        def start(status, headers, exc_info=None):
            headers = dressing.with_headers(list(headers), learned)
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
        return start

    def partner(self, environ, name, raw):
        """The request as the partner sent it, for the journal (hooks.py: PARTNER_REQUEST)."""
        operation = ((self.operations.get(name) or {}).get("operationId") or name) if name else None
        return {"method": environ["REQUEST_METHOD"], "path": environ.get("PATH_INFO", ""),
                "query": environ.get("QUERY_STRING", ""), "operationId": operation, "body": raw}

    @staticmethod
    def id_checked_at(ids):
        """The point of the request where the deployment checks an id's form (hooks.py: refuse): before the token,
        between the token and its scope, or after both (a caller without them meets that refusal first)."""
        order = ids.get("checks") or {}
        if order.get("beforeToken", True):
            return "token"
        if order.get("beforeScope", True):
            return "scope"
        return "admitted"

    def problem(self, status, situation, detail, instance=None, title=None, **members):
        """A refusal of the layer's own, typed as the deployment typed it in the same situation, else as it
        types the simulator's nearest kind of problem; with the members it had in that situation (else those
        of any)."""
        problems = self.known("problems") or {}
        types = problems.get("types") or {}
        nearest = FALLBACK.get(situation, situation)
        kind = types.get(situation) or types.get(nearest) or (
            common_prefix(types) + nearest if common_prefix(types) else one_type(types) or SIM_TYPE + nearest)
        body = {"type": kind, "title": title or detail, "status": status, "detail": detail, **members}
        if instance:
            body["instance"] = instance
        if self.trace is not None:
            body["traceId"] = self.trace()
        if problems.get("titles") == "reason":
            body["title"] = reason(status)
        situations = problems.get("situations") or {}
        if situations.get(situation):
            body = {k: v for k, v in body.items() if k in situations[situation]}
        elif problems.get("members"):   # the members every problem may carry, and this situation's own
            body = {k: v for k, v in body.items() if k in problems["members"] or k not in COMMON_MEMBERS}
        return status, self.problem_media([("Content-Type", "application/problem+json")]), json.dumps(body).encode()

    def problem_media(self, headers):
        """A problem's Content-Type as the deployment serves problems (application/json for some)."""
        media = (self.known("problems") or {}).get("mediaType")
        if not media:
            return headers
        return [(k, v) for k, v in headers if k.lower() != "content-type"] + [("Content-Type", media)]

    # -- an answer ------------------------------------------------------------------------------------------
    def respond(self, name, status, headers, data, before, paging=None, not_json=False):
        kind = next((v for k, v in headers if k.lower() == "content-type"), "")
        if "problem+json" in kind:
            return self.restyle_problem(status, headers, data, not_json)
        if not 200 <= status < 300:
            return status, headers, data
        new_status = self.status_for(name, status)
        body = json_of(data) if data else None
        if isinstance(body, dict) and body.get("id") is not None and self.locates(name):
            headers = [(k, v) for k, v in headers if k.lower() != "location"] + \
                [("Location", self.location(name, body))]
        if self.plans[name].empty:      # the deployment answers it without a body
            return new_status, headers, b""
        if body is None and before is not None and new_status != 204:
            body = before
            headers = [(k, v) for k, v in headers if k.lower() != "content-type"] + \
                [("Content-Type", "application/json")]
        if body is None:
            return new_status, headers, data if new_status != 204 else b""
        if paging and isinstance(body, dict):
            body = self.page_answer(body, paging)
        if self.plans[name].paged and isinstance(body, dict):
            for field, prefix in self.prefixes().items():
                if body.get(field):
                    body[field] = prefix + str(body[field])
        _, schema = self.response_schema(name)
        if before is not None and body is before:
            if self.delete_template(name) is not None:
                return new_status, headers, json.dumps(body).encode()
            schema = self.response_schema(self.reader_of(name))[1] if self.reader_of(name) else None
        body = self.reshape(name, schema, body)
        if new_status == 204:
            return 204, [(k, v) for k, v in headers if k.lower() != "content-type"], b""
        return new_status, headers, json.dumps(body).encode()

    def find_reader_of(self, name):
        """The GET at the same path as a DELETE (the record it answers with, where the deployment does)."""
        path = self.sim_ops[name][1]
        return next((n for n, (m, p, _) in self.sim_ops.items() if m == "GET" and p == path), None)

    def restyle_problem(self, status, headers, data, not_json=False):
        body = json_of(data)
        if not isinstance(body, dict):
            return status, headers, data
        problems = self.known("problems") or {}
        slug = str(body.get("type", ""))[len(SIM_TYPE):] if str(body.get("type", "")).startswith(SIM_TYPE) else None
        invalid = self.known("invalidBody") or {}
        refused = invalid.get("notJson") if not_json and invalid.get("notJson") else invalid.get("status")
        if slug == "invalid-body" and refused:
            status = body["status"] = refused
        if slug == "invalid-body" and "errors" in body:
            body["errors"] = dressing.errors_in(invalid.get("errors"), body["errors"])
        gone = (self.known("removedPaths") or {}).get("status")
        if slug == "removed" and gone:
            status = body["status"] = gone
        types = problems.get("types") or {}
        if slug and slug in types:
            body["type"] = types[slug]
        elif slug and common_prefix(types):
            body["type"] = common_prefix(types) + slug
        elif slug and one_type(types):
            body["type"] = one_type(types)
        if problems.get("titles") == "reason":
            body["title"] = reason(status)
        headers = self.problem_media(headers)
        rate = (self.known("rateLimit") or {}) if status == 429 else {}
        if rate:
            headers = self.rate_headers(headers, body, rate["headers"])
            if rate.get("retryAfter") == "http-date" and self.system_time is not None:
                headers = [(k, v if k.lower() != "retry-after" or not v.isdigit() else
                            formatdate(self.system_time() / 1e6 + int(v), usegmt=True)) for k, v in headers]
        if rate.get("members"):         # learned in this very situation: its extension members too
            body = {k: v for k, v in body.items() if k in rate["members"]}
        elif problems.get("members"):   # learned in other situations: the members every problem may carry
            body = {k: v for k, v in body.items() if k in problems["members"] or k not in COMMON_MEMBERS}
        return status, headers, json.dumps(body).encode()

    @staticmethod
    def rate_headers(headers, body, learned):
        """A 429's rate-limit headers as the deployment sends them: those it sends, from the simulator's own
        window (its limit, its length, the wait before a retry), and no other."""
        wait = next((v for k, v in headers if k.lower() == "retry-after"), "1")
        limit, window = body.get("limit"), body.get("windowSeconds")
        known_limit = limit is not None and window is not None
        values = {"retry-after": wait, "ratelimit-limit": limit, "ratelimit-remaining": 0, "ratelimit-reset": wait,
                  "ratelimit-policy": f"{limit};w={window}" if known_limit else None,
                  "ratelimit": f"limit={limit}, remaining=0, reset={wait}" if known_limit else None}
        values.update({f"x-{k}": values[k] for k in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")})
        kept = [(k, v) for k, v in headers if k.lower() not in values]
        return kept + [(name.title().replace("Ratelimit", "RateLimit"), str(values[name]))
                       for name in learned if name in values and values[name] is not None]

    def reshape(self, name, schema, body):
        body = self.dress(schema, body, self.left_out.get(name, self.left_out[None]))
        key = self.list_key(name)
        if self.list_order(name) == "by name" and key and isinstance(body, dict) and isinstance(body.get(key), list):
            body[key] = sorted(body[key], key=lambda e: (str(e.get("name") or "").casefold(), str(e.get("id")))
                               if isinstance(e, dict) else ("", ""))
        body = self.rename(name, schema, body)
        if key and isinstance(body, dict) and isinstance(body.get(key), list):
            entries = body[key]
            summary = (self.known("listEntries") or {}).get(name)
            if summary:
                entries = [{k: v for k, v in e.items() if k in summary["keys"]} if isinstance(e, dict) else e
                           for e in entries]
            if self.list_order(name) == "newest first" and self.plans[name].created_list:
                entries = entries[::-1]
            shape = self.list_shape(name)
            if shape and shape["shape"] == "array":
                return entries
            body = {(shape or {}).get("key", key) if k == key else k: (entries if k == key else v)
                    for k, v in body.items()}
            if (shape or {}).get("count"):
                body[shape["count"]] = len(entries)
        field = self.plans[name].token_field
        if field and isinstance(body, dict) and isinstance(body.get(field), dict):
            body[field] = body[field].get("accessToken")
        return body

    def dress(self, schema, body, left_out):
        """Record members in the deployment's JSON types, members (`left_out`: this operation's, self.left_out)
        and null members it leaves out left out (dressing.py)."""
        types, omit = self.known("memberTypes") or {}, self.known("nulls") == "omitted"
        return dressing.dress(self.sim, schema, body, types, omit, left_out) \
            if (types or omit or left_out) and schema else body

    def rename(self, name, schema, value, depth=0):
        """The answer with each record's properties named as the deployment names them."""
        if not isinstance(schema, dict) or not self.renames_within(name, schema, depth):     # nor deeper than 8
            return value
        component = component_of(schema)
        schema = self.deref(schema)
        if isinstance(value, dict) and schema.get("allOf"):
            for part in schema["allOf"]:       # each part renames the properties it declares
                value = self.rename(name, part, value, depth + 1)
            return value
        if isinstance(value, dict):
            properties = schema.get("properties") or {}
            out = {k: self.rename(name, properties[k], v, depth + 1) if k in properties else v
                   for k, v in value.items()}
            renames = self.renames_for(name, component) if component else {}
            return {renames.get(k, k): v for k, v in out.items()}
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            return [self.rename(name, schema["items"], v, depth + 1) for v in value]
        return value

    def renames_within(self, name, schema, depth=0):
        """Whether `rename` may change a value of this schema, decided once per schema: most answers (a page of
        transactions) hold no renamed property at any depth, and pass without a walk."""
        key = (name, id(schema), depth)
        found = self.renaming.get(key)
        if found is None:
            found = self.renaming[key] = self._renames_within(name, schema, depth)
        return found

    def _renames_within(self, name, schema, depth):
        if depth > 8 or not isinstance(schema, dict):
            return False
        component = component_of(schema)
        if component and self.renames_for(name, component):
            return True
        schema = self.deref(schema)
        parts = [*(schema.get("allOf") or ()), *(schema.get("properties") or {}).values(), schema.get("items")]
        return any(self.renames_within(name, part, depth + 1) for part in parts if isinstance(part, dict))

    @staticmethod
    def answer(start_response, status, headers, data, partner=None):
        """The answer as the partner gets it; the journal files it so (hooks.py: PARTNER_REQUEST). An answer without
        a body has no content to give a type (RFC 9110 §8.3): it carries no Content-Type."""
        if not data:
            headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
        if partner is not None and partner.get("answered"):
            media = next((v for k, v in headers if k.lower() == "content-type"), "")
            partner["answered"](status, media.partition(";")[0].strip().lower(), data)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        start_response(f"{status} {reason(status)}", headers + [("Content-Length", str(len(data)))])
        return [data]

    # -- the document ---------------------------------------------------------------------------------------
    def publish(self, document):
        """The simulator's document as the deployment's: its paths, names, shapes and statuses."""
        paths = {}
        for path, item in document["paths"].items():
            for method, op in item.items():
                if not isinstance(op, dict) or method not in METHODS:
                    paths.setdefault(path, {})[method] = op
                    continue
                name = op.get("operationId")
                where = self.operations.get(name)
                if where:
                    op = self.publish_operation(name, op, where)
                    paths.setdefault(where["path"], {})[where["method"].lower()] = op
                else:
                    if name in self.sim_ops:
                        op = self.publish_operation(name, op, {})
                    paths.setdefault(path, {})[method] = op
        document["paths"] = paths
        for name, shape in (self.known("lists") or {}).items():
            component = component_of(self.response_schema(name)[1] or {}) if name in self.sim_ops else None
            schema = document.get("components", {}).get("schemas", {}).get(component)
            if shape.get("count") and isinstance(schema, dict):
                schema["properties"] = {**schema.get("properties", {}), **counted(shape)}
                schema["required"] = [*schema.get("required", []), shape["count"]]
        document = self.publish_problems(document)
        dressing.publish_headers(document, self.known("headers") or {})
        return document

    def publish_problems(self, document):
        """Problems as the deployment documents them: their media type, their one type, the status of a body
        that is not JSON. The control API under /_sandbox stays the simulator's."""
        problems = self.known("problems") or {}
        media = problems.get("mediaType") or "application/problem+json"
        not_json = (self.known("invalidBody") or {}).get("notJson")
        schema = document.get("components", {}).get("schemas", {}).get("ProblemDetails")
        constant = one_type(problems.get("types") or {})
        if problems.get("properties") and isinstance(schema, dict):      # the members its document gives them
            schema["properties"] = copy.deepcopy(problems["properties"])
            schema["required"] = [r for r in schema.get("required", []) if r in schema["properties"]]
        if constant and isinstance(schema, dict):
            schema.setdefault("properties", {})["type"] = {"type": "string", "enum": [constant], "default": constant}
        rate = self.known("rateLimit") or {}
        for path, item in document["paths"].items():
            for op in (item.values() if not path.startswith("/_sandbox") else ()):
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                limited = op["responses"].get("429")
                if isinstance(limited, dict) and rate.get("documented"):
                    op["responses"]["429"] = limited = copy.deepcopy(limited)
                    limited.setdefault("headers", {})["Retry-After"] = {
                        "description": "when to retry", "schema": {"type": "string", "format": "http-date"}
                        if rate.get("retryAfter") == "http-date" else {"type": "integer", "minimum": 0}}
                if not_json and op.get("requestBody") and str(not_json) not in op["responses"]:
                    op["responses"][str(not_json)] = {"description": "The request body is not JSON", "content": {
                        "application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}}
                for code, response in op["responses"].items():
                    content = response.get("content") if isinstance(response, dict) else None
                    if media != "application/problem+json" and content and "application/problem+json" in content:
                        op["responses"][code] = response = copy.deepcopy(response)
                        response["content"][media] = response["content"].pop("application/problem+json")
        return document

    def publish_operation(self, name, op, where):
        op = copy.deepcopy(op)
        if where.get("operationId"):
            op["operationId"] = where["operationId"]
        names = re.findall(r"{([^}]+)}", where.get("path", ""))
        params = [p for p in op.get("parameters", []) if p.get("in") == "path"]
        for parameter, new in zip(params, names):
            parameter["name"] = new
        for parameter in op.get("parameters", []):
            if parameter.get("in") == "query":
                bound = (where.get("bounds") or {}).get(parameter.get("name")) or {}
                parameter["schema"] = {k: v for k, v in {**(parameter.get("schema") or {}), **bound}.items()
                                       if v is not None}       # None: the deployment sets no such bound
                parameter["name"] = (where.get("parameters") or {}).get(parameter["name"], parameter["name"])
        fields = where.get("fields") or {}
        content = ((op.get("requestBody") or {}).get("content") or {}).get("application/json")
        if content and content.get("schema") and fields:
            schema = copy.deepcopy(self.deref(content["schema"]))
            schema["properties"] = {fields.get(k, k): v for k, v in (schema.get("properties") or {}).items()}
            schema["required"] = [fields.get(k, k) for k in schema.get("required", [])]
            schema.pop("example", None)
            content.pop("example", None)
            content["schema"] = schema
        if self.plans[name].page_order == "newest first":
            op["description"] = (op.get("description", "") + " Pages hold the newest entries first: "
                                 "nextPageReference leads to older ones, previousPageReference to newer ones.").strip()
        put = self.put_for(name)
        if op.get("operationId") and self.sim_ops[name][0] == "PUT" and put.get("mode") == "replace":
            op["description"] = (op.get("description", "") + (
                " PUT replaces the whole record: send every property of the record, changed or not."
                if put.get("partialStatus", 200) >= 400 else
                " PUT replaces the record: a property left out of the body is cleared.")).strip()
        responses = {}
        for status, response in (op.get("responses") or {}).items():
            code = int(status) if str(status).isdigit() else status
            if isinstance(code, int) and 200 <= code < 300:
                response = copy.deepcopy(response)
                media = (response.get("content") or {}).get("application/json")
                if media and media.get("schema") and self.reshapes(name, media["schema"]):
                    media["schema"] = self.publish_schema(name, media["schema"])
                new = self.status_for(name, code)
                template = self.delete_template(name) if code == 204 else None
                if new != 204 and template is not None:
                    response = {"description": "Success: the deletion acknowledged",
                                "content": {"application/json": {"schema": {"type": "object"}, "example": template}}}
                elif new != 204 and code == 204 and self.delete_body(name) and self.reader_of(name):
                    reader = self.response_schema(self.reader_of(name))[1]
                    response = {"description": "Success: the deleted record",
                                "content": {"application/json": {"schema": self.publish_schema(name, reader)}}}
                if self.locates(name) and new != 204:
                    response = copy.deepcopy(response)
                    response.setdefault("headers", {})["Location"] = {
                        "description": "the address of the new record", "schema": {"type": "string"}}
                if new == 204 or self.plans[name].empty:      # no content: its status and headers alone
                    response = {"description": response.get("description", "Success"),
                                **({"headers": response["headers"]} if response.get("headers") else {})}
                responses[str(new)] = response
            else:
                responses[str(status)] = response
        op["responses"] = responses
        return op

    def reshapes(self, name, schema):
        """Whether the profile changes this operation's answer (otherwise its schema keeps its $refs)."""
        plain = json.dumps(self.deref_all(schema), sort_keys=True)
        return json.dumps(self.publish_schema(name, schema), sort_keys=True) != plain

    def deref_all(self, schema, depth=0):
        if depth > 8 or not isinstance(schema, (dict, list)):
            return schema
        if isinstance(schema, list):
            return [self.deref_all(v, depth + 1) for v in schema]
        return {k: self.deref_all(v, depth + 1) for k, v in self.deref(schema).items()}

    def publish_schema(self, name, schema, depth=0):
        """A response schema inlined, with the deployment's names and shapes."""
        if depth > 8 or not isinstance(schema, dict):
            return schema
        component = component_of(schema)
        node = copy.deepcopy(self.deref(schema))
        renames = self.renames_for(name, component) if component else {}
        if "properties" in node:
            node["properties"] = {renames.get(k, k): self.publish_schema(name, v, depth + 1)
                                  for k, v in node["properties"].items()}
            if "required" in node:
                node["required"] = [renames.get(k, k) for k in node["required"]]
        if isinstance(node.get("items"), dict):
            node["items"] = self.publish_schema(name, node["items"], depth + 1)
        for key in ("allOf", "oneOf", "anyOf"):
            if isinstance(node.get(key), list):
                node[key] = [self.publish_schema(name, part, depth + 1) for part in node[key]]
        if depth == 0:
            key = self.list_key(name)
            if key and key in node.get("properties", {}):
                items = node["properties"][key]
                summary = (self.known("listEntries") or {}).get(name)
                if summary and isinstance(items.get("items"), dict):
                    entry = items["items"]
                    entry["properties"] = {k: v for k, v in entry.get("properties", {}).items()
                                           if k in summary["keys"]}
                    entry["required"] = [k for k in entry.get("required", []) if k in summary["keys"]]
                shape = self.list_shape(name)
                if shape and shape["shape"] == "array":
                    return items
                if shape:
                    node["properties"] = {shape["key"]: items, **counted(shape)}
                    node["required"] = [shape["key"], *counted(shape)]
            field = self.plans[name].token_field
            if field and field in node.get("properties", {}):
                node["properties"][field] = {"type": "string", "description": "the first user token"}
        return node
