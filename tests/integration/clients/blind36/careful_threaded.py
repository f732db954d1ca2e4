"""A careful partner integration in worker threads (a thread pool sends concurrently).

Called as `main(base_url, partner_token, sleep)` (base_url: the sandbox root, the API is under /partner/v2;
sleep(seconds): how the client waits, time.sleep in production, the world clock in a test), or from the shell:
`python careful_threaded.py http://127.0.0.1:8080 TOKEN`.

What it does (spec sections in brackets):
- §5.2: creates a long-lived partner token (one year, partner:all user:all) and revokes the initial token
  (found by its id, the JWT `jti`, or failing that by listing tokens); the initial token is not used again.
- a webhook (§6) for TransactionsImported and AccountUpdated to its own receiver, which verifies signatures;
- three users (§4.2 note 1: the answer carries the first user token) created concurrently;
- account types read once (§1.4), the form built from accountFields (required fields, no Auth/File types);
- one account per user, created concurrently with the user tokens;
- waits (sleeps) for the TransactionsImported notification, then reads every page (nextPageReference) of each
  account's transactions concurrently;
- TriggerAccountRefresh (§1.5) on each account, waits for the next notification, reads all pages again;
- clean-up: accounts, users, webhook deleted.
Failures: a 429/503 closes one gate for all threads until Retry-After passed (§8 global limit); other 5xx,
drops, truncated or non-JSON bodies are retried with a growing wait; a create whose outcome is unknown is looked
up (list) before it is sent again; a 401 on a user token gets a new user token (§5.6), then the call is repeated;
4xx other than 401/429 are not repeated.
"""

import concurrent.futures as cf
import datetime
import json
import sys
import threading
import time

import requests

from .common import PREFIX, Inbox, Receiver, jwt_claims, retry_after

ATTEMPTS = 10
NAME = "shop-sync-threads"


class Refused(Exception):
    def __init__(self, status, text):
        super().__init__(f"{status} {text[:200]}")
        self.status = status


class Transport:
    def __init__(self, base, sleep):
        self.api = base.rstrip("/") + PREFIX
        self.sleep = sleep
        self.gate = threading.Lock()        # held by a thread waiting out Retry-After: nobody sends meanwhile
        self.local = threading.local()

    def session(self):
        if not hasattr(self.local, "s"):
            self.local.s = requests.Session()
        return self.local.s

    def once(self, method, path, token, **kw):
        with self.gate:
            pass
        try:
            r = self.session().request(method, self.api + path, timeout=30,
                                       headers={"Authorization": f"Bearer {token}"}, **kw)
        except requests.RequestException:
            return None, None, None
        body = None
        if r.content:
            try:
                body = json.loads(r.content)
            except ValueError:
                body = ValueError
        return r.status_code, r.headers, body

    def wait(self, status, headers, default):
        seconds = retry_after(status, headers, default)
        if status in (429, 503):
            with self.gate:
                self.sleep(seconds)
        else:
            self.sleep(seconds)

    def call(self, method, path, token, ok_missing=False, **kw):
        """An idempotent call (GET, DELETE, refresh): repeated until it answers."""
        backoff = 1
        for _ in range(ATTEMPTS):
            status, headers, body = self.once(method, path, token, **kw)
            if status is not None and 200 <= status < 300 and (body is not ValueError or method == "DELETE"):
                return body
            if status == 404 and ok_missing:
                return None
            if status is not None and 400 <= status < 500 and status != 429:
                raise Refused(status, str(body))
            self.wait(status, headers or {}, backoff)
            backoff = min(backoff * 2, 30)
        raise RuntimeError(f"{method} {path} kept failing")

    def create(self, path, token, payload, find, undo=None):
        backoff = 1
        for _ in range(ATTEMPTS):
            status, headers, body = self.once("POST", path, token, json=payload)
            if status in (429, 503):                      # refused before it ran
                self.wait(status, headers, backoff)
                backoff = min(backoff * 2, 30)
                continue
            if status is not None and 400 <= status < 500:
                raise Refused(status, str(body))
            if status is not None and 200 <= status < 300 and body is not ValueError:
                return body
            found = find()                                # may have run: look before sending again
            if found is not None and undo is None:
                return found
            if found is not None:
                undo(found)
            self.wait(status, headers or {}, backoff)
            backoff = min(backoff * 2, 30)
        raise RuntimeError(f"POST {path} kept failing")


