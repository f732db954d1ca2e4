"""A naive partner integration, written the way a developer who skimmed the spec might: it works on a good
day, and makes the mistakes numbered M1..M19 below (MANIFEST.md says which requests show each and why the spec
says it is wrong). Called as `main(base_url, partner_token, sleep)` like the careful clients.

None of these is a mistake of tests/integration/clients/naive_*.py or examples/naive_client.py.
"""

import base64
import json
import sys
import threading
import time

import requests

from .common import PREFIX, Receiver, signature_ok

SHOP_CONFIG = {"email": "owner@corner-shop.example", "name": "Corner Shop"}


class Naive:
    def __init__(self, base, token, sleep):
        self.root = base.rstrip("/")
        self.api = self.root + PREFIX
        self.initial = token
        self.sleep = sleep
        self.secrets = []
        self.seen = 0
        self.lock = threading.Lock()
        self.receiver = Receiver(self.receive)

    # a receiver that verifies the signature (good) but does its work before it answers (M12) and, at the old
    # path, answers with a redirect to the new one (M13)
    def receive(self, headers, body):
        if headers.get(":path", "").startswith("/old/"):
            return 301                            # M13: moved; the service does not follow redirects
        if not any(signature_ok(s, headers, body) for s in self.secrets):
            return 401
        time.sleep(1.5)                           # M12: "process the event" before acknowledging
        with self.lock:
            self.seen += 1
        return 204

    def h(self, token):
        return {"Authorization": f"Bearer {token}"}

    def get(self, path, token, **kw):
        return requests.get(self.api + path, headers=self.h(token), timeout=30, **kw)

    def post(self, path, token, body=None, **kw):
        return requests.post(self.api + path, headers=self.h(token), json=body, timeout=30, **kw)

    def delete(self, path, token):
        return requests.delete(self.api + path, headers=self.h(token), timeout=30)

    def run(self):
        # M1: the partner token sent as an API key header (API-key authentication no longer exists, §5.1)
        requests.get(self.api + "/partners/self", headers={"X-API-Key": self.initial}, timeout=30)
        me = self.get("/partners/self", self.initial).json()

        # A long-lived backend token (right), scoped without partner:read
        backend = self.post("/partners/self/tokens", self.initial, {
            "name": "backend", "expiresIn": 31536000,
            "scope": "partner:update user:all account:all transaction:all"}).json()
        token = backend["accessToken"]
        initial_id = json.loads(base64.urlsafe_b64decode(self.initial.split(".")[1] + "==="))["jti"]
        # M3: the initial token asked to revoke itself (§3, §5.2: a token cannot revoke itself)
        self.delete(f"/partners/self/tokens/{initial_id}", self.initial)
        self.delete(f"/partners/self/tokens/{initial_id}", token)

        # M2: settings changed with the removed PATCH /partners (§4.2 note 6), then the right PUT
        requests.patch(self.api + "/partners", headers=self.h(token), json={"email": "dev@corner-shop.example"},
                       timeout=30)
        self.put_partner(token, me)

        # M4: token list read with a token that has partner:update but no partner:read (§4.1 rule 3, §7.1)
        self.get("/partners/self/tokens", token)

        # M11: a webhook created on every start, no look at GET /webhooks: two subscriptions to one URL
        for _ in range(2):
            hook = self.post("/webhooks", token, {"callbackUrl": self.receiver.url,
                                                  "events": ["TransactionsImported", "AccountCreated"]}).json()
            self.secrets.append(hook["secret"])
        # M13: an old callback path kept subscribed; it now answers a redirect (not followed by the service)
        old = self.post("/webhooks", token, {"callbackUrl": self.receiver.url.replace("/hooks/ptas", "/old/ptas"),
                                             "events": ["AccountCreated"]}).json()
        self.secrets.append(old["secret"])

        # the merchant; its user token without user.token:create (the default)
        user = self.create_user(token)
        user_id, user_token = user["id"], user["token"]["accessToken"]

        # M5: the user token asks for a new user token for itself without the scope (§4.2 notes 1 and 3)
        r = self.post("/users/self/tokens", user_token, {"name": "renew"})
        if r.status_code >= 400:
            # M6: "no token? register the user again": a second CreateUser for the same merchant (§1 cap. 2:
            # CreateUserToken is how a new token is made)
            user = self.create_user(token)
            user_token = user["token"]["accessToken"]
            user_id = user["id"]

        # M7: the user token used for a partner-only read (user:read is a partner scope, §5 scope table)
        self.get("/users", user_token)

        types = self.get("/accounttypes", token).json()["accountTypes"]
        kind = next(t for t in types if t["name"].lower().startswith("dummy provider"))
        creds = {f["name"]: "corner" if f.get("Type") == "Text" else "pw-corner"
                 for f in kind["accountFields"] if f.get("isRequired")}
        body = {"accountTypeId": kind["id"], "name": "Corner Shop", "credentials": creds}
        # M9: JSON body sent without Content-Type: application/json (§4.1 rule 1), then "fixed"
        requests.post(self.api + "/accounts", headers=self.h(user_token), data=json.dumps(body), timeout=30)
        account = self.post("/accounts", user_token, body).json()
        # M8: a second account for the same provider and user, no look at GetAccounts (§1: one account per
        # provider per user)
        second = self.post("/accounts", user_token, dict(body, name="Corner Shop (2)"))

        # M17: the OAuth2 flow with the partner token put into the end user's redirect URL (§5.2)
        auth_kind = next((t for t in types if any(f.get("Type") == "Auth" for f in t["accountFields"])), None)
        if auth_kind:
            self.post("/oauth", token, {"accountTypeId": auth_kind["id"], "userId": user_id,
                                        "redirectUrl": f"https://corner-shop.example/ptas/back?token={token}"})

        self.sleep(3600)                          # the import has run; webhooks came in

        # M15: pageReference treated as a page number (it comes from next/previousPageReference, §4.3)
        self.get(f"/accounts/{account['id']}/transactions", user_token, params={"pageReference": "2"})
        rows = self.read_all(account["id"], user_token)
        # M16: the whole list read again at once, nothing changed (statistics/webhook say when, §1 cap. 5)
        rows = self.read_all(account["id"], user_token)
        # M14: the deprecated GetTransactionsDeprecated for an "export" (§4.3: must not be used for new work)
        self.get(f"/transactions/{account['id']}", user_token)

        # M10: TriggerAccountRefresh without its start date (§4.3: it takes a start date)
        self.post(f"/accounts/{account['id']}/refresh", user_token, {})

        # clean-up: M18: a dropped connection here is not handled; the job dies
        self.delete(f"/accounts/{account['id']}", user_token)
        if second.status_code < 300:
            self.delete(f"/accounts/{second.json()['id']}", user_token)
        self.receiver.close()
        return {"transactions": len(rows), "notifications": self.seen}

    def put_partner(self, token, me):
        self.put("/partners/self", token, {"email": "dev@corner-shop.example", "name": me.get("name", "Corner"),
                                           "redirectUrls": me.get("redirectUrls", [])})

    def put(self, path, token, body):
        return requests.put(self.api + path, headers=self.h(token), json=body, timeout=30)

    def create_user(self, token):
        while True:
            r = self.post("/users", token, SHOP_CONFIG)
            if r.status_code in (429, 503):
                self.sleep(5)                     # M19: a fixed 5 s pause, whatever Retry-After says
                continue
            return r.json()

    def read_all(self, account_id, token):
        rows, ref = [], None
        while True:
            params = {"pageSize": 100}
            if ref:
                params["pageReference"] = ref
            page = self.get(f"/accounts/{account_id}/transactions", token, params=params).json()
            rows += page["transactions"]
            ref = page.get("nextPageReference")
            if not ref:
                return rows


def main(base, token, sleep=time.sleep):
    return Naive(base, token, sleep).run()


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
