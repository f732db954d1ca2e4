"""The naive variant: first page only, a 429 retried at once in a tight loop, errors ignored."""
import requests

from .common import PREFIX, SCOPE


class NaiveClient:
    def __init__(self, base_url, token, sleep=None, attempts=20):
        self.base, self.token, self.attempts = base_url.rstrip("/"), token, attempts

    def request(self, method, path, **kw):
        r = None
        for _ in range(self.attempts):                # tight loop: no sleep at all
            try:
                r = requests.request(method, self.base + PREFIX + path, timeout=30,
                                     headers={"Authorization": f"Bearer {self.token}"}, **kw)
            except requests.ConnectionError:
                return {}                             # errors ignored
            if r.status_code != 429:
                break
        try:
            return r.json()                           # whatever came back, status unchecked
        except ValueError:
            return {}

    def bootstrap(self):                              # same as careful, to isolate the three faults
        created = self.request("POST", "/partners/self/tokens",
                               json={"name": "backend", "expiresIn": 31536000, "scope": SCOPE})
        self.token = created.get("accessToken", self.token)
        for tok in self.request("GET", "/partners/self/tokens").get("tokens", []):
            if tok["id"] != created.get("id") and tok["name"] == "initial token" and tok["isValid"]:
                self.request("DELETE", f"/partners/self/tokens/{tok['id']}")

    def create_user(self, name, email):
        return self.request("POST", "/users", json={"name": name, "email": email})

    def connect_dummy_account(self, user_id, login):
        kind = self.request("GET", "/accounttypes/dummy")
        creds = {f["name"]: login[f["name"]] for f in kind.get("accountFields", []) if f["name"] in login}
        return self.request("POST", "/accounts",
                            json={"userId": user_id, "accountTypeId": "dummy", "credentials": creds})

    def list_transactions(self, account_id, page_size=None):
        page = self.request("GET", f"/accounts/{account_id}/transactions",
                            params={"pageSize": page_size} if page_size else {})
        return page.get("transactions", [])           # first page only
