"""A careful partner client (blind case 36b): a settlement-sync daemon with persisted state between runs.

Design: a daemon that keeps its state in a JSON file (its long-lived partner token, its webhook id and secret,
each merchant's user id, user token and its expiry, the account id and a cursor of the newest transaction it
has stored). It is started twice by its supervisor ("run 1" onboards a merchant and syncs; "run 2" is the
restart some hours later, which loads the state, renews what is about to expire and syncs what the
notifications announced). What it does to be careful, from the spec and docs/chaos.md:

- spec §5.2: a long-lived partner token with only the scopes it uses, stored; the initial token revoked with
  the new token (never with itself: spec §3); the initial token is not used again once the new one is held;
- spec §8 and Retry-After: one gate for every request; any 429 or 503 closes it until Retry-After has passed;
  other 5xx, dropped connections and cut or garbled bodies are retried with a growing wait;
- a create whose outcome is unknown (5xx, a drop, a garbled answer) is looked up with a read (its list) before
  it is sent again; a partner token made but never handed over is revoked;
- spec §1.4: the account form is built from accountFields of GetAccountType, reached through GetAccountTypes;
  read once per run;
- spec §1.2: the user token is renewed (CreateUserToken) only in the last quarter of its life, and the old one
  is never used after the new one is held;
- spec §6: reads transactions only when a TransactionsImported notification says so (no polling); follows
  nextPageReference to the end, and stores each transaction once by id;
- its receiver verifies the Standard-Webhooks signature with the webhook's secret (400 when wrong), keeps each
  webhook-id once, acknowledges at once (204) and does the work in the daemon loop;
- a 4xx (other than 429) is never sent again unchanged.
"""

import base64
import hashlib
import hmac
import json
import os
import tempfile
import threading
from datetime import datetime, timezone

import requests

PREFIX = "/partner/v2"
ATTEMPTS = 10
SCOPE = "partner:all user:all"          # tokens, webhooks, users and user tokens; accounts go through user tokens


class Refused(Exception):
    def __init__(self, response):
        super().__init__(f"{response.status_code} {response.text[:300]}")
        self.status = response.status_code


def parse_time(text):
    text = text.rstrip("Z")
    main, _, frac = text.partition(".")
    return datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp() + \
        (float("0." + frac) if frac else 0.0)


class Verifier:
    """The receiver: Standard Webhooks signature check with the webhook's secret, dedup on webhook-id."""

    def __init__(self):
        self.secret = None
        self.events = {}
        self.lock = threading.Lock()

    def key(self):
        if self.secret.startswith("whsec_"):
            return base64.b64decode(self.secret[len("whsec_"):])
        return self.secret.encode()

    def __call__(self, headers, body):
        if self.secret is None:
            return 503                                   # not ready yet: the service retries later
        wid, ts, sigs = (headers.get("webhook-id"), headers.get("webhook-timestamp"),
                         headers.get("webhook-signature"))
        if not (wid and ts and sigs):
            return 400
        mac = base64.b64encode(hmac.new(self.key(), f"{wid}.{ts}.".encode() + body, hashlib.sha256).digest()).decode()
        if not any(part.split(",", 1)[-1] == mac for part in sigs.split() if part.startswith("v1,")):
            return 400
        try:
            event = json.loads(body)
        except ValueError:
            return 400
        with self.lock:
            self.events.setdefault(wid, event)
        return 204

    def of_kind(self, kind):
        with self.lock:
            return [e for e in self.events.values() if e.get("eventType") == kind]


