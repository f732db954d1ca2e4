"""The careful variant: reads every page, honours Retry-After on 429/503, retries only what is safe,
looks before re-creating after an unknown outcome, raises on other errors."""
import time

import requests

from .common import PREFIX, SCOPE, ApiError


class CarefulClient:
    def __init__(self, base_url, token, sleep=None, attempts=6):
        # time.sleep looked up at each call, so a sleep a test put in its place is the one used
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.base, self.token, self.attempts = base_url.rstrip("/"), token, attempts

    # -- transport -------------------------------------------------------------------------------------------
    def request(self, method, path, *, idempotent=True, **kw):
        backoff = 1
        for attempt in range(self.attempts):
            try:
                r = requests.request(method, self.base + PREFIX + path, timeout=30,
                                     headers={"Authorization": f"Bearer {self.token}"}, **kw)
            except requests.ConnectionError:
                if not idempotent:
                    raise
                self.sleep(backoff)
                backoff *= 2
                continue
            if r.status_code in (429, 503) or (idempotent and r.status_code in (500, 502, 504)):
                self.sleep(int(r.headers.get("Retry-After", backoff)))
                backoff *= 2
                continue
            if r.status_code >= 400:
                raise ApiError(r)
            try:
                return r.json() if r.content else None
            except ValueError:                       # a garbled 2xx: read it again if that is safe
                if not idempotent:
                    raise ApiError(r)
                continue
        raise ApiError(r)

    # -- the integration -------------------------------------------------------------------------------------
    def bootstrap(self):
        """Spec §5: a long-lived token with the scopes we need, then revoke the initial one."""
        created = self.request("POST", "/partners/self/tokens", idempotent=False,
                               json={"name": "backend", "expiresIn": 31536000, "scope": SCOPE})
        self.token = created["accessToken"]
        for tok in self.request("GET", "/partners/self/tokens")["tokens"]:
            if tok["id"] != created["id"] and tok["name"] == "initial token" and tok["isValid"]:
                self.request("DELETE", f"/partners/self/tokens/{tok['id']}")

    def create_user(self, name, email):
        for _ in range(3):
            try:
                return self.request("POST", "/users", idempotent=False, json={"name": name, "email": email})
            except (ApiError, requests.ConnectionError) as e:
                if isinstance(e, ApiError) and e.response.status_code < 500:
                    raise
                found = [u for u in self.request("GET", "/users")["users"] if u.get("email") == email]
                if found:
                    return found[0]
        raise RuntimeError("could not create the user")

    def connect_dummy_account(self, user_id, login):
        kind = self.request("GET", "/accounttypes/dummy")          # the form, never hard-coded
        creds = {f["name"]: login[f["name"]] for f in kind["accountFields"] if f["name"] in login}
        return self.request("POST", "/accounts", idempotent=False,
                            json={"userId": user_id, "accountTypeId": kind["id"], "credentials": creds})

    def list_transactions(self, account_id, page_size=None):
        out, ref = [], None
        while True:
            params = {**({"pageSize": page_size} if page_size else {}), **({"pageReference": ref} if ref else {})}
            page = self.request("GET", f"/accounts/{account_id}/transactions", params=params)
            out += page["transactions"]
            ref = page.get("nextPageReference")
            if not ref:
                return out
