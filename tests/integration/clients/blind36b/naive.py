"""A naive partner client (blind case 36b): a "merchant portal" backend written after a quick read of the spec.
It works on a good day. Its mistakes are numbered N1..N20 in the code and in MANIFEST.md; N17-N19 show only
when the service fails (run.py's faulted naive run). Every answer is taken at face value; a failed call is
logged and the script goes on.
"""

import base64
import json
import time

import requests

PREFIX = "/partner/v2"


def jti(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["jti"]


class MerchantPortal:
    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.log = []
        # N7: the old receiver URL moved to https; it answers a redirect instead of the notification's 2xx
        self.moved = run.receiver(lambda headers, body: (302, {"Location": "https://portal.example/hooks"}))
        # N8: the receiver does the work (a sync of the merchant) before it answers
        self.slow = run.receiver(self.slow_handler)

    @staticmethod
    def slow_handler(headers, body):
        time.sleep(1.6)
        return 200

    def call(self, method, path, token, raw_auth=False, **kw):
        headers = kw.pop("headers", {})
        headers["Authorization"] = token if raw_auth else f"Bearer {token}"
        try:
            response = requests.request(method, self.base + path, headers=headers, timeout=30, **kw)
        except requests.RequestException as problem:
            self.log.append(f"{method} {path}: {problem.__class__.__name__}")
            return None
        self.log.append(f"{method} {path}: {response.status_code}")
        return response

    @staticmethod
    def body(response):
        if response is None or response.status_code >= 400:
            return None
        try:
            return response.json()
        except ValueError:
            return None

    def main(self, initial):
        # A long-lived token "like the spec says", but without partner:read
        portal = self.body(self.call("POST", "/partners/self/tokens", initial, json={
            "name": "portal", "expiresIn": 365 * 86400,
            "scope": "partner:update partner:create user:all account:all transaction:all"}))
        token = portal["accessToken"] if portal else initial

        # N3: the initial token still used (the settings page was written first) after the long-lived one is held
        self.call("GET", "/partners/self", initial)

        # N4: list tokens with a token holding only partner:update: 403, and the same again (spec §4.1 rule 3)
        for _ in range(2):
            self.call("GET", "/partners/self/tokens", token)

        # N5: "revoke the initial token" with the initial token itself (spec §3, §5.2: a token cannot revoke itself)
        self.call("DELETE", f"/partners/self/tokens/{jti(initial)}", initial)

        # N2: a JSON body without Content-Type application/json (spec §4.1 rule 1)
        self.call("PUT", "/partners/self", token, data=json.dumps({"email": "ops@portal.example"}))

        # N9: the single redirectUrl the old docs showed (replaced by redirectUrls, spec §2, 2.0.0-beta2)
        self.call("PUT", "/partners/self", token, json={"email": "ops@portal.example",
                                                        "redirectUrl": "https://portal.example/oauth/done"})

        # N10: PATCH on the own partner record (the interface has GET and PUT; PATCH /partners was removed)
        self.call("PATCH", "/partners/self", token, json={"name": "Merchant Portal"})

        # N1: the raw JWT as the Authorization header, no "Bearer " scheme (spec §5.1)
        self.call("GET", "/users", token, raw_auth=True)

        # N20: a deploy token (partner:create only) for the on-premise installer, tried on the parent partner
        deploy = self.body(self.call("POST", "/partners/self/tokens", token, json={
            "name": "onprem-installer", "expiresIn": 7200, "scope": "partner:create"}))
        if deploy:
            self.call("GET", "/partners/self", deploy["accessToken"])

        # N6: the partner token put into the callback URL "so the receiver can call back with it"
        hook_body = {"name": "portal", "callbackUrl": f"{self.moved.url}?auth={token}",
                     "events": ["TransactionsImported", "AccountCreated"]}
        # N18: a 5xx on create means "try again": sent again unchanged without looking
        for _ in range(3):
            response = self.call("POST", "/webhooks", token, json=hook_body)
            if response is not None and response.status_code < 300:
                break
        self.call("POST", "/webhooks", token, json={"name": "portal-sync", "callbackUrl": self.slow.url,
                                                    "events": ["AccountCreated", "TransactionsImported"]})

        # N11: the old test path under /webhooks (removed; now /testevents/...)
        self.call("POST", "/webhooks/test-events", token, json={"eventType": "AccountCreated"})

        # N16: a partner scope asked for on a user token (partner scopes are for partner tokens, spec §5.7)
        self.call("POST", "/users", token, json={"name": "Jane's Bakery", "email": "jane@bakery.example",
                                                 "scope": "account:all transaction:all partner:read"})
        user = self.body(self.call("POST", "/users", token, json={"name": "Jane's Bakery",
                                                                  "email": "jane@bakery.example"}))
        if not user:
            return 0
        user_token = user["token"]["accessToken"]

        types = self.body(self.call("GET", "/accounttypes", user_token)) or {"accountTypes": []}
        by_id = {t["id"]: t for t in types["accountTypes"]}

        # N13: the OAuth2 provider created like any other, without the authReference of the OAuth2 flow (spec §1)
        if "dummy-auth" in by_id:
            self.call("POST", "/accounts", user_token, json={"accountTypeId": "dummy-auth",
                                                             "credentials": {"shopName": "Jane's"}})
        account = self.body(self.call("POST", "/accounts", user_token, json={
            "accountTypeId": "dummy", "credentials": {"username": "jane", "password": "s3cret"}}))
        # N14: the "connect" button pressed twice: a second account of the same provider for the same user
        self.call("POST", "/accounts", user_token, json={
            "accountTypeId": "dummy", "credentials": {"username": "jane", "password": "s3cret"}})

        # N15: a new user token made for the merchant's mobile app, yet the backend keeps the old one in use
        self.body(self.call("POST", f"/users/{user['id']}/tokens", token, json={"expiresIn": 86400}))
        self.run.sleep(2 * 3600)
        if account:
            self.call("GET", f"/accounts/{account['id']}", user_token)
            # N12: the deprecated GetTransactions form from an old code sample (spec §4.3)
            self.call("GET", f"/transactions/{account['id']}", user_token)

        # N17: a 503 is retried after a fixed 2 s, whatever Retry-After says
        for _ in range(3):
            response = self.call("GET", "/accounts", user_token)
            if response is not None and response.status_code in (429, 500, 502, 503, 504):
                self.run.sleep(2)
                continue
            break

        # N19: the last call of the nightly job; a 5xx there ends the job with nothing retried
        response = self.call("GET", f"/users/{user['id']}", token)
        if response is None or response.status_code >= 500:
            return -1
        return 1