class Gateway:
    """Every request goes through one gate (spec §8 counts all requests)."""

    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.now = 0.0
        self.gate = 0.0

    def sleep(self, seconds):
        self.now += seconds
        self.run.sleep(seconds)

    def once(self, method, path, token, **kw):
        if self.gate > self.now:
            self.sleep(self.gate - self.now)
        headers = {"Authorization": f"Bearer {token}"}
        try:
            response = requests.request(method, self.base + path, headers=headers, timeout=60, **kw)
        except requests.RequestException:
            return None, "lost"
        if response.status_code in (429, 503):
            value = response.headers.get("Retry-After", "")
            wait = int(value) if value.isdigit() else 30
            self.gate = max(self.gate, self.now + wait + 1)
        if not response.content:
            return response, None
        try:
            return response, json.loads(response.content)
        except ValueError:
            return response, "lost"

    def read(self, method, path, token, **kw):
        """A GET, or an idempotent DELETE, until it answers."""
        backoff = 2
        for _ in range(ATTEMPTS):
            response, body = self.once(method, path, token, **kw)
            if response is not None and 200 <= response.status_code < 300 and (body != "lost" or method == "DELETE"):
                return body
            if response is not None and 400 <= response.status_code < 500 and response.status_code != 429:
                raise Refused(response)
            if response is None or response.status_code not in (429, 503):
                self.sleep(backoff)
                backoff *= 2
        raise RuntimeError(f"{method} {path} kept failing")

    def create(self, path, token, body, find, undo=None):
        """A POST that must happen once; after an unknown outcome `find()` looks before it is sent again."""
        backoff = 2
        for _ in range(ATTEMPTS):
            response, answer = self.once("POST", path, token, json=body)
            if response is not None and response.status_code in (429, 503):
                continue                                  # refused before it ran; the gate waits
            if response is not None and 400 <= response.status_code < 500:
                raise Refused(response)
            if response is not None and 200 <= response.status_code < 300 and answer != "lost":
                return answer
            found = find()
            if found is not None and undo is None:
                return found
            if found is not None:
                undo(found)
            self.sleep(backoff)
            backoff *= 2
        raise RuntimeError(f"POST {path} kept failing")


