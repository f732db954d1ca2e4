"""A partner developer's first hour with the sandbox, over plain HTTP:
.venv/bin/python examples/partner_walkthrough.py URL

World -> long-lived token -> user -> account from the type's accountFields -> time passes -> transaction pages
-> OAuth2 account -> webhook on the built-in echo with a verified signature. Prints each step.
"""

import re
import sys
from urllib.parse import parse_qs, urlparse

try:
    import requests

    from ptas_sandbox.webhooks import verify
except ModuleNotFoundError as missing:      # a Python without the project: say which one has it
    sys.exit(f"{missing.name} is not installed for {sys.executable}: run this with the project's "
             ".venv/bin/python (`make serve` installs it there)")


class Sandbox:
    def __init__(self, base_url):
        self.base = base_url.rstrip("/")
        self.token = None

    def call(self, method, path, token=None, expect=(200, 201, 202, 204), **kwargs):
        url = self.base + (path if path.startswith("/_sandbox") else "/partner/v2" + path)
        response = requests.request(method, url, headers={"Authorization": f"Bearer {token or self.token}"},
                                    timeout=30, **kwargs)
        if response.status_code not in expect:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json() if response.content and "json" in response.headers["Content-Type"] else response


def credentials_for(account_type):
    """Build the form from accountFields (spec §1: never hard-code a type); fill the required ones."""
    values = {"Text": "jane", "Secret": "s3cret", "Number": 1, "File": "aGVsbG8="}
    return {f["name"]: values.get(f["Type"], "x") for f in account_type["accountFields"]
            if f["isRequired"] and f["Type"] != "Auth"}


def walk(base_url, say=print):
    sb = Sandbox(base_url)
    world = requests.post(sb.base + "/_sandbox/partners", json={"name": "Walkthrough", "frozen": True},
                          timeout=30).json()
    sb.token = world["accessToken"]
    say(f"world {world['world']['id']} at {world['world']['clock']['now']}")
    backend = sb.call("POST", "/partners/self/tokens", json={"name": "backend", "expiresIn": 31536000,
                                                           "scope": "partner:all user:all account:all transaction:all"})
    sb.call("DELETE", f"/partners/self/tokens/{world['token']['id']}", token=backend["accessToken"])
    sb.token = backend["accessToken"]
    say("long-lived partner token created, initial token revoked")

    user = sb.call("POST", "/users", json={"name": "Jane's Bakery", "email": "jane@bakery.example"})
    user_token = user["token"]["accessToken"]
    dummy = sb.call("GET", "/accounttypes/dummy", token=user_token)
    account = sb.call("POST", "/accounts", token=user_token,
                      json={"accountTypeId": "dummy", "credentials": credentials_for(dummy)})
    say(f"user {user['id']} has account {account['id']} ({account['statistics']['count']} transactions)")

    sb.call("POST", "/_sandbox/clock", json={"advance": 3600})
    path, seen, query = f"/accounts/{account['id']}/transactions", 0, {"pageSize": 250}
    while True:
        page = sb.call("GET", path, token=user_token, params=query)
        seen += len(page["transactions"])
        if not page["nextPageReference"]:
            break
        query = {"pageSize": 250, "pageReference": page["nextPageReference"]}
    count = sb.call("GET", f"/accounts/{account['id']}", token=user_token)["statistics"]["count"]
    say(f"an hour later: {seen} transactions read in pages of 250 (statistics.count: {count})")

    start = sb.call("POST", "/oauth", token=user_token, json={"accountTypeId": "dummy-auth",
                                                             "redirectUrl": "https://app.example/done"})
    browser = requests.Session()       # the consent page's form carries a token bound to the page's cookie
    consent = browser.get(start["redirectUrl"], timeout=30).text
    token = re.search(r'name="csrfToken" value="([^"]+)"', consent).group(1)
    back = browser.post(start["redirectUrl"], data={"decision": "approve", "csrfToken": token},
                        allow_redirects=False, timeout=30)
    status = parse_qs(urlparse(back.headers["Location"]).query)["status"][0]
    assert status == back.headers["X-Service-AuthStatus"] == "Success"
    oauth_account = sb.call("POST", "/accounts", token=user_token,
                            json={"accountTypeId": "dummy-auth", "authReference": start["authReference"]})
    say(f"OAuth2 consent: {status}; account {oauth_account['id']} created with the authReference")

    bin_url = f"{sb.base}/_sandbox/echo/walkthrough-{world['world']['id']}"
    webhook = sb.call("POST", "/webhooks", json={"callbackUrl": bin_url, "events": ["AccountCreated"]})
    sb.call("POST", "/testevents/accountcreated")
    sb.call("POST", "/_sandbox/webhooks/flush")
    [capture] = sb.call("GET", urlparse(bin_url).path)["captures"]
    event = verify(webhook["secret"], capture["headers"], capture["body"], tolerance_seconds=None)
    say(f"webhook received a signed {event['eventType']} test notification (isTest={event['isTest']})")
    return {"transactions": seen, "count": count, "event": event["eventType"]}


if __name__ == "__main__":
    walk(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080")
