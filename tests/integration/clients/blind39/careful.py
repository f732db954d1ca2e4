"""A careful partner program (blind case 39): a reseller's back office.

The main partner resells the service to two tenants, each a child partner with a token of its own, a webhook to
the reseller's receiver and one merchant: "North" connects a provider with settlement reports (its form built
from accountFields), "South" an OAuth2 provider (the three-step flow of spec §1, the user's consent given in a
browser session). The back office reads transactions only when a TransactionsImported notification says so,
reconciles them with the settlement reports, asks for a refresh of one account, reconnects the OAuth2 account
(CreateAccountOauthRedirectUrl before UpdateAccount), renames a tenant and off-boards the other.

To be careful, from the spec and docs/chaos.md / docs/webhooks.md:

- spec §5.2: a one-year partner token holding only the partner scopes the back office uses is made with the
  initial token, and the initial token is then revoked with the new one (never a token revoking itself, §3);
  tenants get child-partner tokens (CreatePartnerToken, 180 days) with only what a tenant's back end does, and
  merchants' user tokens ask for only account:create/read/update and transaction:read (§4.2 note 1);
- spec §8: every request goes through one pacer that keeps under 80 requests in any 60 s of world time; a 429 or
  503 is waited out for its Retry-After before anything is sent again;
- reads that fail (5xx, a dropped connection, a cut or garbled body) are sent again after a growing wait; a write
  whose outcome is unknown is looked up with a read before it is sent again (tokens: a made token whose access
  token was lost is revoked, never used); a 404/409 on a repeated delete or revoke means the first one took;
- a 4xx (other than 429) is never sent again unchanged;
- spec §1.4: GetAccountTypes once, the types chosen by their metadata (hasPspReports, an Auth field, state),
  GetAccountType once for each chosen type; required, non-deprecated fields only;
- spec §1 OAuth2: CreateAccount only after the return step said Success (query status or X-Service-AuthStatus);
  the reconnect asks CreateAccountOauthRedirectUrl first and gives UpdateAccount the new authReference;
- spec §6 / webhooks.md: the webhook secret is the back office's own (so the receiver knows it before the
  webhook exists); the receiver verifies the signature (400 when wrong), keeps each webhook-id once and
  answers 204 at once; the work is done by the back office, once per account however many notifications came;
  a notification with transactionCount 0 causes no read; test notifications are never acted upon;
- spec §4.3: every page is read (nextPageReference followed with the same search parameters), later reads
  only what is new (createdAt search), deprecated fields are excluded; no deprecated or removed path or field.
"""

import base64
import json
import re
import secrets
import threading
from collections import deque
from urllib.parse import parse_qs, urlparse

import requests

from ptas_sandbox.webhooks import InvalidSignature, verify

PREFIX = "/partner/v2"
ATTEMPTS = 12
PACE = 80                   # requests in any 60 s of world time (spec §8: 100 for all requests)
UNKNOWN = object()          # a body that was cut or garbled
PARENT_SCOPE = "partner:read partner:create partner:update partner:delete"
TENANT_SCOPE = "partner:read partner:update user:create user:read"
MERCHANT_SCOPE = "account:create account:read account:update transaction:read"
SAMPLE = {"Text": "north-merchant", "Secret": "n0rth-Secret-7", "Number": 1}


class Refused(Exception):
    """A 4xx answer: the request is wrong as it stands and is not sent again unchanged."""

    def __init__(self, method, path, response):
        super().__init__(f"{method} {path}: {response.status_code} {response.text[:300]}")
        self.status = response.status_code