class SyncDaemon:
    NAME = "settlement-sync"

    def __init__(self, run, state_path=None):
        self.run = run
        self.http = Gateway(run)
        self.inbox = Verifier()
        self.receiver = run.receiver(self.inbox)
        self.state_path = state_path or os.path.join(tempfile.mkdtemp(prefix="sync36b-"), "state.json")
        self.state = {}
        self.stored = {}                                  # transaction id -> transaction (the "database")
        self.handled = set()

    # --- persisted state --------------------------------------------------------------------------------------
    def load(self):
        if os.path.exists(self.state_path):
            with open(self.state_path) as f:
                self.state = json.load(f)

    def save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)

    # --- spec §5 ----------------------------------------------------------------------------------------------
    def rotate(self, initial):
        http, name = self.http, self.NAME

        def mine():
            found = [t for t in http.read("GET", "/partners/self/tokens", initial)["tokens"]
                     if t.get("name") == name and not t.get("isRevoked")]
            return found or None

        def revoke(tokens):
            for t in tokens:
                self.revoke(f"/partners/self/tokens/{t['id']}", initial)

        made = http.create("/partners/self/tokens", initial,
                           {"name": name, "expiresIn": 365 * 86400, "scope": SCOPE}, find=mine, undo=revoke)
        self.state["token"] = made["accessToken"]
        self.save()
        for t in http.read("GET", "/partners/self/tokens", self.state["token"])["tokens"]:
            if t.get("name") != name and not t.get("isRevoked") and t.get("id"):
                self.revoke(f"/partners/self/tokens/{t['id']}", self.state["token"])

    def revoke(self, path, token):
        try:
            self.http.read("DELETE", path, token)
        except Refused as refused:
            if refused.status not in (404, 409):
                raise

    # --- setup --------------------------------------------------------------------------------------------------
    def subscribe(self):
        http, url, token = self.http, self.receiver.url, self.state["token"]

        def existing():
            found = [w for w in http.read("GET", "/webhooks", token)["webhooks"] if w.get("callbackUrl") == url]
            return found[0] if found else None

        hook = http.create("/webhooks", token, {"name": "settlement sync", "callbackUrl": url,
                                                "events": ["TransactionsImported", "AccountUpdated"]},
                           find=existing)
        if not hook.get("secret"):
            hook = http.read("GET", f"/webhooks/{hook['id']}", token)
        self.state["webhook"] = {"id": hook["id"], "secret": hook["secret"]}
        self.inbox.secret = hook["secret"]
        self.save()

    def onboard(self, name, email):
        http, token = self.http, self.state["token"]

        def existing():
            found = [u for u in http.read("GET", "/users", token, params={"email": email})["users"]
                     if u.get("email") == email]
            return found[0] if found else None

        user = http.create("/users", token, {"name": name, "email": email}, find=existing)
        merchant = {"userId": user["id"]}
        if user.get("token", {}).get("accessToken"):
            merchant["userToken"] = user["token"]["accessToken"]
            merchant["createdAt"] = parse_time(user["token"]["createdAt"])
            merchant["expiresAt"] = parse_time(user["token"]["expiresAt"])
        else:
            self.renew_user_token(merchant)
        self.state["merchant"] = merchant
        self.save()
        return merchant

    def renew_user_token(self, merchant):
        made = self.http.create(f"/users/{merchant['userId']}/tokens", self.state["token"],
                                {"name": "merchant session", "expiresIn": 86400},
                                find=lambda: None)       # an extra user token lost in flight is harmless
        merchant["userToken"] = made["accessToken"]
        merchant["createdAt"] = parse_time(made["createdAt"])
        merchant["expiresAt"] = parse_time(made["expiresAt"])
        self.save()

    def world_now(self):
        return parse_time(self.run.clock())

    def user_token(self):
        """The merchant's user token, renewed in the last quarter of its life (spec §1 capability 2)."""
        merchant = self.state["merchant"]
        life = merchant["expiresAt"] - merchant["createdAt"]
        if merchant["expiresAt"] - self.world_now() < life / 4:
            self.renew_user_token(merchant)
        return merchant["userToken"]

    def connect(self):
        http = self.http
        user_token = self.user_token()
        types = http.read("GET", "/accounttypes", user_token)["accountTypes"]
        chosen = next(t for t in types if t.get("name") == "Dummy provider")   # the merchant's choice
        kind = http.read("GET", f"/accounttypes/{chosen['id']}", user_token)
        answers = {"username": "bakery", "password": "s3cret-pass"}
        credentials = {}
        for field in kind["accountFields"]:
            if field.get("Type", field.get("type")) == "Auth" or field.get("isDeprecated"):
                continue
            if field.get("isRequired"):
                credentials[field["name"]] = answers.get(field["name"], "value")

        def existing():
            found = http.read("GET", "/accounts", user_token)["accounts"]
            same = [a for a in found if a.get("accountTypeId") == kind["id"]]
            return same[0] if same else None

        account = http.create("/accounts", user_token, {"accountTypeId": kind["id"], "credentials": credentials},
                              find=existing)
        self.state["accountId"] = account["id"]
        self.state["cursor"] = None
        self.save()

    # --- the sync -------------------------------------------------------------------------------------------------
    def pending_imports(self):
        out = []
        for event in self.inbox.of_kind("TransactionsImported"):
            if event["id"] in self.handled:
                continue
            account = (event.get("data") or {}).get("account") or {}
            if account.get("id") == self.state.get("accountId"):
                out.append(event)
        return out

    def wait_for_import(self, patience=16):
        for _ in range(patience):
            events = self.pending_imports()
            if events:
                return events
            self.http.sleep(900)
        return []

    def sync(self):
        account_id, reference = self.state["accountId"], None
        params_base = {"pageSize": 100}
        while True:
            params = dict(params_base, **({"pageReference": reference} if reference else {}))
            page = self.http.read("GET", f"/accounts/{account_id}/transactions", self.user_token(), params=params)
            for t in page.get("transactions", []):
                self.stored[t["id"]] = t
                if t.get("createdAt") and (self.state.get("cursor") is None or t["createdAt"] > self.state["cursor"]):
                    self.state["cursor"] = t["createdAt"]
            reference = page.get("nextPageReference")
            if not reference:
                break
        self.save()

    def handle_events(self):
        events = self.wait_for_import()
        for event in events:
            self.handled.add(event["id"])
        if events:
            self.sync()
        return len(events)

    # --- the two runs -------------------------------------------------------------------------------------------
    def first_run(self, initial):
        self.load()
        self.rotate(initial)
        self.subscribe()
        self.onboard("Jane's Bakery", "jane@bakery.example")
        self.connect()
        got = self.handle_events()
        assert got, "no TransactionsImported notification arrived"

    def second_run(self):
        """The restart: state from the file; the receiver knows its secret again at once."""
        self.load()
        self.inbox.secret = self.state["webhook"]["secret"]
        self.http.sleep(6 * 3600)                         # the daemon is idle until the next import
        self.handle_events()
        self.http.sleep(14 * 3600)                        # overnight: the user token nears its expiry
        self.handle_events()

    def main(self, initial):
        self.first_run(initial)
        self.second_run()
        return len(self.stored)
