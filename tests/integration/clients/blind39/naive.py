"""A naive partner program (blind case 39): a marketplace plugin that runs one tenant ("Nord Marketplace") as a
child partner with two merchants, imports transactions when its webhook says so, and keeps an audit trail and a
ledger of notifications. Its token hygiene at start-up is right (a long-lived admin token, the initial token
revoked with it), it reads the account-type catalogue once and builds the form from accountFields, and it reads
every page. Its mistakes, numbered as in MANIFEST.md (N8 and N9 show on the `duplicate` run, the rest on every
run):

N1  a one-hour "migration" token (no id: lifetime not over one hour) "revoked" by its missing id;
N2  a token asked for with comma-separated scopes;
N3  a child partner's token revoked through the own-token path;
N4  a webhook subscribed to a misspelt event kind;
N5  a webhook given a secret of its own that is too short;
N6  PUT /webhooks/{id} sent with one field to pause a webhook (PUT is the whole subscription);
N7  a test notification (isTest) acted upon: the sample account's transactions are read;
N8  notifications not deduplicated, and a write sent per delivery (UpdateAccount per AccountCreated);
N9  the audit receiver answers 409 to a delivery whose webhook-id it has seen;
N10 the ledger receiver checks webhook-timestamp against the machine's clock, not the world clock;
N11 TriggerAccountRefresh with a Unix timestamp as startDate;
N12 GetReports read after every import for an account type without PSP reports;
N13 an account's transactions read after the plugin deleted that account;
N14 an OAuth2 account "reconnected" with its old authReference, without CreateAccountOauthRedirectUrl;
N15 CreateAccount sent with an authReference whose authorization ended in OtherError;
N16 UpdatePartner with redirectUrls as one string;
N17 TriggerAccountRefresh sent right after CreateAccount, while the first import runs;
N18 TriggerAccountRefresh with a startDate in the future ("tomorrow night").
"""

import re
import threading
from datetime import datetime, timedelta, timezone

import requests

from ptas_sandbox.webhooks import InvalidSignature, verify

PREFIX = "/partner/v2"
RETURN_URL = "https://nord-plugin.example/ptas/return"


