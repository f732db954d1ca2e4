"""Fault rules: which calls or notifications of a world misbehave, how, and how often.

A fault is a match (operationId, method and path pattern, token id; or a webhook and event kind), an effect and
a scope: the next `times` matching calls, or each matching call with a seeded `probability` (the k-th match of
a fault decides alike on every run, so a run replays exactly). Every injection is logged, bounded, per world.
"""

import hashlib
import json
import re
from dataclasses import dataclass

from ...problems import BadRequest, Conflict, not_found
from ...timestamps import SECOND_US, render
from ...worlds import derived_id

SCHEMA = """
CREATE TABLE IF NOT EXISTS faults (
    id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    target TEXT NOT NULL,
    match TEXT NOT NULL,
    effect TEXT NOT NULL,
    times INTEGER,
    probability REAL,
    seed INTEGER NOT NULL,
    matched INTEGER NOT NULL DEFAULT 0,
    injected INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS faults_by_world ON faults (world, target, created_at);
CREATE TABLE IF NOT EXISTS fault_injections (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    world TEXT NOT NULL,
    fault_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    effect TEXT NOT NULL,
    operation_id TEXT,
    method TEXT,
    path TEXT,
    token_id TEXT,
    delivery_id TEXT,
    webhook_id TEXT,
    event_id TEXT
);
CREATE INDEX IF NOT EXISTS fault_injections_by_world ON fault_injections (world, seq);
CREATE INDEX IF NOT EXISTS fault_injections_by_delivery ON fault_injections (delivery_id);
CREATE TABLE IF NOT EXISTS fault_holds (
    delivery_id TEXT PRIMARY KEY,
    world TEXT NOT NULL,
    webhook_id TEXT NOT NULL
);
"""

API_EFFECTS = ("status", "latency", "drop", "truncate", "malformed", "success-then-500")
WEBHOOK_EFFECTS = ("duplicate", "delay", "reorder", "bad-signature")
STATUSES = (429, 500, 502, 503, 504)
MAX_FAULTS = 100                # per world: a fault list is a test's set-up, not a store
INJECTIONS_KEPT = 1000          # per world: the newest injections stay in the log
MAX_WALL_SECONDS = 30           # wall-clock latency holds a server thread: bounded
REORDER_HOLD_SECONDS = 300      # a held notification goes out after the next one, or after this at the latest
DEFAULT_RETRY_AFTER = {429: 60, 503: 30}


