"""A careful partner integration in another style than careful.py: a reactor, written from the spec, that reads
only when a notification says something changed, for hours of world time. It proves the report fair to what a
long-running event-driven client does:

- spec §5: a long-lived token, then the initial token revoked by the id its JWT carries (`jti`);
- spec §1 capability 2: hour-long user tokens, renewed by a refresher in the last quarter of their life (a
  token serves a request or two, then its renewal: no token per request), never used after expiry;
- spec §1 capability 5: on each TransactionsImported it reads the account's statistics (GetAccount) and, when
  the count grew, the new transactions (a createdAt search from the newest seen, every page): a read per
  notification, not polling; on AccountUpdated it reads the account;
- spec §1 capability 4: the account form is built from the account type's accountFields, read once and
  dropped on AccountTypeUpdated;
- spec §8: any 429 or 503 closes one gate for every request until Retry-After has passed (right for the
  global limit and for one operation's); other failures are retried with a growing wait, and a create whose
  outcome is unknown is looked up before it is sent again;
- its receiver (harness.Inbox) verifies signatures and keeps each event once; the loop does the work, and the
  webhook is deleted before the receiver goes away.
"""

import base64
import json

import requests

from .harness import Inbox

PREFIX = "/partner/v2"
HOUR = 3600
EVENTS = ["TransactionsImported", "AccountCreated", "AccountUpdated", "AccountDeleted", "AccountTypeUpdated"]
MERCHANTS = [
    {"name": "Jane's Bakery", "email": "jane@bakery.example", "provider": "Dummy provider",
     "answers": {"username": "jane", "password": "s3cret"}},
    {"name": "Bob's Bikes", "email": "bob@bikes.example", "provider": "Dummy provider with reports",
     "answers": {"username": "bob", "password": "hunter22"}},
]


class Refused(Exception):
    """A 4xx other than 429: the request itself is wrong."""


class Gateway:
    """Every request, and the client's clock: the seconds it slept (the harness moves the world clock by as
    much). One gate for all requests, since the §8 limit counts them all."""

    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.now, self.gate_opens = 0, 0

    def sleep(self, seconds):
        self.now += seconds
        self.run.sleep(seconds)

    def send(self, method, path, token, body=None, params=None, find=None, attempts=10):
        """The JSON answer (None when empty). A POST whose outcome is unknown is not sent again before `find()`
        (a read) has looked for what it made."""
        backoff = 1
        for _ in range(attempts):
            if self.gate_opens > self.now:
                self.sleep(self.gate_opens - self.now)
            try:
                response = requests.request(method, self.base + path, json=body, params=params, timeout=30,
                                            headers={"Authorization": f"Bearer {token}"})
            except requests.RequestException:
                response = None
            if response is not None:
                wait = response.headers.get("Retry-After", "")
                if response.status_code in (429, 503) and wait.isdigit():
                    self.gate_opens = self.now + int(wait)
                    continue                            # refused before it ran: nothing to look up
                if 400 <= response.status_code < 500:
                    if method == "DELETE" and response.status_code == 404 and backoff > 1:
                        return None                     # an earlier attempt ran; its answer was lost
                    raise Refused(f"{method} {path}: {response.status_code} {response.text[:200]}")
                if response.status_code < 300:
                    try:
                        return json.loads(response.content) if response.content else None
                    except ValueError:
                        pass                            # garbled: as unknown as a dropped connection
            if method == "POST" and find is not None:
                found = find()
                if found is not None:
                    return found
            self.sleep(backoff)
            backoff = min(backoff * 2, 60)
        raise RuntimeError(f"{method} {path} kept failing")


class Vault:
    """The partner token and each user's token with the client-clock instant it expires."""
    NAME = "reactor-backend"
    USER_TOKEN_SECONDS = HOUR
    RENEW_WHEN_LEFT = USER_TOKEN_SECONDS // 4

    def __init__(self, gw):
        self.gw, self.partner, self.users = gw, None, {}

    def bootstrap(self, initial):
        gw = self.gw

        def made_already():             # made, but its secret never reached us: useless, so revoked
            for token in gw.send("GET", "/partners/self/tokens", initial)["tokens"]:
                if token["name"] == self.NAME and token["isValid"]:
                    gw.send("DELETE", f"/partners/self/tokens/{token['id']}", initial)

        made = gw.send("POST", "/partners/self/tokens", initial, find=made_already, body={
            "name": self.NAME, "expiresIn": 365 * 86400, "scope": "partner:update partner:read user:create user:read"})
        self.partner = made["accessToken"]
        # user tokens may reach a browser (spec §5), so they live an hour
        gw.send("PUT", "/partners/self", self.partner, body={"userTokenExpirySeconds": self.USER_TOKEN_SECONDS})
        gw.send("DELETE", f"/partners/self/tokens/{claims(initial)['jti']}", self.partner)

    def adopt(self, user_id, token):
        self.users[user_id] = (token["accessToken"], self.gw.now + token["expiresIn"])

    def refresh_due(self):
        for user_id in list(self.users):
            self.user(user_id)

    def user(self, user_id):
        """The user's token, renewed first when it is about to expire (a lost answer leaves an unused token)."""
        held = self.users.get(user_id)
        if held is None or held[1] - self.gw.now < self.RENEW_WHEN_LEFT:
            self.adopt(user_id, self.gw.send("POST", f"/users/{user_id}/tokens", self.partner, body={
                "name": "reactor", "expiresIn": self.USER_TOKEN_SECONDS, "scope": "account:all transaction:read"}))
        return self.users[user_id][0]


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def credentials(form, answers):
    """The merchant's answers to the form the account type describes: required fields, optional ones answered,
    deprecated ones not asked."""
    fields = [f for f in form["accountFields"] if not f.get("isDeprecated")]
    missing = [f["label"] for f in fields if f["isRequired"] and f["name"] not in answers]
    if missing:
        raise ValueError(f"the merchant left {missing} empty")
    return {f["name"]: answers[f["name"]] for f in fields if f["name"] in answers}


