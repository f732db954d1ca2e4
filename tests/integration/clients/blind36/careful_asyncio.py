"""A careful partner integration on one asyncio event loop (httpx.AsyncClient, installed into the venv), with
several requests outstanding at once (asyncio.gather, at most 5 in flight through a semaphore).

Called as `main(base_url, partner_token, sleep)` like careful_threaded.py (sleep is a blocking function; the loop
runs it in a worker thread so the loop itself never blocks), or `python careful_asyncio.py BASE TOKEN`.

Design differences from careful_threaded.py: one loop, no worker threads for requests; the partner token is
rotated by listing tokens (the initial token is the valid one that is not ours) rather than from the JWT;
user tokens are asked for with a one-hour lifetime and renewed proactively in the last quarter of their life
(spec §1 capability 2: "when the previous one is expired or about to expire"), not on a 401; the webhook
subscribes to TransactionsImported only; after the refresh only the new transactions are read (createdAt search
from the newest seen, every page) and the account statistics (GetAccount) are read once per notification.
Failure handling: 429/503 close one gate for every request until Retry-After passed; other 5xx, drops,
truncated or malformed bodies retried with a growing wait; unknown outcomes of creates looked up first;
a 4xx other than 429 is never repeated unchanged.
"""

import asyncio
import datetime
import json
import sys
import time

import httpx

from .common import PREFIX, Inbox, Receiver, retry_after

ATTEMPTS = 10
NAME = "shop-sync-async"
USER_TOKEN_LIFE = 3600


class Refused(Exception):
    def __init__(self, status, text):
        super().__init__(f"{status} {text[:200]}")
        self.status = status


def parse_time(value):
    value = value.rstrip("Z")
    if "." in value:
        head, frac = value.split(".")
        value = f"{head}.{frac[:6]}"
    return datetime.datetime.fromisoformat(value).replace(tzinfo=datetime.timezone.utc)


