"""A naive integration that gets credentials wrong (none of examples/naive_client.py's mistakes). It works on
a good day; each mistake it makes is noted in `made` under the report rule that should name it:

- its first call puts the token in the query string (`?access_token=`), as another API it knows wants;
- it makes a partner token with every scope it holds, uses two of them, and never revokes the initial token;
- it rotates a short-lived "sync" token, revokes it, and a cached session goes on using the revoked one;
- it still calls the removed GET /users/{id}/token to fetch a user's token;
- it makes a new user token for every request;
- it names the account type and the credential fields from memory;
- it subscribes to every event kind it has heard of, retired ones included.
"""

import requests

from ptas_sandbox.simulator.scopes import ROOT_SCOPE

PREFIX = "/partner/v2"


class TokenHoarder:
    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.made = set()
        self.inbox = run.receiver(lambda headers, body: 204)

    def get(self, path, token, **kw):
        return requests.get(self.base + path, headers={"Authorization": f"Bearer {token}"}, timeout=30, **kw)

    def post(self, path, token, body):
        return requests.post(self.base + path, json=body, headers={"Authorization": f"Bearer {token}"},
                             timeout=30)

    def main(self, initial):
        requests.get(self.base + "/users", params={"access_token": initial}, timeout=30)
        self.made.add("credentials-misplaced")
        wide = self.post("/partners/self/tokens", initial, {"name": "app", "expiresIn": 365 * 86400,
                                                            "scope": ROOT_SCOPE}).json()["accessToken"]
        self.made |= {"scope-too-wide", "initial-token-not-revoked"}
        self.post("/webhooks", wide, {"callbackUrl": self.inbox.url, "events": [
            "TransactionsImported", "AccountCreated", "TransactionsImportError", "AccountError"]}).json()
        self.made.add("retired-event-subscribed")
        sync = self.post("/partners/self/tokens", wide, {"name": "sync", "expiresIn": 7200,
                                                         "scope": "user:read"}).json()
        self.get("/users", sync["accessToken"]).json()
        requests.delete(f"{self.base}/partners/self/tokens/{sync['id']}", timeout=30,
                        headers={"Authorization": f"Bearer {wide}"})
        self.get("/users", sync["accessToken"])                # the cached session: revoked a moment ago
        self.made.add("revoked-token-used")
        user = self.post("/users", wide, {"name": "Jane's Bakery", "email": "jane@bakery.example"}).json()
        self.get(f"/users/{user['id']}/token", wide)            # the old way to a user's token: removed
        self.made.add("removed-path")
        account = None
        for _ in range(3):
            fresh = self.post(f"/users/{user['id']}/tokens", wide, {"expiresIn": 86400}).json()["accessToken"]
            if account is None:
                account = self.post("/accounts", fresh, {"accountTypeId": "dummy", "credentials": {
                    "username": "jane", "password": "s3cret"}}).json()
                self.made.add("account-types-hardcoded")
            else:
                self.get(f"/accounts/{account['id']}", fresh).json()
        self.made.add("token-per-request")
        return account["id"]