class Client:
    def __init__(self, base, token, sleep):
        self.http = Transport(base, sleep)
        self.sleep = sleep
        self.initial = token
        self.token = None
        self.inbox = Inbox()
        self.receiver = Receiver(self.inbox)
        self.users = {}                                  # user id -> user token
        self.user_lock = threading.Lock()
        self.pool = cf.ThreadPoolExecutor(max_workers=4)

    # §5.2 -------------------------------------------------------------------------------------------------
    def rotate(self):
        http, initial = self.http, self.initial

        def mine():
            found = [t for t in http.call("GET", "/partners/self/tokens", initial)["tokens"]
                     if t.get("name") == NAME and t.get("isValid")]
            return found or None

        def undo(tokens):
            for t in tokens:
                http.call("DELETE", f"/partners/self/tokens/{t['id']}", initial, ok_missing=True)

        made = http.create("/partners/self/tokens", initial,
                           {"name": NAME, "expiresIn": 31536000, "scope": "partner:all user:all"},
                           find=mine, undo=undo)
        self.token = made["accessToken"]
        initial_id = jwt_claims(initial).get("jti")
        if not initial_id:
            others = [t for t in http.call("GET", "/partners/self/tokens", self.token)["tokens"]
                      if t.get("isValid") and t.get("id") != made.get("id") and t.get("name") != NAME]
            initial_id = others[0]["id"] if len(others) == 1 else None
        if initial_id:
            try:
                http.call("DELETE", f"/partners/self/tokens/{initial_id}", self.token, ok_missing=True)
            except Refused as r:
                if r.status != 409:
                    raise

    def subscribe(self):
        url = self.receiver.url

        def existing():
            hooks = self.http.call("GET", "/webhooks", self.token).get("webhooks", [])
            hooks = [h for h in hooks if h.get("callbackUrl") == url]
            return hooks[0] if hooks else None

        hook = self.http.create("/webhooks", self.token, {"name": NAME, "callbackUrl": url,
                                "events": ["TransactionsImported", "AccountUpdated"]}, find=existing)
        self.webhook = hook["id"]
        self.inbox.secret = hook["secret"]

    # users and their tokens ------------------------------------------------------------------------------
    def onboard(self, name, email):
        def existing():
            found = [u for u in self.http.call("GET", "/users", self.token, params={"email": email})["users"]
                     if u.get("email") == email]
            return found[0] if found else None

        user = self.http.create("/users", self.token, {"name": name, "email": email}, find=existing)
        token = (user.get("token") or {}).get("accessToken")
        if not token:                                    # answer lost: the user exists, its first token not
            token = self.new_user_token(user["id"])
        with self.user_lock:
            self.users[user["id"]] = token
        return user["id"]

    def new_user_token(self, user_id):
        made = self.http.create(f"/users/{user_id}/tokens", self.token, {"name": NAME},
                                find=lambda: None)
        return made["accessToken"]

    def as_user(self, user_id, method, path, **kw):
        """A call with the user's token; a 401 means it expired: a new one, then the call again."""
        for _ in range(2):
            with self.user_lock:
                token = self.users[user_id]
            try:
                return self.http.call(method, path, token, **kw)
            except Refused as r:
                if r.status != 401:
                    raise
                with self.user_lock:
                    if self.users[user_id] == token:
                        self.users[user_id] = self.new_user_token(user_id)
        raise RuntimeError("user token refused twice")

    # accounts --------------------------------------------------------------------------------------------
    def choose_type(self):
        types = self.http.call("GET", "/accounttypes", self.token)["accountTypes"]
        usable = [t for t in types if not t.get("hasPspReports")
                  and not any(f.get("Type") in ("Auth", "File") for f in t["accountFields"] if f.get("isRequired"))]
        return usable[0]

    def form(self, kind, merchant):
        """What the merchant typed into a form built from accountFields."""
        answers = {"Text": merchant, "Secret": f"pw-{merchant}"}
        return {f["name"]: answers.get(f.get("Type"), merchant) for f in kind["accountFields"]
                if f.get("isRequired") and not f.get("isDeprecated")}

    def connect(self, user_id, kind, merchant):
        with self.user_lock:
            token = self.users[user_id]

        def existing():
            found = self.as_user(user_id, "GET", "/accounts")["accounts"]
            found = [a for a in found if a.get("accountTypeId") == kind["id"]]
            return found[0] if found else None

        return self.http.create("/accounts", token, {"accountTypeId": kind["id"], "name": merchant,
                                "credentials": self.form(kind, merchant)}, find=existing)["id"]

    def await_imports(self, account_ids, count, rounds=12):
        for _ in range(rounds):
            if all(self.inbox.imports_of(a) >= count for a in account_ids):
                return
            self.sleep(600)
        raise RuntimeError("no TransactionsImported notification")

    def transactions(self, user_id, account_id):
        rows, ref = [], None
        while True:
            params = {"pageSize": 200}
            if ref:
                params["pageReference"] = ref
            page = self.as_user(user_id, "GET", f"/accounts/{account_id}/transactions", params=params)
            rows += page.get("transactions", [])
            ref = page.get("nextPageReference")
            if not ref:
                return rows

    def refresh(self, user_id, account_id, start):
        try:
            self.as_user(user_id, "POST", f"/accounts/{account_id}/refresh", json={"startDate": start})
        except Refused as r:
            if r.status != 409:         # 409: an import is running: our earlier attempt (answer lost) took
                raise

    def cleanup(self, accounts):
        list(self.pool.map(lambda ua: self.as_user(ua[0], "DELETE", f"/accounts/{ua[1]}", ok_missing=True),
                           accounts))
        list(self.pool.map(lambda u: self.http.call("DELETE", f"/users/{u}", self.token, ok_missing=True),
                           list(self.users)))
        self.http.call("DELETE", f"/webhooks/{self.webhook}", self.token, ok_missing=True)

    def run(self):
        try:
            self.rotate()
            self.subscribe()
            merchants = ["alpha", "bravo", "charlie"]
            users = list(self.pool.map(lambda m: self.onboard(f"Shop {m}", f"{m}@shops.example"), merchants))
            kind = self.choose_type()
            accounts = list(self.pool.map(lambda um: (um[0], self.connect(um[0], kind, um[1])),
                                          zip(users, merchants)))
            self.await_imports([a for _, a in accounts], 1)
            first = list(self.pool.map(lambda ua: len(self.transactions(*ua)), accounts))
            start = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=30)) \
                .strftime("%Y-%m-%dT%H:%M:%SZ")
            list(self.pool.map(lambda ua: self.refresh(ua[0], ua[1], start), accounts))
            self.await_imports([a for _, a in accounts], 2)
            second = list(self.pool.map(lambda ua: len(self.transactions(*ua)), accounts))
            self.cleanup(accounts)
            return {"first": first, "second": second}
        finally:
            self.pool.shutdown(wait=True)
            self.receiver.close()


def main(base, token, sleep=time.sleep):
    return Client(base, token, sleep).run()


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
