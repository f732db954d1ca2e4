"""The traffic the rules read, gathered from the stores of the areas that keep it, and the history of tokens
in it (which call handed a token over, when the client held it)."""

import json
from dataclasses import dataclass

from ....partners import models as partners
from ....timestamps import parse
from ...faults import models as faults
from ...journal import models as journal
from .base import SLOW_MS, Entry

TOKEN_MAKERS = ("CreateOwnPartnerToken", "CreatePartnerToken", "CreateUserToken", "CreateOwnUserToken")
REVOKERS = ("RevokePartnerOwnToken", "RevokePartnerToken")
USER_TOKEN_MAKERS = ("CreateUserToken", "CreateOwnUserToken", "CreateUser")


@dataclass
class Traffic:
    api_calls: list             # judged: the software under test's calls in the window
    all_calls: list             # history: every call the journal keeps
    observations: dict
    operations: dict
    deprecated: set
    tokens: dict
    initial_token: dict | None
    hooks: list
    events: list
    deliveries: list
    injected_deliveries: dict
    slow_ms: float
    made: dict | None = None        # journal id of a token-making call -> the token it handed over
    left_out: dict | None = None    # calls of the window not judged, by why (control, worldKey, harness, tools)

    def __post_init__(self):
        if self.made is None:
            self.made = tokens_made(self.all_calls, self.tokens)
        self.handed, self.first_use, self.revocations = {}, {}, {}     # token id -> journal id
        self.uses = {}                                                  # token id -> calls made with it
        for seq, token_id in sorted(self.made.items(), reverse=True):
            self.handed[token_id] = seq
        for call in reversed(self.all_calls):
            if call.token_id:
                self.first_use[call.token_id] = call.seq
                self.uses[call.token_id] = self.uses.get(call.token_id, 0) + 1
            if call.operationId in REVOKERS and call.ok():
                self.revocations[call.named_id] = call.seq

    def revoked_seq(self, token):
        """The journal id of the call that revoked `token` (or the end of time when the journal lacks it)."""
        return self.revocations.get(token["id"], 2**62)


def gather(store, world, operations, since=None, slow_ms=SLOW_MS, after=None):
    """Everything the rules read, from the stores of the areas that keep it (read only)."""
    tokens = {r["id"]: dict(r) for r in store.all("SELECT * FROM tokens WHERE world = ?", (world,))}
    calls = []
    for e in journal.entries(store, world, order="asc", limit=None, internal=True):
        token = tokens.get((e.get("token") or {}).get("id"))
        calls.append(Entry(e, parse(e["at"]), token["partner_id"] if token else None))
    window = [c for c in calls if (since is None or c.at >= since) and (after is None or c.seq > after)]
    start = since or 0
    if after is not None:
        start = max(start, min((c.at for c in window), default=2**62))
    observations = {}
    for row in store.all("SELECT * FROM report_observations WHERE world = ? AND at >= ? ORDER BY seq",
                         (world, start)):
        observations.setdefault(row["rule"], []).append(row)
    root = partners.root_of(store, world)
    root_tokens = sorted((t for t in tokens.values() if root and t["partner_id"] == root
                          and t["kind"] == "partner"), key=lambda t: (t["created_at"], t["id"]))
    initial = next((t for t in root_tokens if t["name"] == "initial token"), root_tokens[0] if root_tokens else None)
    hooks = [dict(h) for h in store.all("SELECT * FROM webhooks WHERE world = ?", (world,))]
    events = [event_of(e) for e in store.all(
        "SELECT kind, created_at, partner_id, data FROM events WHERE world = ? AND test = 0", (world,))]
    deliveries = [dict(r) for r in store.all("SELECT * FROM webhook_deliveries WHERE world = ? AND "
                                             "(attempted_at IS NULL OR attempted_at >= ?) ORDER BY seq",
                                             (world, start))]
    deprecated = {op_id for op_id, op in operations.items() if op.deprecated}
    traffic = Traffic([c for c in window if c.judged], calls, observations, operations, deprecated, tokens,
                      initial, hooks, events, deliveries, faults.injected_deliveries(store, world), slow_ms)
    traffic.left_out = {"control": sum(c.control for c in window),
                        "worldKey": sum(c.token_kind == "world" and not c.control for c in window),
                        "harness": sum(bool(c.entry["marks"].get("harness")) for c in window),
                        "tools": sum(bool(c.entry["marks"].get("tool")) and not c.control and c.token_kind != "world"
                                     and not c.entry["marks"].get("harness") for c in window)}
    return traffic


