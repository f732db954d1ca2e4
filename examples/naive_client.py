"""A naive partner integration, as many first versions are: it works on a good day, and the integration report
finds what it does wrong (docs/chaos.md). Compare examples/good_client.py.

What is naive here: every call uses the initial partner token, which is never replaced nor revoked; a failed
call is sent again at once (no backoff, Retry-After ignored, no check whether a failed create happened anyway);
transactions are polled on a timer although a TransactionsImported webhook is subscribed; only the first page
is read.

    python examples/naive_client.py http://127.0.0.1:8080     # a new world, a run, then the report
"""

import sys
import time

import requests

PREFIX = "/partner/v2"


class NaiveClient:
    def __init__(self, base_url, token, sleep=time.sleep):
        self.base, self.token, self.sleep = base_url.rstrip("/"), token, sleep
        self.user_token = self.account_id = None
        self.seen = 0

    def call(self, method, path, token=None, **kw):
        """Sends again at once whatever did not work, up to three times."""
        for _ in range(3):
            try:
                response = requests.request(method, self.base + PREFIX + path, timeout=30,
                                            headers={"Authorization": f"Bearer {token or self.token}"}, **kw)
            except requests.ConnectionError:
                continue
            if response.status_code < 400:
                return response.json() if response.content else None
        raise RuntimeError(f"{method} {path} failed three times")

    def start(self, inbox_url):
        """Onboard one merchant: a user, a dummy account, and a webhook (which nobody reads)."""
        self.call("POST", "/webhooks", json={"callbackUrl": inbox_url, "events": ["TransactionsImported"]})
        user = self.call("POST", "/users", json={"name": "Jane's Bakery", "email": "jane@bakery.example"})
        self.user_token = user["token"]["accessToken"]
        account = self.call("POST", "/accounts", token=self.user_token, json={
            "accountTypeId": "dummy", "credentials": {"username": "jane", "password": "secret"}})
        self.account_id = account["id"]

    def tick(self):
        """Every few minutes: fetch the transactions again (the first page is all there is, surely)."""
        page = self.call("GET", f"/accounts/{self.account_id}/transactions", token=self.user_token)
        self.seen = len(page["transactions"])


if __name__ == "__main__":
    from good_client import demo
    demo(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080", NaiveClient)
