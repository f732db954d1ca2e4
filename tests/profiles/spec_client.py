"""A partner client written from the spec alone: the same requests against any target, and what it observes.

It knows only the spec's words; paths, operationIds and field names come from the target's own document (the
harness's resolver and body builder, as a client generated from that document would). What it observes is
what such a client can rely on: the status, the content type, every success body (ids, tokens, instants and
trace ids stand for their kind), and the members, type and status of a ProblemDetails body (its wording is the
target's own).
"""

import re
from urllib.parse import parse_qsl, urlsplit

from ptas_sandbox.conformance.bodies import Bodies, identifier
from ptas_sandbox.conformance.client import Client, WsgiTransport, parse_json
from ptas_sandbox.conformance.resolver import Operations, parse_override
from ptas_sandbox.conformance.steps.account_types import form_for

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
KEY = re.compile(r"\b[0-9a-f]{64}\b")       # a hosted page's key: an HMAC under each server's own secret
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normal(value, key=None):
    if key in ("traceId", "secret"):
        return f"<{key}>"
    if isinstance(value, dict):
        return {k: normal(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return KEY.sub("<key>", INSTANT.sub("<instant>", JWT.sub("<jwt>", UUID.sub("<uuid>", value))))
    return value


def entries_of(body):
    return next((v for v in body.values() if isinstance(v, list)), []) if isinstance(body, dict) else []


def reference_form(reference):
    """What a client can tell of a page reference: a number (an offset or a page number, as it is), a link (where
    it points and what its query holds), or an opaque string."""
    if reference is None:
        return None
    text = str(reference)
    if text.isdigit():
        return text
    if text.startswith(("http://", "https://", "/")):
        link = urlsplit(text)
        return {"link": normal(f"{link.scheme}://{link.netloc}{link.path}"),
                "query": sorted((k, reference_form(v)) for k, v in parse_qsl(link.query))}
    return "opaque"


def page_shape(body):
    entries = entries_of(body)
    body = body if isinstance(body, dict) else {}
    forms = {k: reference_form(v) for k, v in body.items() if k.endswith("PageReference")}
    return {"keys": sorted(body), "entries": len(entries), "entry keys": sorted(entries[0]) if entries else [],
            "references": forms}


def unused(known):
    """An id of the same form as a known one that no record has: its last character changed."""
    if isinstance(known, int):
        return known + 1000
    text = str(known)
    last = text[-1]
    other = str((int(last) + 5) % 10) if last.isdigit() else ("a" if last.lower() != "a" else "b")
    return text[:-1] + (other.upper() if last.isupper() else other)


class SpecClient:
    def __init__(self, app, token, overrides=()):
        transport = WsgiTransport(app)
        document = parse_json(transport.send("GET", "/openapi.json", {}, None, None)[2])
        self.ops = Operations(document, dict(parse_override(o) for o in overrides))
        self.bodies = Bodies(self.ops)
        self.client = Client(transport, self.ops)
        self.token = token
        self.seen = []

    def call(self, label, name, params=None, build=None, json=None, token=None):
        if build is not None:
            json = self.bodies.build(name, build)
        extra = {} if json is None else {"json": json}
        reply = self.client.call(name, token=token or self.token, params=params, **extra)
        if reply.status == 204:
            observed = ""           # a 204 has no content (RFC 9110 §15.3.5), whatever bytes follow it
        elif reply.content_type == "application/problem+json":
            body = reply.body if isinstance(reply.body, dict) else {}
            observed = {"members": sorted(body), "type": body.get("type"), "status": body.get("status")}
        else:
            observed = normal(reply.body if reply.body is not None else reply.text)
        self.seen.append((label, reply.status, reply.content_type, observed))
        return reply

    def page(self, label, account_id, reference=None):
        """A page of an account's transactions as the client observes it: its shape and the form of its references
        (their content is drawn from each world's seed); a 429 as it is (its rate-limit headers too)."""
        reply = self.client.call("GetTransactions", token=self.token, params={"id": account_id}, honour_429=False,
                                 query={"pageReference": reference} if reference is not None else None)
        limits = sorted(k for k in reply.headers if "ratelimit" in k or k == "retry-after") \
            if reply.status == 429 else None
        self.seen.append((label, reply.status, reply.content_type, page_shape(reply.body), limits))
        return reply.body if isinstance(reply.body, dict) else {}

    def pages(self, label, account_id):
        """The first page, the next one and back again by the references the target gave, and a reference it
        never gave."""
        first = self.page(label, account_id)
        if first.get("nextPageReference") is None:
            return
        second = self.page(label + ": the next one", account_id, first["nextPageReference"])
        if str(first["nextPageReference"]).startswith(("http://", "https://", "/")):      # a link: follow it too
            link = urlsplit(first["nextPageReference"])
            reply = self.client.request("GET", link.path, token=self.token, query=dict(parse_qsl(link.query)),
                                        operation="GetTransactions")
            self.seen.append((label + ": the next one by its link", reply.status, page_shape(reply.body),
                              entries_of(reply.body) == entries_of(second)))
        again = self.page(label + ": back again", account_id, second.get("previousPageReference"))
        self.seen.append((label + ": back again is the first", entries_of(again) == entries_of(first)))
        self.page(label + ": a reference it never gave", account_id, "9999")

    def id_of(self, reply, reader):
        return identifier(reply.body, *self.ops.hints(reader))

    def run(self):
        """The requests, in order; returns what the client observed."""
        own = self.call("read own partner", "GetOwnPartner")
        self.call("a PUT of one property", "UpdatePartner", build={"name": "Renamed partner"})
        whole = self.bodies.writable("UpdatePartner", {**own.body, "name": "Whole partner"}, nulls=True)
        self.call("a PUT of the whole record", "UpdatePartner", json=whole)
        first = self.call("create a user", "CreateUser", build={"name": "Ann"})
        second = self.call("create another user", "CreateUser", build={"name": "Bob"})
        ann, bob = self.id_of(first, "GetUser"), self.id_of(second, "GetUser")
        self.call("list users", "GetUsers")
        user = self.call("read a user", "GetUser", params={"id": ann})
        self.call("update a user, whole record", "UpdateUser", params={"id": ann},
                  json=self.bodies.writable("UpdateUser", {**user.body, "name": "Ann B"}, nulls=True))
        self.call("a malformed id", "GetUser", params={"id": "not-an-id"})
        self.call("an unknown id", "GetUser", params={"id": "00000000-0000-4000-8000-000000000001"})
        self.call("an id of the target's form no record has", "GetUser", params={"id": unused(ann)})
        self.call("an invalid body", "CreateUser", json={self.bodies.placement("CreateUser", "name"): 5})
        token = first.body.get("token")
        user_token = token if isinstance(token, str) else (token or {}).get("accessToken")
        hook = self.call("create a webhook", "CreateWebhook",
                         build={"callbackUrl": "https://partner.example/hooks", "events": ["AccountCreated"]})
        hook_id = self.id_of(hook, "GetWebhook")
        self.call("list webhooks", "GetWebhooks")
        self.call("read a webhook", "GetWebhook", params={"id": hook_id})
        self.call("delete a webhook", "DeleteWebhook", params={"id": hook_id})
        child = self.call("create a child partner", "CreatePartner",
                          build={"name": "Child", "email": "child@partner.example"})
        child_id = self.id_of(child, "GetPartner")
        self.call("list child partners", "GetPartners")
        self.call("read a child partner", "GetPartner", params={"id": child_id})
        deploy = self.call("create a deploy token", "CreateOwnPartnerToken",
                           build={"name": "deploy", "scope": "partner:create", "expiresIn": 7200})
        self.call("a deploy token creates a child's token", "CreatePartnerToken", params={"id": child_id},
                  token=deploy.body.get("accessToken"), build={"name": "t", "scope": "partner:read", "expiresIn": 7200})
        self.call("list own tokens", "GetOwnPartnerTokens")
        self.call("revoke the deploy token", "RevokePartnerOwnToken", params={"tokenId": deploy.body.get("id")})
        types = self.call("list account types", "GetAccountTypes")
        dummy = self.call("read an account type", "GetAccountType", params={"id": "dummy"})
        account = self.call("create an account", "CreateAccount",
                            build={"accountTypeId": "dummy", "userId": ann, "name": "Main",
                                   "credentials": form_for(dummy.body)})
        account_id = self.id_of(account, "GetAccount")
        self.call("list accounts", "GetAccounts")
        self.call("a user token lists child partners", "GetPartners", token=user_token)
        self.call("a user lists its accounts", "GetAccounts", token=user_token)
        self.call("read an account", "GetAccount", params={"id": account_id})
        self.call("refresh an account", "TriggerAccountRefresh", params={"id": account_id}, build={})
        session = self.call("open an Account UI session", "CreateAccountUiSession",
                            build={"userId": ann, "accountId": account_id})
        self.call("read the session", "GetAccountUiSession", params={"id": self.id_of(session, "GetAccountUiSession")})
        self.client.request("POST", "/_sandbox/clock", token=self.token, json={"advance": 2 * 86400})
        self.pages("a page of transactions", account_id)
        self.call("delete an account", "DeleteAccount", params={"id": account_id})
        self.call("delete a child partner", "DeleteChildPartner", params={"id": child_id})
        self.call("delete a user", "DeleteUser", params={"id": bob})
        assert types.ok
        return self.seen