class Plugin:
    def __init__(self, run):
        self.run, self.base = run, run.base + PREFIX
        self.lock = threading.Lock()
        self.secrets = {}
        self.queue, self.audit_seen, self.ledger = [], set(), []
        self.importer = run.receiver(self.on_importer)
        self.auditor = run.receiver(self.on_audit)
        self.ledger_hook = run.receiver(self.on_ledger)
        self.made = []

    # --- receivers ------------------------------------------------------------------------------------------
    def on_importer(self, headers, body):
        try:
            event = verify(self.secrets.get("importer", ""), headers, body, tolerance_seconds=None)
        except InvalidSignature:
            return 400
        with self.lock:
            self.queue.append(event)                        # N8: every delivery, repeats included
        return 200

    def on_audit(self, headers, body):
        try:
            verify(self.secrets.get("audit", ""), headers, body, tolerance_seconds=None)
        except InvalidSignature:
            return 400
        with self.lock:
            if headers.get("webhook-id") in self.audit_seen:
                return 409                                  # N9: "already recorded"
            self.audit_seen.add(headers.get("webhook-id"))
        return 204

    def on_ledger(self, headers, body):
        try:
            event = verify(self.secrets.get("ledger", ""), headers, body)   # N10: the machine's clock, 300 s
        except InvalidSignature:
            return 401
        with self.lock:
            self.ledger.append(event)
        return 204

    # --- http -------------------------------------------------------------------------------------------------
    def call(self, method, path, token, **kw):
        try:
            return requests.request(method, self.base + path, headers={"Authorization": f"Bearer {token}"},
                                    timeout=30, **kw)
        except requests.RequestException:
            return None

    def body(self, response):
        try:
            return response.json() if response is not None and response.content else {}
        except ValueError:
            return {}

    # --- the job ----------------------------------------------------------------------------------------------
    def main(self, initial):
        admin = self.body(self.call("POST", "/partners/self/tokens", initial, json={
            "name": "plugin-admin", "expiresIn": 365 * 86400,
            "scope": "partner:all user:all account:all transaction:read"}))["accessToken"]
        for token in self.body(self.call("GET", "/partners/self/tokens", admin)).get("tokens", []):
            if token["name"] == "initial token":
                self.call("DELETE", f"/partners/self/tokens/{token['id']}", admin)

        # N2: scopes written as a list the way another API wants them
        self.call("POST", "/partners/self/tokens", admin, json={
            "name": "reporting", "expiresIn": 30 * 86400, "scope": "user:read,account:read"})
        self.made.append("N2")
        reporting = self.body(self.call("POST", "/partners/self/tokens", admin, json={
            "name": "reporting", "expiresIn": 30 * 86400, "scope": "user:read account:read"})).get("accessToken")
        self.call("GET", "/users", reporting)

        # N1: an hour is enough for the migration; "revoke it when done"
        migration = self.body(self.call("POST", "/partners/self/tokens", admin, json={
            "name": "migration", "expiresIn": 3600, "scope": "partner:read"}))
        self.call("GET", "/partners/self", migration.get("accessToken"))
        self.call("DELETE", f"/partners/self/tokens/{migration.get('id')}", admin)
        self.made.append("N1")

        # N16: the return address as one string
        self.call("PUT", "/partners/self", admin, json={"redirectUrls": RETURN_URL})
        self.call("PUT", "/partners/self", admin, json={"redirectUrls": [RETURN_URL]})
        self.made.append("N16")

        # the tenant
        tenant = self.body(self.call("POST", "/partners", admin, json={
            "name": "Nord Marketplace", "email": "ops@nord-marketplace.example", "redirectUrls": [RETURN_URL]}))
        child = self.body(self.call("POST", f"/partners/{tenant['id']}/tokens", admin, json={
            "name": "nord-backend", "expiresIn": 180 * 86400,
            "scope": "partner:read partner:update user:all account:all transaction:read"}))["accessToken"]
        importer = self.body(self.call("POST", f"/partners/{tenant['id']}/tokens", admin, json={
            "name": "nord-import", "expiresIn": 86400, "scope": "user:read"}))
        self.call("GET", "/users", importer.get("accessToken"))
        self.call("DELETE", f"/partners/self/tokens/{importer.get('id')}", admin)     # N3
        self.made.append("N3")

        # webhooks of the tenant
        self.call("POST", "/webhooks", child, json={"callbackUrl": self.importer.url,
                                                    "events": ["TransactionImported", "AccountCreated"]})   # N4
        self.call("POST", "/webhooks", child, json={"callbackUrl": self.importer.url,
                                                    "events": ["TransactionsImported", "AccountCreated"],
                                                    "secret": "nord-secret"})                                # N5
        self.made += ["N4", "N5"]
        hook = self.body(self.call("POST", "/webhooks", child, json={
            "callbackUrl": self.importer.url, "events": ["TransactionsImported", "AccountCreated"]}))
        self.secrets["importer"] = hook["secret"]
        audit = self.body(self.call("POST", "/webhooks", child, json={
            "name": "audit", "callbackUrl": self.auditor.url,
            "events": ["AccountCreated", "AccountUpdated", "AccountDeleted"]}))
        self.secrets["audit"] = audit["secret"]
        ledger = self.body(self.call("POST", "/webhooks", child, json={
            "name": "ledger", "callbackUrl": self.ledger_hook.url, "events": ["TransactionsImported"]}))
        self.secrets["ledger"] = ledger["secret"]
        self.made += ["N9", "N10"]

        # the first merchant, on a provider with a plain form
        bakery = self.body(self.call("POST", "/users", child, json={"name": "Nord Bakery",
                                                                     "email": "shop@nord-bakery.example"}))
        bakery_token = bakery["token"]["accessToken"]
        types = self.body(self.call("GET", "/accounttypes", bakery_token))["accountTypes"]
        plain = next(t for t in types if t.get("state") == "Operational" and all(
            f["Type"] in ("Text", "Secret") for f in t["accountFields"] if f.get("isRequired")))
        oauth = next(t for t in types if t.get("state") == "Operational" and any(
            f["Type"] == "Auth" for f in t["accountFields"]))
        form = self.body(self.call("GET", f"/accounttypes/{plain['id']}", bakery_token))
        values = {"Text": "nordbakery", "Secret": "Bakery-2026"}
        account = self.body(self.call("POST", "/accounts", bakery_token, json={
            "accountTypeId": plain["id"], "credentials": {
                f["name"]: values[f["Type"]] for f in form["accountFields"]
                if f.get("isRequired") and not f.get("isDeprecated")}}))
        # N17: "make sure the data is fresh" right away
        self.call("POST", f"/accounts/{account['id']}/refresh", bakery_token, json={"startDate": account["createdAt"]})
        self.made.append("N17")
        # N7: the pipeline check fires a test event; its sample data is imported like real data
        self.call("POST", "/testevents/transactionsimported", child)
        self.made.append("N7")

        self.run.sleep(600)
        self.process(child, {account["id"]: bakery_token})
        self.made += ["N8", "N12"]

        # N11 and N18: "re-import the last week", "and again tomorrow night"
        week_ago = int((datetime.now(timezone.utc) - timedelta(days=7)).timestamp())
        self.call("POST", f"/accounts/{account['id']}/refresh", bakery_token, json={"startDate": week_ago})
        tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).replace(hour=2, minute=0, second=0,
                                                                           microsecond=0)
        self.call("POST", f"/accounts/{account['id']}/refresh", bakery_token,
                  json={"startDate": tomorrow.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")})
        self.made += ["N11", "N18"]

        # the second merchant, on an OAuth2 provider
        kiosk = self.body(self.call("POST", "/users", child, json={"name": "Nord Kiosk",
                                                                    "email": "owner@nord-kiosk.example"}))
        kiosk_token = kiosk["token"]["accessToken"]
        first = self.authorize(kiosk_token, oauth["id"], "deny")          # the merchant clicked "deny"
        self.call("POST", "/accounts", kiosk_token, json={"accountTypeId": oauth["id"], "authReference": first})
        self.made.append("N15")
        second = self.authorize(kiosk_token, oauth["id"], "approve")
        connected = self.body(self.call("POST", "/accounts", kiosk_token, json={
            "accountTypeId": oauth["id"], "authReference": second}))
        self.run.sleep(600)
        self.process(child, {account["id"]: bakery_token, connected["id"]: kiosk_token})
        # N14: "reconnect" with the reference it stored at connection time
        self.call("PUT", f"/accounts/{connected['id']}", kiosk_token, json={"authReference": second})
        self.made.append("N14")

        # the bakery leaves; the nightly export still has its account in its list (N13)
        self.call("DELETE", f"/accounts/{account['id']}", bakery_token)
        self.run.sleep(60)
        self.call("GET", f"/accounts/{account['id']}/transactions", bakery_token)
        self.made.append("N13")

        # maintenance: the audit trail is paused with a one-field PUT (N6)
        self.call("PUT", f"/webhooks/{audit['id']}", child, json={"isActive": False})
        self.made.append("N6")
        self.run.sleep(0)
        main.made = self.made
        return True

    def authorize(self, user_token, type_id, decision):
        start = self.body(self.call("POST", "/oauth", user_token, json={"accountTypeId": type_id,
                                                                        "redirectUrl": RETURN_URL}))
        browser = requests.Session()
        page = browser.get(start["redirectUrl"], timeout=30).text
        csrf = re.search(r'name="csrfToken" value="([^"]+)"', page).group(1)
        browser.post(start["redirectUrl"], data={"decision": decision, "csrfToken": csrf}, allow_redirects=False,
                     timeout=30)
        return start["authReference"]                   # the status of the return step is not looked at

    def process(self, child, tokens):
        with self.lock:
            events, self.queue = self.queue, []
        imported = set()
        for event in events:
            data = event.get("data") or {}
            account_id = (data.get("account") or {}).get("id")
            if event["eventType"] == "AccountCreated" and account_id in tokens:
                # N8: one label per delivery (no webhook-id check)
                self.call("PUT", f"/accounts/{account_id}", tokens[account_id], json={"name": "Nord shop"})
            elif event["eventType"] == "TransactionsImported":
                import_id = (data.get("dataImport") or {}).get("id")
                if import_id in imported:
                    continue
                imported.add(import_id)
                if account_id not in tokens:            # N7: the test event's sample account
                    self.call("GET", f"/accounts/{account_id}/transactions", child,
                              params={"userId": data.get("userId")})
                    continue
                reference = None
                while True:
                    page = self.body(self.call("GET", f"/accounts/{account_id}/transactions", tokens[account_id],
                                               params={"pageReference": reference} if reference else None))
                    reference = page.get("nextPageReference")
                    if not reference:
                        break
                self.call("GET", f"/accounts/{account_id}/reports", tokens[account_id])   # N12


def main(run):
    return Plugin(run).main(run.token)