class Api:
    """Every request of the back office: pacing (spec §8), Retry-After, retries of reads, lookups of writes."""

    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.http = requests.Session()
        self.slept = 0.0                # world seconds the back office has waited (latency faults add more)
        self.sent = deque()

    def pause(self, seconds):
        self.run.sleep(seconds)
        self.slept += seconds

    def pace(self):
        while True:
            while self.sent and self.slept - self.sent[0] >= 60:
                self.sent.popleft()
            if len(self.sent) < PACE:
                self.sent.append(self.slept)
                return
            self.pause(61 - (self.slept - self.sent[0]))

    def attempt(self, method, url, token=None, session=None, **kw):
        """(response, JSON body | None | UNKNOWN); (None, UNKNOWN) when the connection failed."""
        self.pace()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            response = (session or self.http).request(method, url, headers=headers, timeout=60,
                                                      allow_redirects=False, **kw)
        except requests.RequestException:
            return None, UNKNOWN
        if not response.content:
            return response, None
        if session is not None:         # a page shown to the merchant: HTML
            return response, response.text
        try:
            return response, json.loads(response.content)
        except ValueError:
            return response, UNKNOWN

    @staticmethod
    def wait_for(response, wait):
        value = response.headers.get("Retry-After", "") if response is not None else ""
        return int(value) + 1 if value.strip().isdigit() else wait

    def read(self, path, token, params=None):
        """A GET, sent again after a failure until it answers."""
        wait = 2
        for _ in range(ATTEMPTS):
            response, body = self.attempt("GET", self.base + path, token, params=params)
            if response is not None and 200 <= response.status_code < 300 and body is not UNKNOWN:
                return body
            if response is not None and 400 <= response.status_code < 500 and response.status_code != 429:
                raise Refused("GET", path, response)
            self.pause(self.wait_for(response, wait))
            wait = min(wait * 2, 60)
        raise RuntimeError(f"GET {path} kept failing")

    def write(self, method, path, token, body=None, look=None, done_on=()):
        """A write that must take once. A 429/503 did not run it: wait and send again. When its outcome is
        unknown (other 5xx, a dropped connection, a cut or garbled answer) `look()` reads whether it took (its
        result, or None) before it is sent again; after such an outcome a status in `done_on` (a 404 on a
        delete) says the earlier attempt took."""
        wait, unsure = 2, False
        for _ in range(ATTEMPTS):
            kw = {"json": body} if body is not None else {}
            response, answer = self.attempt(method, self.base + path, token, **kw)
            if response is not None and response.status_code in (429, 503):
                self.pause(self.wait_for(response, wait))
                wait = min(wait * 2, 60)
                continue
            if response is not None and 200 <= response.status_code < 300 and answer is not UNKNOWN:
                return answer
            if response is not None and 400 <= response.status_code < 500:
                if unsure and response.status_code in done_on:
                    return None
                raise Refused(method, path, response)
            unsure = True
            found = look() if look else None
            if found is not None:
                return found
            self.pause(wait)
            wait = min(wait * 2, 60)
        raise RuntimeError(f"{method} {path} kept failing")


class Receiver:
    """A tenant's webhook receiver: Standard Webhooks signature with the tenant's secret (400 when wrong), each
    webhook-id kept once, 204 at once. The back office takes the events from it."""

    def __init__(self, secret):
        self.secret = secret
        self.events, self.handled = {}, set()
        self.lock = threading.Lock()

    def __call__(self, headers, body):
        try:
            event = verify(self.secret, headers, body, tolerance_seconds=None)
        except InvalidSignature:
            return 400
        with self.lock:
            self.events.setdefault(headers.get("webhook-id") or event["id"], event)
        return 204

    def take(self):
        """The events not handled yet, in the order they were created."""
        with self.lock:
            fresh = [(key, e) for key, e in self.events.items() if key not in self.handled]
            self.handled.update(key for key, _ in fresh)
        return [e for _, e in sorted(fresh, key=lambda pair: pair[1].get("createdAt", ""))]


class Tenant:
    def __init__(self, name, partner, token, receiver):
        self.name, self.partner, self.token, self.receiver = name, partner, token, receiver
        self.merchants = []


class Merchant:
    def __init__(self, user, token):
        self.user, self.token = user, token
        self.account = None
        self.transactions, self.reports = {}, {}
        self.needs_sync = False
        self.refetch_from = None        # a refresh re-read the provider from here
        self.imports, self.updates = [], []
        self.new_reports = set()


