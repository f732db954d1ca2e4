"""A careful partner integration written from the spec: it onboards a merchant (a user, a dummy account, a
TransactionsImported webhook to its own verifying receiver) and reads every transaction once the webhook says
the import finished. It survives every fault the sandbox injects:

- spec §5: a long-lived token with only the scopes it needs, then the initial token revoked with it;
- a 429 or 503 is waited out (Retry-After) before that operation is sent again; other 5xx and dropped or
  garbled answers are retried with a growing wait;
- a write whose outcome is unknown (5xx, a dropped connection, a garbled body) is looked up with a read
  before it is sent again; a token made but never handed over is revoked;
- account types and their credential fields come from GetAccountTypes (spec §1.4), read once;
- its receiver verifies signatures (4xx when wrong), keeps each event once, and answers at once.
"""

import requests

from .harness import Inbox, parsed

PREFIX = "/partner/v2"
ATTEMPTS = 8


class Refused(Exception):
    """A 4xx: the request itself is wrong; sending it again would not help."""

    def __init__(self, response):
        super().__init__(f"{response.status_code} {response.text[:200]}")
        self.status = response.status_code


class Unknown(Exception):
    """A write whose outcome cannot be told from its answer."""


class Transport:
    """Requests with the waiting the service asks for; reads retried, writes tried once (see `create`)."""

    def __init__(self, base, sleep):
        self.base, self.sleep = base, sleep

    def once(self, method, path, token, **kw):
        """(the answer, its JSON or Unknown when the body is cut or garbled); (None, None) when the connection
        failed."""
        try:
            response = requests.request(method, self.base + PREFIX + path, timeout=30,
                                        headers={"Authorization": f"Bearer {token}"}, **kw)
        except requests.RequestException:
            return None, None
        try:
            return response, parsed(response)
        except ValueError:
            return response, Unknown

    def read(self, method, path, token, **kw):
        """GET (or an idempotent DELETE) until it answers; 4xx raises Refused."""
        wait = 1
        for _ in range(ATTEMPTS):
            response, body = self.once(method, path, token, **kw)
            if response is not None and 200 <= response.status_code < 300 and (body is not Unknown
                                                                                  or method == "DELETE"):
                return body
            if response is not None and 400 <= response.status_code < 500 and response.status_code != 429:
                raise Refused(response)
            self.sleep(retry_after(response, wait))
            wait *= 2
        raise RuntimeError(f"{method} {path} kept failing")

    def create(self, path, token, body, find, forget=None):
        """A POST that must happen once: after an unknown outcome, `find()` looks for what it made (and
        `forget(found)` undoes a made thing whose answer was lost) before it is sent again."""
        wait = 1
        for _ in range(ATTEMPTS):
            response, answer = self.once("POST", path, token, json=body)
            if response is not None and response.status_code in (429, 503):
                self.sleep(retry_after(response, wait))       # refused before it ran: wait, send again
                wait *= 2
                continue
            if response is not None and 400 <= response.status_code < 500:
                raise Refused(response)
            if response is not None and 200 <= response.status_code < 300 and answer is not Unknown:
                return answer
            found = find()                                     # it may have run: look before repeating
            if found is not None and forget is None:
                return found
            if found is not None:
                forget(found)
            self.sleep(wait)
            wait *= 2
        raise RuntimeError(f"POST {path} kept failing")


def retry_after(response, wait):
    if response is not None and response.status_code in (429, 503):
        value = response.headers.get("Retry-After", "")
        if value.isdigit():
            return int(value)
    return wait


class CarefulClient:
    NAME = "ci-backend"

    def __init__(self, run):
        self.run = run
        self.http = Transport(run.base, run.sleep)
        self.inbox = Inbox()
        self.receiver = run.receiver(self.inbox)
        self.token = None

    # --- spec §5 -----------------------------------------------------------------------------------------
    def rotate(self, initial):
        http, name = self.http, self.NAME

        def orphans():
            mine = [t for t in http.read("GET", "/partners/self/tokens", initial)["tokens"]
                    if t["name"] == name and not t["isRevoked"]]
            return mine or None

        def revoke(tokens):
            for token in tokens:
                revoke_once(http, f"/partners/self/tokens/{token['id']}", initial)

        created = http.create("/partners/self/tokens", initial, {
            "name": name, "expiresIn": 365 * 86400, "scope": "partner:all user:all user.token:all"},
            find=orphans, forget=revoke)
        self.token = created["accessToken"]
        for token in http.read("GET", "/partners/self/tokens", self.token)["tokens"]:
            if token["name"] == "initial token" and not token["isRevoked"]:
                revoke_once(http, f"/partners/self/tokens/{token['id']}", self.token)

    # --- the job -------------------------------------------------------------------------------------------
    def subscribe(self):
        http, url = self.http, self.receiver.url

        def existing():
            found = [w for w in http.read("GET", "/webhooks", self.token)["webhooks"] if w["callbackUrl"] == url]
            return found[0] if found else None

        hook = http.create("/webhooks", self.token, {"callbackUrl": url, "events": ["TransactionsImported"]},
                           find=existing)
        self.inbox.secret = hook["secret"]

    def account_type(self, token):
        """The dummy provider's type as the catalogue describes it (ids and fields are never hard-coded)."""
        types = self.http.read("GET", "/accounttypes", token)["accountTypes"]
        return next(t for t in types if t["name"] == "Dummy provider")

    def onboard(self, name, email):
        """A user with a user token; (user id, user token)."""
        http = self.http

        def existing():
            found = [u for u in http.read("GET", "/users", self.token)["users"] if u.get("email") == email]
            return found[0] if found else None

        user = http.create("/users", self.token, {"name": name, "email": email}, find=existing)
        if user.get("token"):
            return user["id"], user["token"]["accessToken"]
        token = http.create(f"/users/{user['id']}/tokens", self.token, {"expiresIn": 86400},
                            find=lambda: http.read("GET", f"/users/{user['id']}", self.token) and None)
        return user["id"], token["accessToken"]

    def connect(self, user_token, kind):
        http = self.http
        login = {"username": "jane", "password": "s3cret"}

        def existing():
            found = http.read("GET", "/accounts", user_token)["accounts"]
            return found[0] if found else None

        return http.create("/accounts", user_token, {
            "accountTypeId": kind["id"],
            "credentials": {f["name"]: login[f["name"]] for f in kind["accountFields"] if f["isRequired"]}},
            find=existing)

    def imported(self, account_id, patience=12):
        for _ in range(patience):
            if any(e["data"]["account"]["id"] == account_id for e in self.inbox.of_kind("TransactionsImported")):
                return True
            self.run.sleep(600)
        return False

    def transactions(self, account_id, user_token):
        out, reference = [], None
        while True:
            query = {"pageSize": 200, **({"pageReference": reference} if reference else {})}
            page = self.http.read("GET", f"/accounts/{account_id}/transactions", user_token, params=query)
            out += page["transactions"]
            reference = page["nextPageReference"]
            if reference is None:
                return out

    def main(self, initial):
        self.rotate(initial)
        self.subscribe()
        user_id, user_token = self.onboard("Jane's Bakery", "jane@bakery.example")
        account = self.connect(user_token, self.account_type(user_token))
        assert self.imported(account["id"]), "no TransactionsImported notification arrived"
        return len(self.transactions(account["id"], user_token))


def revoke_once(http, path, token):
    """Revoking is idempotent in effect: an answer lost after it ran leaves a 404 or 409 on the next try."""
    try:
        http.read("DELETE", path, token)
    except Refused as refused:
        if refused.status not in (404, 409):
            raise