def event_of(row):
    """An event as the rules read it: its kind, when, and what it changed (the partner, the account, its user
    and account type; None where the kind has no account)."""
    data = json.loads(row["data"])
    account = data.get("account") or {}
    return {"kind": row["kind"], "created_at": row["created_at"], "partner": row["partner_id"],
            "account": account.get("id"), "user": data.get("userId") or account.get("userId"),
            "accountType": account.get("accountTypeId")}


def tokens_made(calls, tokens):
    """Journal id of each successful token-making call -> the token it handed over. The answer names a token
    of over an hour by id; a shorter one (no public id) is the token its caller's token made at that instant."""
    made, taken = {}, set()
    for call in calls:
        if call.operationId not in TOKEN_MAKERS + ("CreateUser",) or not call.ok():
            continue
        answer = call.answer()
        if call.operationId == "CreateUser":
            answer = answer.get("token") or {}
        if not answer:                  # a garbled or cut answer handed no token over
            continue
        kind = "user" if call.operationId in USER_TOKEN_MAKERS else "partner"
        # Tokens made at one world instant by one token differ by their user and their name (a user's first
        # token and a new one for it made in the same frozen instant are told apart so).
        user = user_of(call, answer) if kind == "user" else None
        found = tokens.get(answer["id"]) if answer.get("id") else next(
            (t for t in sorted(tokens.values(), key=lambda t: t["id"]) if t["id"] not in taken
             and t["kind"] == kind and t["created_at"] == created_at(answer, call) and t["name"] != "initial token"
             and t["created_by"] in (call.token_id, None) and t["expires_in"] == answer.get("expiresIn")
             and (user is None or t["user_id"] == user) and t["name"] == answer.get("name", t["name"])), None)
        if found is not None:
            made[call.seq] = found["id"]
            taken.add(found["id"])
    return made


def user_of(call, answer):
    """The user a user-token-making call made a token for, when the call names it: CreateUser's answer, the
    path of CreateUserToken; None when the caller is the user itself (CreateOwnUserToken)."""
    if call.operationId == "CreateUser":
        user = call.answer().get("id")
        return user if isinstance(user, str) else None
    parts = call.path.rstrip("/").split("/")
    return parts[-2] if call.operationId == "CreateUserToken" and len(parts) >= 3 else None


def created_at(answer, call):
    """When the answer says the token was made (a latency fault moves the world clock during the call)."""
    try:
        return parse(answer["createdAt"])
    except (KeyError, TypeError, ValueError):
        return call.at


def delivered_seq(data, token):
    """The journal id from which the client held the token: the answer that handed it over, or its first use
    (a token it used it held). None: never delivered (a 500 after it was made, a dropped answer)."""
    seqs = [seq for seq in (data.handed.get(token["id"]), data.first_use.get(token["id"])) if seq is not None]
    return min(seqs) if seqs else (0 if token["name"] == "initial token" else None)


def live_at(data, token, call):
    """Whether the client held `token`, valid, when it made `call` (history: delivery, revocation, expiry)."""
    held = delivered_seq(data, token)
    if held is None or held >= call.seq:
        return False
    revoked = token["revoked_at"]
    if revoked is not None and (revoked < call.at or (revoked == call.at and data.revoked_seq(token) < call.seq)):
        return False
    return call.at < token["expires_at"]


def token_status(data, call):
    """Why a 401 came: 'expired', 'revoked' or None (another reason), from the token as it was at the call."""
    token = data.tokens.get(call.token_id)
    if call.status != 401 or token is None:
        return None
    if token["revoked_at"] is not None and token["revoked_at"] <= call.at:
        return "revoked"
    if call.at >= token["expires_at"]:
        return "expired"
    return None