class BackOffice:
    def __init__(self, run):
        self.run, self.api = run, Api(run)
        self.parent = None

    # --- spec §5: the reseller's own token --------------------------------------------------------------------
    def rotate(self, initial):
        api, name = self.api, "reseller-back-office"

        def orphan():
            for token in api.read("/partners/self/tokens", initial)["tokens"]:
                if token["name"] == name and token["isValid"]:
                    api.write("DELETE", f"/partners/self/tokens/{token['id']}", initial, done_on=(404, 409))
            return None                 # its access token was lost: revoked above, made again

        made = api.write("POST", "/partners/self/tokens", initial, {
            "name": name, "expiresIn": 365 * 86400, "scope": PARENT_SCOPE}, look=orphan)
        self.parent = made["accessToken"]
        initial_id = jwt_id(initial)
        for token in api.read("/partners/self/tokens", self.parent)["tokens"]:
            if token["isValid"] and token.get("id") and token["id"] != made.get("id") and (
                    token["id"] == initial_id or token["name"] == "initial token"):
                api.write("DELETE", f"/partners/self/tokens/{token['id']}", self.parent, done_on=(404, 409))

    # --- tenants: child partners ------------------------------------------------------------------------------
    def open_tenant(self, name, email, return_url, events):
        api, parent = self.api, self.parent

        def existing_partner():
            found = [p for p in api.read("/partners", parent)["partners"] if p["name"] == name]
            return found[0] if found else None

        partner = api.write("POST", "/partners", parent, {"name": name, "email": email,
                                                          "redirectUrls": [return_url]}, look=existing_partner)
        label = f"{name.lower().replace(' ', '-')}-backend"

        def orphan_token():
            for token in api.read(f"/partners/{partner['id']}/tokens", parent)["tokens"]:
                if token["name"] == label and token["isValid"]:
                    api.write("DELETE", f"/partners/{partner['id']}/tokens/{token['id']}", parent,
                              done_on=(404, 409))
            return None

        token = api.write("POST", f"/partners/{partner['id']}/tokens", parent, {
            "name": label, "expiresIn": 180 * 86400, "scope": TENANT_SCOPE}, look=orphan_token)["accessToken"]
        secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
        receiver = Receiver(secret)
        url = self.run.receiver(receiver).url

        def existing_hook():
            found = [w for w in api.read("/webhooks", token)["webhooks"] if w["callbackUrl"] == url]
            return found[0] if found else None

        api.write("POST", "/webhooks", token, {"name": f"{name} back office", "callbackUrl": url,
                                               "events": events, "secret": secret}, look=existing_hook)
        return Tenant(name, partner, token, receiver)

    def onboard(self, tenant, name, email):
        api = self.api

        def existing():
            found = api.read("/users", tenant.token, params={"email": email})["users"]
            return found[0] if found else None

        user = api.write("POST", "/users", tenant.token, {"name": name, "email": email, "scope": MERCHANT_SCOPE},
                         look=existing)
        token = (user.get("token") or {}).get("accessToken")
        if token is None:               # found by the lookup: its first token was in the lost answer
            token = api.write("POST", f"/users/{user['id']}/tokens", tenant.token, {
                "name": "back office", "scope": MERCHANT_SCOPE},
                look=lambda: api.read(f"/users/{user['id']}", tenant.token) and None)["accessToken"]
        merchant = Merchant(user, token)
        tenant.merchants.append(merchant)
        return merchant

    # --- spec §1.4: account types -----------------------------------------------------------------------------
    def catalogue(self):
        """(a type with settlement reports and a plain form, an OAuth2 type), each read once in detail."""
        types = self.api.read("/accounttypes", self.parent)["accountTypes"]

        def live(fields):
            return [f for f in fields if f.get("isRequired") and not f.get("isDeprecated")]

        def fillable(t):
            return all(f["Type"] in SAMPLE or (f["Type"] == "Choice" and f.get("options"))
                       for f in live(t.get("accountFields", [])))

        usable = [t for t in types if t.get("state", "Operational") == "Operational"]
        with_reports = next(t for t in usable if t.get("hasPspReports") and fillable(t)
                            and not any(f["Type"] == "Auth" for f in t.get("accountFields", [])))
        oauth = next(t for t in usable if any(f["Type"] == "Auth" for f in live(t.get("accountFields", [])))
                     and all(f["Type"] == "Auth" for f in live(t.get("accountFields", []))))
        return (self.api.read(f"/accounttypes/{with_reports['id']}", self.parent),
                self.api.read(f"/accounttypes/{oauth['id']}", self.parent))

    def connect_form(self, merchant, kind):
        credentials = {}
        for field in kind["accountFields"]:
            if field.get("isRequired") and not field.get("isDeprecated"):
                credentials[field["name"]] = (field["options"][0] if field["Type"] == "Choice"
                                              else SAMPLE[field["Type"]])
        merchant.account = self.api.write("POST", "/accounts", merchant.token, {
            "accountTypeId": kind["id"], "credentials": credentials},
            look=lambda: self.account_of(merchant, kind["id"]))

    def account_of(self, merchant, type_id):
        found = [a for a in self.api.read("/accounts", merchant.token)["accounts"] if a["accountTypeId"] == type_id]
        return found[0] if found else None

    # --- spec §1 OAuth2 --------------------------------------------------------------------------------------
    def consent(self, provider_url):
        """The merchant approves at the provider (a browser session keeping the form's cookie); the return
        step's status, or None when the service could not tell (start again)."""
        browser = requests.Session()
        for _ in range(ATTEMPTS):
            response, _ = self.api.attempt("GET", provider_url, session=browser)
            if response is not None and response.status_code == 409:
                return "Success"        # our earlier approval took (its answer was lost)
            if response is not None and response.status_code in (429, 503):
                self.api.pause(self.api.wait_for(response, 2))
                continue
            form = re.search(r'name="csrfToken" value="([^"]+)"', response.text) if response is not None else None
            if response is None or response.status_code != 200 or form is None:
                if response is not None and 400 <= response.status_code < 500:
                    return None
                self.api.pause(2)
                continue
            answer, _ = self.api.attempt("POST", provider_url, session=browser,
                                         data={"decision": "approve", "csrfToken": form.group(1)})
            if answer is not None and answer.status_code in (429, 503):
                self.api.pause(self.api.wait_for(answer, 2))
                continue
            if answer is None or answer.status_code >= 500:
                continue                # unknown: the page says whether it took
            status = answer.headers.get("X-Service-AuthStatus")
            if status is None and answer.headers.get("Location"):
                status = parse_qs(urlparse(answer.headers["Location"]).query).get("status", [None])[0]
            return status
        raise RuntimeError("the consent page kept failing")

    def authorize(self, merchant, path, body, look):
        """Steps 1 and 2: an authReference the merchant authorized (Success). An authorization start whose
        answer was lost made nothing lasting: `look` reads the account it is for, then it is asked again."""
        for _ in range(3):
            start = self.api.write("POST", path, merchant.token, body, look=lambda: look() and None)
            if self.consent(start["redirectUrl"]) == "Success":
                return start["authReference"]
        raise RuntimeError("the merchant's authorization did not succeed")

    def connect_oauth(self, merchant, kind):
        reference = self.authorize(merchant, "/oauth", {"accountTypeId": kind["id"]},
                                   look=lambda: self.account_of(merchant, kind["id"]))
        merchant.account = self.api.write("POST", "/accounts", merchant.token, {
            "accountTypeId": kind["id"], "authReference": reference},
            look=lambda: self.account_of(merchant, kind["id"]))

    def reconnect(self, merchant):
        account = merchant.account
        reference = self.authorize(merchant, f"/accounts/{account['id']}/oauth", {},
                                   look=lambda: self.api.read(f"/accounts/{account['id']}", merchant.token))
        before = account["updatedAt"]

        def took():
            now = self.api.read(f"/accounts/{account['id']}", merchant.token)
            return now if now["updatedAt"] != before else None

        merchant.account = self.api.write("PUT", f"/accounts/{account['id']}", merchant.token,
                                          {"authReference": reference}, look=took) or account

    # --- notifications and reading ----------------------------------------------------------------------------
    def drain(self, tenants):
        """Handle what the receivers hold: mark accounts to sync, note updates; then sync each account once."""
        for tenant in tenants:
            by_account = {m.account["id"]: m for m in tenant.merchants if m.account}
            for event in tenant.receiver.take():
                if event.get("isTest"):
                    continue
                data = event.get("data") or {}
                merchant = by_account.get((data.get("account") or {}).get("id"))
                if merchant is None:
                    continue
                if event["eventType"] == "TransactionsImported":
                    imported = data.get("dataImport") or {}
                    merchant.imports.append(imported)
                    if data.get("transactionCount", imported.get("transactionCount")) != 0:
                        merchant.needs_sync = True
                    if imported.get("kind") == "Refresh" and imported.get("from"):
                        merchant.refetch_from = min(filter(None, [merchant.refetch_from, imported["from"]]))
                    merchant.new_reports |= {r for r in imported.get("reportIds") or [] if r not in merchant.reports}
                elif event["eventType"] == "AccountUpdated":
                    merchant.updates.append(event)
            for merchant in tenant.merchants:
                if merchant.needs_sync:
                    self.sync(merchant)
                self.settle(merchant)

    def sync(self, merchant):
        """Every page of what is new: all at first, then from the newest transaction held (createdAt search),
        or from where a refresh re-read the provider."""
        account_id = merchant.account["id"]
        since = merchant.refetch_from
        if since is None and merchant.transactions:
            since = max(t["createdAt"] for t in merchant.transactions.values())
        merchant.refetch_from = None
        search = {"excludeDeprecatedFields": "true", **({"createdAt": since} if since else {})}
        reference = None
        while True:
            page = self.api.read(f"/accounts/{account_id}/transactions", merchant.token,
                                 params={**search, **({"pageReference": reference} if reference else {})})
            for transaction in page["transactions"]:
                merchant.transactions[transaction["id"]] = transaction
            reference = page.get("nextPageReference")
            if not reference:
                break
        merchant.needs_sync = False

    def settle(self, merchant):
        """The reports the imports announced: the list once when many are new, else each one."""
        wanted = merchant.new_reports - set(merchant.reports)
        if not wanted:
            return
        if len(wanted) > 2:
            for report in self.api.read(f"/accounts/{merchant.account['id']}/reports", merchant.token)["reports"]:
                merchant.reports[report["id"]] = report
        else:
            for report_id in sorted(wanted):
                merchant.reports[report_id] = self.api.read(f"/reports/{report_id}", merchant.token)
        merchant.new_reports = set()

    def wait_until(self, tenants, done, step=300, patience=36):
        for _ in range(patience):
            self.drain(tenants)
            if done():
                return
            self.api.pause(step)
        raise RuntimeError("the notifications awaited did not come")

    def reconcile(self, merchant):
        """Every settlement report's count matches the transactions that name it."""
        counts = {}
        for transaction in merchant.transactions.values():
            if transaction.get("reportId"):
                counts[transaction["reportId"]] = counts.get(transaction["reportId"], 0) + 1
        return {rid: (r.get("transactionCount"), counts.get(rid, 0)) for rid, r in merchant.reports.items()
                if r.get("transactionCount") != counts.get(rid, 0)}

    # --- the job ---------------------------------------------------------------------------------------------
    def main(self):
        api = self.api
        self.rotate(self.run.token)
        with_reports, oauth = self.catalogue()
        north = self.open_tenant("Tenant North", "ops@north-tenant.example", "https://north-tenant.example/ptas/back",
                                 ["TransactionsImported"])
        south = self.open_tenant("Tenant South", "ops@south-tenant.example", "https://south-tenant.example/ptas/back",
                                 ["TransactionsImported", "AccountUpdated"])
        tenants = [north, south]
        bakery = self.onboard(north, "Nordlicht Bakery", "books@nordlicht-bakery.example")
        kiosk = self.onboard(south, "Suedwind Kiosk", "owner@suedwind-kiosk.example")
        self.connect_form(bakery, with_reports)
        self.connect_oauth(kiosk, oauth)
        # the first imports: each account read whole once its TransactionsImported notification came
        self.wait_until(tenants, lambda: bakery.imports and kiosk.imports and bakery.reports)
        # an hour later the providers were polled again: only what is new is read
        seen = {m.account["id"]: len(m.imports) for m in (bakery, kiosk)}
        api.pause(3600)
        self.wait_until(tenants, lambda: all(len(m.imports) > seen[m.account["id"]] for m in (bakery, kiosk)))
        # the bakery's accountant asks for the latest settled day again (spec §1.5 TriggerAccountRefresh)
        start = max(r["periodStart"] for r in bakery.reports.values())
        before = len(bakery.imports)

        def refresh_running():
            imports = api.read("/dataimports", bakery.token, params={"accountId": bakery.account["id"]})
            fresh = [i for i in imports["dataImports"] if i.get("kind") == "Refresh"]
            return fresh[-1] if fresh else None

        api.write("POST", f"/accounts/{bakery.account['id']}/refresh", bakery.token, {"startDate": start},
                  look=refresh_running, done_on=(409,))
        # the kiosk re-authorizes at its provider (spec §1: CreateAccountOauthRedirectUrl, then UpdateAccount)
        self.reconnect(kiosk)
        self.wait_until(tenants, lambda: any(i.get("kind") == "Refresh" for i in bakery.imports[before:])
                        and kiosk.updates)
        # tenant North's legal name; tenant South leaves the reseller
        api.write("PUT", f"/partners/{north.partner['id']}", self.parent, {"name": "Tenant North GmbH"},
                  look=lambda: next((p for p in api.read("/partners", self.parent)["partners"]
                                     if p["id"] == north.partner["id"] and p["name"] == "Tenant North GmbH"), None))
        statistics = {m.account["id"]: api.read(f"/accounts/{m.account['id']}", m.token)["statistics"]
                      for m in (bakery, kiosk)}
        gone = {"deleted": True}
        api.write("DELETE", f"/partners/{south.partner['id']}", self.parent, done_on=(404,),
                  look=lambda: None if any(p["id"] == south.partner["id"] for p in
                                           api.read("/partners", self.parent)["partners"]) else gone)
        mismatched = self.reconcile(bakery)
        complete = all(statistics[m.account["id"]]["count"] == len(m.transactions) for m in (bakery, kiosk))
        self.result = {"transactions": {m.user["name"]: len(m.transactions) for m in (bakery, kiosk)},
                       "reports": len(bakery.reports), "mismatched": mismatched, "statistics": statistics,
                       "slept": api.slept}
        return complete and not mismatched


def jwt_id(token):
    """The `jti` of a JWT (its token id), or None."""
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).get("jti")
    except (IndexError, ValueError):
        return None


def main(run):
    office = BackOffice(run)
    ok = office.main()
    main.last = office.result
    return ok
