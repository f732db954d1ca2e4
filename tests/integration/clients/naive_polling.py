"""A naive integration in the style of a cron script: functions on a timer, every answer taken at face value,
five hours of world time. Its token hygiene at start-up is right (a long-lived admin token, the initial token
revoked), which neither other naive client's is; its mistakes are those of a job that runs for hours. Each is
noted in `made` under the report rule that should name it:

- a 2-hour "sync" partner token made once and never renewed: once it expires, every sync call is a 401;
- a dashboard widget that makes a new 1-hour partner token for each request it sends;
- the account type and the credential field names from its config file;
- a TransactionsImported webhook, yet the first shop's transactions (first page only) polled every 10 min
  and its GetAccount every 5 min for statistics.count;
- a nightly export burst that goes straight on after a 429 (the global limit: every request must wait);
- a receiver that acknowledges everything without checking the signature (seen in runs with a bad-signature
  fault), switched off by a redeploy while its webhook stays active.
"""

import requests

PREFIX = "/partner/v2"
CONFIG = {"accountType": "dummy", "credentials": {"username": "shop", "password": "pass1234"}}
SHOPS = 8


class CronPoller:
    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.made, self.polled = set(), set()
        self.receiver = run.receiver(lambda headers, body: 200)           # "we trust the sender"

    def call(self, method, path, token, **kw):
        """The JSON answer, or None when it failed (the script logs nothing and goes on)."""
        try:
            response = requests.request(method, self.base + path, headers={"Authorization": f"Bearer {token}"},
                                        timeout=30, **kw)
        except requests.RequestException:
            return None
        if response.status_code >= 400:
            return None
        try:
            return response.json() if response.content else {}
        except ValueError:
            return None

    def main(self, initial):
        admin = self.call("POST", "/partners/self/tokens", initial, json={
            "name": "admin", "expiresIn": 365 * 86400,
            "scope": "partner:all user:all account:all transaction:all"})["accessToken"]
        for token in self.call("GET", "/partners/self/tokens", admin)["tokens"]:
            if token["name"] == "initial token":
                self.call("DELETE", f"/partners/self/tokens/{token['id']}", admin)
        sync = self.call("POST", "/partners/self/tokens", admin, json={
            "name": "sync", "expiresIn": 2 * 3600, "scope": "user:read account:all transaction:read"})["accessToken"]
        self.call("POST", "/webhooks", admin, json={"callbackUrl": self.receiver.url,
                                                    "events": ["TransactionsImported"]})
        shops = []
        for n in range(SHOPS):
            user = self.call("POST", "/users", admin, json={"name": f"Shop {n}", "email": f"shop{n}@x.example"})
            account = user and self.call("POST", "/accounts", sync, json={
                "userId": user["id"], "accountTypeId": CONFIG["accountType"], "credentials": CONFIG["credentials"]})
            if account:
                shops.append((user["id"], account["id"]))
        self.made.add("account-types-hardcoded")
        user_id, first = shops[0]
        self.polled = {f"{PREFIX}/accounts/{first}", f"{PREFIX}/accounts/{first}/transactions"}
        for minute in range(5, 5 * 60 + 1, 5):
            self.run.sleep(300)
            self.call("GET", f"/accounts/{first}", sync, params={"userId": user_id})
            if minute % 10 == 0:
                self.call("GET", f"/accounts/{first}/transactions", sync, params={"userId": user_id})
            if minute % 30 == 0:
                widget = self.call("POST", "/partners/self/tokens", admin, json={
                    "name": "dashboard", "expiresIn": 3600, "scope": "user:read"})
                if widget:
                    self.call("GET", "/users", widget["accessToken"])
            if minute == 60:
                self.export(sync, shops)
            if minute == 150:                                           # the redeploy
                self.receiver.close()
                self.run.receivers.remove(self.receiver)
        self.made |= {"expired-partner-token", "token-per-request", "polling-instead-of-webhook",
                      "pagination-ignored", "retry-after-ignored", "webhook-receiver-unreachable"}
        return len(shops)

    def export(self, token, shops):
        """Everything of every shop, as fast as it goes; a refused request is skipped, the next one sent."""
        user_id, account_id = shops[0]
        page = self.call("GET", f"/accounts/{account_id}/transactions", token, params={"userId": user_id}) or {}
        for transaction in page.get("transactions", []):
            self.call("GET", f"/accounts/{account_id}/transactions/{transaction['id']}", token,
                      params={"userId": user_id})
        for user_id, account_id in shops:
            self.call("GET", f"/accounts/{account_id}", token, params={"userId": user_id})
            self.call("GET", f"/accounts/{account_id}/transactions", token, params={"userId": user_id,
                                                                                  "pageSize": 1000})
            self.call("GET", "/dataimports", token, params={"accountId": account_id})
            self.call("GET", f"/accounts/{account_id}/reports", token, params={"userId": user_id})