@dataclass
class Fault:
    id: str
    target: str            # "api" or "webhook"
    match: dict
    effect: dict
    times: int | None
    probability: float | None
    seed: int
    matched: int
    injected: int
    created_at: int

    @classmethod
    def of(cls, row):
        return cls(row["id"], row["target"], json.loads(row["match"]), json.loads(row["effect"]), row["times"],
                   row["probability"], row["seed"], row["matched"], row["injected"], row["created_at"])

    def record(self):
        body = {"id": self.id, "target": self.target, "match": self.match, "effect": self.effect,
                "matched": self.matched, "injected": self.injected, "createdAt": render(self.created_at)}
        if self.probability is not None:
            body.update(probability=self.probability, seed=self.seed)
        if self.times is not None:
            body.update(times=self.times, remaining=max(self.times - self.injected, 0))
        return body

    @property
    def spent(self):
        return self.times is not None and self.injected >= self.times

    def fires(self, k):
        """Whether the k-th matching call (1-based) is injected: a pure function of seed, fault and k."""
        if self.probability is None:
            return True
        digest = hashlib.sha256(f"fault/{self.seed}/{k}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.probability


def path_pattern(pattern):
    """`/accounts/*/transactions`, `/accounts/{id}/transactions` or `/accounts/**`: a regex of whole paths.

    Wildcards are whole segments and `**` comes once: `[^/]+` then cannot backtrack past a `/`, and one `.*`
    costs a pass per position. Python's `re` holds the interpreter while it backtracks, and `/*a*a*a*a*a*a*a*!`
    (eight wildcards in one segment) would hold every request of every world for minutes."""
    segments = pattern.split("/")
    if sum(s == "**" for s in segments) > 1:
        raise BadRequest(f"The path pattern {pattern!r} has `**` more than once; it stands for the rest of a path.")
    regex = []
    for segment in segments:
        if segment == "**":
            regex.append(".*")
        elif segment == "*" or re.fullmatch(r"\{[^/{}]+\}", segment):
            regex.append("[^/]+")
        elif "*" in segment or "{" in segment:
            raise BadRequest(f"In the path pattern {pattern!r}, `*`, `**` and `{{name}}` stand for whole "
                             f"segments; {segment!r} mixes one with other characters.")
        else:
            regex.append(re.escape(segment))
    return re.compile("/".join(regex))


def matches_call(fault, operation_id, method, path, prefix, token_id):
    m = fault.match
    if m.get("operationId") and m["operationId"] != operation_id:
        return False
    if m.get("method") and m["method"].upper() != method:
        return False
    if m.get("token") and m["token"] != token_id:
        return False
    if m.get("path"):
        try:
            pattern = path_pattern(m["path"])
        except BadRequest:      # a pattern an older version took: it matches nothing rather than stall
            return False
        relative = path[len(prefix):] if prefix and path.startswith(prefix) else path
        if not (pattern.fullmatch(path) or pattern.fullmatch(relative)):
            return False
    return True


def matches_delivery(fault, row):
    m = fault.match
    return (not m.get("webhookId") or m["webhookId"] == row["webhook_id"]) and \
           (not m.get("eventType") or m["eventType"] == row["event_type"])


# --- the control rules -------------------------------------------------------------------------------------

def create(ctx, values):
    """A new fault of the caller's world. The body's shape is checked by the schema; meaning is checked here."""
    effect = dict(values["effect"])
    kind = effect["type"]
    target = "api" if kind in API_EFFECTS else "webhook"
    match = dict(values.get("match") or {})
    api_keys, hook_keys = {"operationId", "method", "path", "token"}, {"webhookId", "eventType"}
    wrong = set(match) & (hook_keys if target == "api" else api_keys)
    if wrong:
        raise BadRequest(f"A {kind} fault matches {'API calls' if target == 'api' else 'notifications'}; "
                         f"{', '.join(sorted(wrong))} cannot select them.")
    if kind == "status" and effect["status"] in DEFAULT_RETRY_AFTER:
        effect.setdefault("retryAfter", DEFAULT_RETRY_AFTER[effect["status"]])
    if kind == "latency":
        effect.setdefault("clock", "world")
        if effect["clock"] == "wall" and effect["seconds"] > MAX_WALL_SECONDS:
            raise BadRequest(f"Wall-clock latency is at most {MAX_WALL_SECONDS} s (it holds a server thread); "
                             "use the world clock for longer waits.")
    if match.get("path"):
        path_pattern(match["path"])         # a 400 now, not at every call
    probability = values.get("probability")
    times = values.get("times", None if probability is not None else 1)
    count = ctx.store.one("SELECT COUNT(*) AS n FROM faults WHERE world = ?", (ctx.world.id,))["n"]
    if count >= MAX_FAULTS:
        raise Conflict(f"A world holds at most {MAX_FAULTS} faults; delete some first.")
    fault_id = ctx.new_id("fault")
    seed = values.get("seed", int(derived_id("fault-seed", ctx.world.seed, fault_id)[:8], 16))
    ctx.store.insert("faults", id=fault_id, world=ctx.world.id, target=target, match=json.dumps(match),
                     effect=json.dumps(effect), times=times, probability=probability, seed=seed,
                     created_at=ctx.now)
    return get(ctx, fault_id)


def get(ctx, fault_id):
    row = ctx.store.one("SELECT * FROM faults WHERE world = ? AND id = ?", (ctx.world.id, fault_id))
    if row is None:
        raise not_found("fault", fault_id)
    return Fault.of(row).record()


def listing(ctx):
    rows = ctx.store.all("SELECT * FROM faults WHERE world = ? ORDER BY created_at, rowid", (ctx.world.id,))
    return [Fault.of(r).record() for r in rows]


def delete(ctx, fault_id):
    get(ctx, fault_id)
    ctx.store.execute("DELETE FROM faults WHERE world = ? AND id = ?", (ctx.world.id, fault_id))


def delete_all(ctx):
    return ctx.store.execute("DELETE FROM faults WHERE world = ?", (ctx.world.id,)).rowcount


def injections(store, world, limit=INJECTIONS_KEPT):
    rows = store.all("SELECT * FROM fault_injections WHERE world = ? ORDER BY seq DESC LIMIT ?", (world, limit))
    return [injection_record(r) for r in reversed(rows)]


def injection_record(row):
    body = {"faultId": row["fault_id"], "at": render(row["at"]), "effect": row["effect"]}
    for key, column in (("operationId", "operation_id"), ("method", "method"), ("path", "path"),
                        ("tokenId", "token_id"), ("deliveryId", "delivery_id"), ("webhookId", "webhook_id"),
                        ("eventId", "event_id")):
        if row[column] is not None:
            body[key] = row[column]
    return body


def injected_deliveries(store, world):
    """Delivery id -> the webhook effects injected into it (the report and the delivery log read these)."""
    out = {}
    for row in store.all("SELECT delivery_id, effect FROM fault_injections WHERE world = ? "
                         "AND delivery_id IS NOT NULL", (world,)):
        out.setdefault(row["delivery_id"], []).append(row["effect"])
    return out


def mark_log(store, world, entries):
    """The delivery log marks the attempts a webhook fault made (`injected`: the effects)."""
    if not entries:
        return
    injected = injected_deliveries(store, world)
    for entry in entries:
        if entry["id"] in injected:
            entry["injected"] = injected[entry["id"]]


def log_injection(store, world, fault, at, **where):
    store.insert("fault_injections", world=world, fault_id=fault.id, at=at, effect=fault.effect["type"], **where)
    store.execute("DELETE FROM fault_injections WHERE world = ? AND seq <= "
                  "(SELECT seq FROM fault_injections WHERE world = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                  (world, world, INJECTIONS_KEPT))


def has_live(store, world, target):
    """Whether the world has a fault of `target` not yet spent (a read only)."""
    return store.one("SELECT 1 FROM faults WHERE world = ? AND target = ? AND (times IS NULL OR injected < times) "
                     "LIMIT 1", (world, target)) is not None


def take(store, world, target, now, accepts, **where):
    """The first live fault of `target` that `accepts` and fires on this match, counted and logged; or None.

    Every matching fault counts the match (its k), so a probability fault replays the same whatever others do.
    Call inside a store transaction.
    """
    chosen = None
    rows = store.all("SELECT * FROM faults WHERE world = ? AND target = ? ORDER BY created_at, rowid",
                     (world, target))
    for fault in map(Fault.of, rows):
        if fault.spent or not accepts(fault):
            continue
        fault.matched += 1
        fires = chosen is None and fault.fires(fault.matched)
        if fires:
            fault.injected += 1
            chosen = fault
        store.update("faults", {"id": fault.id}, matched=fault.matched, injected=fault.injected)
    if chosen is not None:
        log_injection(store, world, chosen, now, **where)
    return chosen


def for_call(store, world, now, operation_id, method, path, prefix, token_id):
    """The fault to inject into this API call, or None."""
    return take(store, world, "api", now,
                lambda f: matches_call(f, operation_id, method, path, prefix, token_id),
                operation_id=operation_id, method=method, path=path, token_id=token_id)


# --- webhook faults, at the outbox ------------------------------------------------------------------------

def after_fan_out(store, row, insert):
    """Called for each attempt-1 row the outbox writes: release held notifications of its subscription (they
    now go out after this one), then apply a webhook fault that matches it. `insert` writes a delivery row."""
    for held in store.all("SELECT delivery_id FROM fault_holds WHERE webhook_id = ?", (row["webhook_id"],)):
        store.execute("UPDATE webhook_deliveries SET due_at = ? WHERE id = ? AND status = 'pending' AND due_at > ?",
                      (row["due_at"] + SECOND_US, held["delivery_id"], row["due_at"] + SECOND_US))
        store.execute("DELETE FROM fault_holds WHERE delivery_id = ?", (held["delivery_id"],))
    if not has_live(store, row["world"], "webhook"):
        return
    fault = take(store, row["world"], "webhook", row["due_at"], lambda f: matches_delivery(f, row),
                 delivery_id=row["id"], webhook_id=row["webhook_id"], event_id=row["event_id"])
    if fault is None:
        return
    kind = fault.effect["type"]
    if kind == "duplicate":
        for n in range(1, fault.effect.get("copies", 1) + 1):
            copy = {**row, "id": derived_id("delivery-copy", row["id"], n)}
            insert(copy)
            log_injection(store, row["world"], fault, row["due_at"], delivery_id=copy["id"],
                          webhook_id=row["webhook_id"], event_id=row["event_id"])
    elif kind == "delay":
        store.execute("UPDATE webhook_deliveries SET due_at = ? WHERE id = ?",
                      (row["due_at"] + fault.effect["seconds"] * SECOND_US, row["id"]))
    elif kind == "reorder":
        hold = fault.effect.get("maxHoldSeconds", REORDER_HOLD_SECONDS)
        store.execute("UPDATE webhook_deliveries SET due_at = ? WHERE id = ?",
                      (row["due_at"] + hold * SECOND_US, row["id"]))
        store.insert("fault_holds", delivery_id=row["id"], world=row["world"], webhook_id=row["webhook_id"])


BAD_SIGNATURE = "v1,c2FuZGJveC1pbmplY3RlZC1iYWQtc2lnbmF0dXJlLi4uLi4uLi4="


def before_signing(store, row, headers):
    """An attempt marked `bad-signature` goes out with a signature no secret produces."""
    marked = store.one("SELECT 1 FROM fault_injections WHERE delivery_id = ? AND effect = 'bad-signature'",
                       (row["id"],))
    if marked:
        headers["webhook-signature"] = BAD_SIGNATURE
    return headers