class Client:
    def __init__(self, base, token, sleep):
        self.api = base.rstrip("/") + PREFIX
        self.blocking_sleep = sleep
        self.initial = token
        self.token = None
        self.inbox = Inbox()
        self.receiver = Receiver(self.inbox)
        self.gate = asyncio.Lock()
        self.slots = asyncio.Semaphore(5)
        self.http = httpx.AsyncClient(timeout=30)
        self.user_tokens = {}            # user id -> (token, expiresAt datetime)
        self.renewing = {}

    async def sleep(self, seconds):
        await asyncio.to_thread(self.blocking_sleep, seconds)
        if hasattr(self, "clock"):
            self.clock += datetime.timedelta(seconds=seconds)

    async def once(self, method, path, token, **kw):
        async with self.gate:
            pass
        async with self.slots:
            try:
                r = await self.http.request(method, self.api + path, headers={"Authorization": f"Bearer {token}"},
                                            **kw)
            except httpx.HTTPError:
                return None, {}, None
        body = None
        if r.content:
            try:
                body = json.loads(r.content)
            except ValueError:
                body = ValueError
        return r.status_code, r.headers, body

    async def wait(self, status, headers, default):
        seconds = retry_after(status, headers, default)
        if status in (429, 503):
            async with self.gate:
                await self.sleep(seconds)
        else:
            await self.sleep(seconds)

    async def call(self, method, path, token, ok_missing=False, **kw):
        backoff = 1
        for _ in range(ATTEMPTS):
            status, headers, body = await self.once(method, path, token, **kw)
            if status is not None and 200 <= status < 300 and (body is not ValueError or method == "DELETE"):
                return body
            if status in (404, 409) and ok_missing:
                return None
            if status is not None and 400 <= status < 500 and status != 429:
                raise Refused(status, str(body))
            await self.wait(status, headers, backoff)
            backoff = min(backoff * 2, 30)
        raise RuntimeError(f"{method} {path} kept failing")

    async def create(self, path, token, payload, find, undo=None):
        backoff = 1
        for _ in range(ATTEMPTS):
            status, headers, body = await self.once("POST", path, token, json=payload)
            if status in (429, 503):
                await self.wait(status, headers, backoff)
                backoff = min(backoff * 2, 30)
                continue
            if status is not None and 400 <= status < 500:
                raise Refused(status, str(body))
            if status is not None and 200 <= status < 300 and body is not ValueError:
                return body
            found = await find()
            if found is not None and undo is None:
                return found
            if found is not None:
                await undo(found)
            await self.wait(status, headers, backoff)
            backoff = min(backoff * 2, 30)
        raise RuntimeError(f"POST {path} kept failing")

    # tokens ---------------------------------------------------------------------------------------------
    async def rotate(self):
        async def mine():
            found = [t for t in (await self.call("GET", "/partners/self/tokens", self.initial))["tokens"]
                     if t.get("name") == NAME and t.get("isValid")]
            return found or None

        async def undo(tokens):
            for t in tokens:
                await self.call("DELETE", f"/partners/self/tokens/{t['id']}", self.initial, ok_missing=True)

        made = await self.create("/partners/self/tokens", self.initial,
                                 {"name": NAME, "expiresIn": 31536000, "scope": "partner:all user:all"},
                                 find=mine, undo=undo)
        self.token = made["accessToken"]
        tokens = (await self.call("GET", "/partners/self/tokens", self.token))["tokens"]
        for t in tokens:
            if t.get("isValid") and t.get("id") and t["id"] != made.get("id") and t.get("name") != NAME:
                await self.call("DELETE", f"/partners/self/tokens/{t['id']}", self.token, ok_missing=True)

    async def user_token(self, user_id):
        token, expires = self.user_tokens[user_id]
        left = (expires - self.clock).total_seconds()
        if left < USER_TOKEN_LIFE / 4:                       # last quarter of its life: renew it
            if user_id not in self.renewing:
                self.renewing[user_id] = asyncio.ensure_future(self.renew(user_id))
            try:
                await self.renewing[user_id]
            finally:
                self.renewing.pop(user_id, None)
            token, _ = self.user_tokens[user_id]
        return token

    async def renew(self, user_id):
        made = await self.create(f"/users/{user_id}/tokens", self.token,
                                 {"name": NAME, "expiresIn": USER_TOKEN_LIFE}, find=self.no_lookup)
        self.user_tokens[user_id] = (made["accessToken"], parse_time(made["expiresAt"]))

    async def no_lookup(self):
        return None

    async def as_user(self, user_id, method, path, **kw):
        return await self.call(method, path, await self.user_token(user_id), **kw)


    # the job --------------------------------------------------------------------------------------------
    async def subscribe(self):
        url = self.receiver.url

        async def existing():
            hooks = [h for h in (await self.call("GET", "/webhooks", self.token)).get("webhooks", [])
                     if h.get("callbackUrl") == url]
            return hooks[0] if hooks else None

        hook = await self.create("/webhooks", self.token, {"name": NAME, "callbackUrl": url,
                                 "events": ["TransactionsImported"]}, find=existing)
        self.webhook = hook["id"]
        self.inbox.secret = hook["secret"]
        self.clock = parse_time(hook.get("createdAt") or datetime.datetime.now(datetime.timezone.utc)
                                .strftime("%Y-%m-%dT%H:%M:%S.0000000Z"))

    async def onboard(self, name, email):
        async def existing():
            users = (await self.call("GET", "/users", self.token, params={"email": email}))["users"]
            users = [u for u in users if u.get("email") == email]
            return users[0] if users else None

        user = await self.create("/users", self.token, {"name": name, "email": email}, find=existing)
        token = user.get("token") or {}
        if token.get("accessToken"):
            self.user_tokens[user["id"]] = (token["accessToken"], parse_time(token["expiresAt"]))
        else:
            self.user_tokens[user["id"]] = ("", self.clock)        # renewed at first use
        return user["id"]

    async def connect(self, user_id, kind, merchant):
        async def existing():
            found = [a for a in (await self.as_user(user_id, "GET", "/accounts"))["accounts"]
                     if a.get("accountTypeId") == kind["id"]]
            return found[0] if found else None

        values = {"Text": merchant, "Secret": f"secret-{merchant}"}
        credentials = {f["name"]: values.get(f.get("Type"), merchant) for f in kind["accountFields"]
                       if f.get("isRequired") and not f.get("isDeprecated")}
        account = await self.create("/accounts", await self.user_token(user_id),
                                    {"accountTypeId": kind["id"], "name": merchant, "credentials": credentials},
                                    find=existing)
        return account["id"]

    async def await_imports(self, accounts, count, rounds=12):
        for _ in range(rounds):
            if all(self.inbox.imports_of(a) >= count for a in accounts):
                return
            await self.sleep(600)
        raise RuntimeError("no TransactionsImported notification")

    async def read(self, user_id, account_id, since=None):
        rows, ref = [], None
        while True:
            params = {"pageSize": 200}
            if ref:
                params["pageReference"] = ref
            elif since:
                params["createdAt"] = since
            page = await self.as_user(user_id, "GET", f"/accounts/{account_id}/transactions", params=params)
            rows += page.get("transactions", [])
            ref = page.get("nextPageReference")
            if not ref:
                return rows

    async def refresh(self, user_id, account_id, start):
        try:
            await self.as_user(user_id, "POST", f"/accounts/{account_id}/refresh", json={"startDate": start})
        except Refused as r:
            if r.status != 409:         # 409: an import is running: our earlier attempt (answer lost) took
                raise

    async def run(self):
        try:
            await self.rotate()
            await self.subscribe()
            merchants = ["delta", "echo", "foxtrot", "golf"]
            users = await asyncio.gather(*(self.onboard(f"Store {m}", f"{m}@stores.example") for m in merchants))
            types = (await self.call("GET", "/accounttypes", self.token))["accountTypes"]
            kind = next(t for t in types if not t.get("hasPspReports") and not any(
                f.get("Type") in ("Auth", "File") for f in t["accountFields"] if f.get("isRequired")))
            accounts = await asyncio.gather(*(self.connect(u, kind, m) for u, m in zip(users, merchants)))
            pairs = list(zip(users, accounts))
            await self.await_imports(accounts, 1)
            first = await asyncio.gather(*(self.read(u, a) for u, a in pairs))
            newest = [max((t.get("createdAt") for t in rows if t.get("createdAt")), default=None) for rows in first]
            start = (self.clock - datetime.timedelta(days=14)).strftime("%Y-%m-%dT%H:%M:%SZ")
            await asyncio.gather(*(self.refresh(u, a, start) for u, a in pairs))
            await self.await_imports(accounts, 2)
            stats = await asyncio.gather(*(self.as_user(u, "GET", f"/accounts/{a}") for u, a in pairs))
            later = await asyncio.gather(*(self.read(u, a, since=n) for (u, a), n in zip(pairs, newest)))
            await asyncio.gather(*(self.as_user(u, "DELETE", f"/accounts/{a}", ok_missing=True) for u, a in pairs))
            await asyncio.gather(*(self.call("DELETE", f"/users/{u}", self.token, ok_missing=True) for u in users))
            await self.call("DELETE", f"/webhooks/{self.webhook}", self.token, ok_missing=True)
            return {"first": [len(r) for r in first], "new": [len(r) for r in later],
                    "count": [(s or {}).get("statistics", {}).get("count") for s in stats]}
        finally:
            await self.http.aclose()
            self.receiver.close()


def main(base, token, sleep=time.sleep):
    return asyncio.run(Client(base, token, sleep).run())


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
