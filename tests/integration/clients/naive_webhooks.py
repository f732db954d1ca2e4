"""A naive integration that gets webhooks and refusals wrong (none of examples/naive_client.py's mistakes, nor
naive_tokens.py's: its tokens are right). Each mistake it makes is noted in `made` under the rule that should
name it:

- its receiver checks signatures with a secret from its config file, not the webhook's, and refuses every
  correctly signed notification; a second receiver answers 500 ("not implemented yet");
- it polls GetAccounts on a timer although it subscribed to the account events;
- it reads the account types again before every use;
- it sends a CreateAccount the service refused (400) twice more, unchanged;
- it calls a path with a typo;
- it still sends the deprecated `accountTypeId` to POST /accountui;
- it keeps its user token past expiry, calls with it twice, then gives up.
"""

import requests

from ptas_sandbox.webhooks import InvalidSignature, verify

PREFIX = "/partner/v2"
CONFIGURED_SECRET = "whsec_" + "c2VjcmV0LWZyb20tY29uZmln"      # not the webhook's


def strict(headers, body):
    try:
        verify(CONFIGURED_SECRET, headers, body, tolerance_seconds=None)
    except InvalidSignature:
        return 401
    return 204


class WebhookMisuser:
    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.made = set()
        self.strict = run.receiver(strict)
        self.unfinished = run.receiver(lambda headers, body: 500)

    def call(self, method, path, token, **kw):
        return requests.request(method, self.base + path, headers={"Authorization": f"Bearer {token}"},
                                timeout=30, **kw)

    def main(self, initial):
        backend = self.call("POST", "/partners/self/tokens", initial, json={
            "name": "backend", "expiresIn": 365 * 86400, "scope": "partner:all user:all"}).json()
        token = backend["accessToken"]
        for listed in self.call("GET", "/partners/self/tokens", token).json()["tokens"]:
            if listed["name"] == "initial token":
                self.call("DELETE", f"/partners/self/tokens/{listed['id']}", token)
        self.call("POST", "/webhooks", token, json={"callbackUrl": self.strict.url,
                                                    "events": ["AccountCreated", "AccountUpdated"]})
        self.call("POST", "/webhooks", token, json={"callbackUrl": self.unfinished.url,
                                                    "events": ["AccountCreated", "AccountDeleted"]})
        user = self.call("POST", "/users", token, json={"name": "Jane's Bakery"}).json()
        user_token = user["token"]["accessToken"]
        self.call("GET", "/account", user_token)                    # a typo
        self.made.add("unknown-path")
        kind = self.types(user_token)
        for _ in range(3):                                          # the service said 400; try again anyway
            self.call("POST", "/accounts", user_token, json={"accountTypeId": kind["id"],
                                                             "credentials": {"username": "jane"}})
        self.made.add("refused-repeated")
        self.types(user_token)
        self.call("POST", "/accounts", user_token, json={"accountTypeId": kind["id"], "credentials": {
            "username": "jane", "password": "s3cret"}}).json()
        self.run.sleep(0)
        self.made |= {"webhook-receiver-refused", "webhook-receiver-failed"}
        self.types(user_token)
        self.call("POST", "/accountui", user_token, json={"accountTypeId": kind["id"]}).json()
        self.made.add("deprecated-field")
        self.types(user_token)
        self.made.add("metadata-reread")
        for _ in range(8):                                          # "has anything changed?"
            self.call("GET", "/accounts", user_token).json()
            self.run.sleep(1800)
        self.made.add("polling-instead-of-webhook")
        self.run.sleep(86400)
        for _ in range(2):
            if self.call("GET", "/accounts", user_token).status_code == 401:
                continue
        self.made.add("expired-user-token")
        return user["id"]

    def types(self, user_token):
        types = self.call("GET", "/accounttypes", user_token).json()["accountTypes"]
        return next(t for t in types if t["id"] == "dummy")