class ReactiveClient:
    def __init__(self, run):
        self.run = run
        self.gw = Gateway(run)
        self.vault = Vault(self.gw)
        self.inbox = Inbox()
        self.receiver = run.receiver(self.inbox)
        self.handled, self.forms, self.types = set(), {}, None
        self.accounts = {}          # account id -> {"user", "count", "newest", "seen"}

    def pending(self):
        with self.inbox.lock:
            new = [e for key, e in self.inbox.events.items() if key not in self.handled]
        self.handled.update(e["id"] for e in new)
        return sorted(new, key=lambda e: e["createdAt"])

    def subscribe(self):
        gw, url, token = self.gw, self.receiver.url, self.vault.partner

        def existing():
            return next((h for h in gw.send("GET", "/webhooks", token)["webhooks"] if h["callbackUrl"] == url), None)

        hook = gw.send("POST", "/webhooks", token, body={"name": "reactor", "callbackUrl": url, "events": EVENTS},
                       find=existing)
        if not hook.get("secret"):          # found by the lookup: read it whole
            hook = gw.send("GET", f"/webhooks/{hook['id']}", token)
        self.inbox.secret, self.hook = hook["secret"], hook["id"]

    def form(self, provider, token):
        if self.types is None:
            self.types = self.gw.send("GET", "/accounttypes", token)["accountTypes"]
        type_id = next(t["id"] for t in self.types if t["name"] == provider)
        if type_id not in self.forms:
            self.forms[type_id] = self.gw.send("GET", f"/accounttypes/{type_id}", token)
        return self.forms[type_id]

    def onboard(self, merchant):
        gw, vault = self.gw, self.vault

        def existing_user():
            return next(iter(gw.send("GET", "/users", vault.partner, params={"email": merchant["email"]})["users"]),
                        None)

        user = gw.send("POST", "/users", vault.partner, find=existing_user, body={
            "name": merchant["name"], "email": merchant["email"], "scope": "account:all transaction:read"})
        if user.get("token"):
            vault.adopt(user["id"], user["token"])
        form = self.form(merchant["provider"], vault.user(user["id"]))

        def existing_account():
            found = gw.send("GET", "/accounts", vault.user(user["id"]))["accounts"]
            return next((a for a in found if a["accountTypeId"] == form["id"]), None)

        account = gw.send("POST", "/accounts", vault.user(user["id"]), find=existing_account, body={
            "accountTypeId": form["id"], "credentials": credentials(form, merchant["answers"])})
        self.accounts[account["id"]] = {"user": user["id"], "count": 0, "newest": None, "seen": set()}

    def handle(self, event):
        kind, data = event["eventType"], event["data"]
        if kind == "AccountTypeUpdated":
            self.forms.pop(data["accountType"]["id"], None)
            self.types = None
            return
        mine = self.accounts.get(data["account"]["id"])
        if mine is None or event.get("isTest"):
            return
        if kind == "TransactionsImported":
            self.sync(data["account"]["id"], mine)
        elif kind == "AccountUpdated":
            self.gw.send("GET", f"/accounts/{data['account']['id']}", self.vault.user(mine["user"]))
        elif kind == "AccountDeleted":
            self.accounts.pop(data["account"]["id"])

    def sync(self, account_id, mine):
        """The statistics say whether there is anything new; then only what is new, every page of it."""
        path = f"/accounts/{account_id}"
        count = self.gw.send("GET", path, self.vault.user(mine["user"]))["statistics"]["count"]
        if count <= mine["count"]:
            return
        params = {"pageSize": 100, **({"createdAt": mine["newest"]} if mine["newest"] else {})}
        while True:
            page = self.gw.send("GET", path + "/transactions", self.vault.user(mine["user"]), params=params)
            for transaction in page["transactions"]:
                mine["seen"].add(transaction["id"])
                mine["newest"] = max(mine["newest"] or "", transaction["createdAt"])
            if not page.get("nextPageReference"):
                break
            params = {**params, "pageReference": page["nextPageReference"]}
        mine["count"] = count

    def main(self, initial, hours=6, tick=600):
        self.vault.bootstrap(initial)
        self.subscribe()
        for merchant in MERCHANTS:
            self.onboard(merchant)
        for _ in range(hours * HOUR // tick):
            self.gw.sleep(tick)
            self.vault.refresh_due()
            for event in self.pending():
                self.handle(event)
        self.gw.send("DELETE", f"/webhooks/{self.hook}", self.vault.partner)
        return sum(len(a["seen"]) for a in self.accounts.values())
