"""A well-behaved partner integration: the same job as examples/naive_client.py, and an integration report
without findings (docs/chaos.md).

What it does right: it creates a long-lived partner token with the scopes it needs and revokes the initial one
with it (spec §5); it reads the account type before it names its credential fields (spec §1.4); it
waits the seconds Retry-After names after a 429 or 503, and backs off on other failures; after a failed create it
looks whether the create happened before trying again; it reads transactions when its webhook says an import
finished, and follows nextPageReference to the last page.

    python examples/good_client.py http://127.0.0.1:8080     # a new world, a run, then the report
"""

import json
import sys
import time

import requests

PREFIX = "/partner/v2"


class Failed(Exception):
    def __init__(self, response):
        super().__init__(f"{response.status_code}: {response.text[:200]}")
        self.response = response


class GoodClient:
    def __init__(self, base_url, token, sleep=time.sleep):
        self.base, self.token, self.sleep = base_url.rstrip("/"), token, sleep
        self.user_token = self.account_id = self.inbox_url = None
        self.handled = set()          # notification ids already acted on (deliveries may repeat)
        self.seen = 0

    def call(self, method, path, token=None, retry=True, **kw):
        """Retries only what is safe to retry, after the wait the service asks for (or a growing one)."""
        wait = 1
        for attempt in range(5):
            try:
                response = requests.request(method, self.base + PREFIX + path, timeout=30,
                                            headers={"Authorization": f"Bearer {token or self.token}"}, **kw)
            except requests.ConnectionError:
                if not retry:
                    raise
                self.sleep(wait)
                wait *= 2
                continue
            if response.status_code < 400:
                return response.json() if response.content else None
            if response.status_code not in (429, 500, 502, 503, 504) or not retry:
                raise Failed(response)
            self.sleep(int(response.headers.get("Retry-After", wait)))
            wait *= 2
        raise Failed(response)

    def start(self, inbox_url):
        """A long-lived token first, the initial one revoked with it; then the merchant."""
        created = self.call("POST", "/partners/self/tokens", json={
            "name": "backend", "expiresIn": 31536000, "scope": "partner:all user:all user.token:all"})
        initial = self.token
        self.token = created["accessToken"]
        for token in self.call("GET", "/partners/self/tokens")["tokens"]:
            if token.get("id") and token["id"] != created["id"] and token["name"] == "initial token":
                self.call("DELETE", f"/partners/self/tokens/{token['id']}")
        del initial                   # never used again
        self.inbox_url = inbox_url
        self.call("POST", "/webhooks", json={"callbackUrl": inbox_url, "events": ["TransactionsImported"]})
        user = self.create_user_once({"name": "Jane's Bakery", "email": "jane@bakery.example"})
        self.user_token = self.call("POST", f"/users/{user['id']}/tokens", json={"expiresIn": 86400})["accessToken"]
        kind = self.call("GET", "/accounttypes/dummy", token=self.user_token)     # its fields, never hard-coded
        login = {"username": "jane", "password": "secret"}
        account = self.call("POST", "/accounts", token=self.user_token, retry=False, json={
            "accountTypeId": kind["id"], "credentials": {f["name"]: login[f["name"]] for f in kind["accountFields"]}})
        self.account_id = account["id"]

    def create_user_once(self, body):
        """A create is not idempotent: after a 5xx or a dropped connection, look before creating again."""
        for _ in range(3):
            try:
                return self.call("POST", "/users", json=body, retry=False)
            except (Failed, requests.ConnectionError) as failure:
                if isinstance(failure, Failed) and failure.response.status_code < 500:
                    raise
                existing = [u for u in self.call("GET", "/users")["users"] if u.get("email") == body["email"]]
                if existing:
                    return existing[0]
                self.sleep(2)
        raise RuntimeError("could not create the user")

    def tick(self, notifications):
        """Act on new TransactionsImported notifications of our account: read every page."""
        for note in notifications:
            if note["id"] in self.handled or note["eventType"] != "TransactionsImported":
                continue
            self.handled.add(note["id"])
            if note["data"]["account"]["id"] == self.account_id:
                self.seen = len(self.all_transactions())

    def all_transactions(self):
        out, reference = [], None
        while True:
            query = {"pageSize": 500, **({"pageReference": reference} if reference else {})}
            page = self.call("GET", f"/accounts/{self.account_id}/transactions", token=self.user_token, params=query)
            out += page["transactions"]
            reference = page["nextPageReference"]
            if reference is None:
                return out


def demo(base, client_class, ticks=6, minutes=20):
    """Run a client in a new world with a few faults on, then print the integration report."""
    root = requests.post(f"{base}/_sandbox/partners", json={"name": "Demo", "frozen": True}, timeout=30).json()
    control = {"Authorization": f"Bearer {root['worldKey']}"}        # the harness's key, not the client's token
    advance = lambda seconds: requests.post(f"{base}/_sandbox/clock", json={"advance": seconds}, headers=control,
                                            timeout=30)
    for fault in ({"match": {"operationId": "CreateUser"}, "effect": {"type": "success-then-500"}},
                  {"match": {"operationId": "GetTransactions"}, "effect": {"type": "status", "status": 503,
                                                                          "retryAfter": 30}}):
        requests.post(f"{base}/_sandbox/faults", json=fault, headers=control, timeout=30).raise_for_status()
    client = client_class(base, root["accessToken"], sleep=advance)
    inbox = f"{base}/_sandbox/echo/demo-{root['world']['id']}"
    client.start(inbox)
    for _ in range(ticks):
        advance(minutes * 60)
        if isinstance(client, GoodClient):
            requests.post(f"{base}/_sandbox/webhooks/flush", headers=control, timeout=60)
            # stands in for the partner's receiver: the world's echo captures
            captures = requests.get(inbox, headers=control, timeout=30).json()["captures"]
            client.tick([json.loads(c["body"]) for c in captures])
        else:
            client.tick()
    report = requests.get(f"{base}/_sandbox/report", params={"format": "text"}, headers=control, timeout=30)
    print(report.text)
    return root["worldKey"]


if __name__ == "__main__":
    demo(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080", GoodClient)
