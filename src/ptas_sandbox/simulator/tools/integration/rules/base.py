"""What every rule of the report shares: the rule table (each family registers its rules beside the check that
judges them), a journal entry as the rules read it, and the shape of a finding.

A finding: {"rule", "severity", "title", "message", "fix", "evidence": [{"at", "operationId", "method", "path",
"status", "requestId" | "deliveryId", "injected"}]}. Severities: error > warning > info.
"""

import json
from dataclasses import dataclass
from urllib.parse import parse_qs

from ....timestamps import SECOND_US, render

SEVERITIES = ("info", "warning", "error")
EVIDENCE_SHOWN = 5              # per finding; `count` says how many there were
# An answer's way to the client and a request's way back, with the scheduling of both ends on a loaded machine:
# a request arriving within this of an answer may have been written before the client read it (another thread's
# request that passed its client's gate before the refusal was read arrived up to ~220 ms late on a busy 2-core
# machine with client and server in one process).
ROUND_TRIP_NS = 500_000_000
SLOW_MS = 1000                  # a receiver slower than this holds the sender up (the sender gives up at 2 s)
HOOK_WRITES = ("CreateWebhook", "UpdateWebhook", "PatchWebhook")
UNROUTED = ("UnknownPath", "MethodNotAllowed")


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    fix: str


RULES = {}          # id -> Rule, in the order the families register them
CHECKS = []         # the checks, each yielding findings of the rules it registered


def judges(*rules):
    """Registers a check and the rules whose findings it yields."""
    def register(check):
        for rule in rules:
            RULES[rule.id] = rule
        CHECKS.append(check)
        return check
    return register


@dataclass
class Entry:
    """A journal entry with its world-clock instant as a number, and whose it is (the partner of its token)."""
    entry: dict
    at: int
    partner: str | None = None

    def __post_init__(self):
        entry = self.entry
        self.seq, self.operationId, self.method, self.path, self.status = (
            entry["id"], entry["operationId"], entry["method"], entry["path"], entry["status"])
        # a profiled sandbox files the partner's words (docs/profiles.md); the rules know the simulator's
        self.operationId = ((entry.get("marks") or {}).get("simulator") or {}).get("operationId", self.operationId)
        self.token_id = (entry.get("token") or {}).get("id")
        # what makes two requests the same: method, path, query and body (as journaled)
        self.key = (self.method, self.path, entry.get("query"),
                    json.dumps(entry["request"].get("body"), sort_keys=True))

    @property
    def control(self):
        return self.operationId.startswith("Sandbox")

    @property
    def token_kind(self):
        return (self.entry.get("token") or {}).get("kind")

    @property
    def named_id(self):
        """The last segment of the path: the id of the record a read, a delete or a revocation names."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def injected(self):
        return self.entry["marks"].get("injected")

    @property
    def answer_faulted(self):
        """A fault changed what the client got: latency only delays it, and cutting a 204's body (none) in half
        leaves it as it was."""
        kind = (self.injected or {}).get("type")
        if kind == "truncate" and self.status == 204:
            return False
        return bool(self.injected) and kind != "latency"

    @property
    def judged(self):
        """The software under test made it: not the control API, the world key or a harness's setup."""
        marks = self.entry["marks"]
        return not self.control and self.token_kind != "world" and not marks.get("harness") and not marks.get("tool")

    @property
    def arrived(self):
        """When the request arrived whole (the HTTP front's stamp) or, in process, when its handling began."""
        return (self.entry.get("monotonic") or (None, None))[0]

    @property
    def answered(self):
        return (self.entry.get("monotonic") or (None, None))[1]

    @property
    def round_trip(self):
        """The grace after an answer within which this call may still have been sent before the answer was read:
        ROUND_TRIP_NS over HTTP (journal mark `arrival`), none in process, where nothing travels."""
        return ROUND_TRIP_NS if self.entry["marks"].get("arrival") else 0

    def sent_while_running(self, other):
        """Whether this call arrived before `other`'s answer was ready: the two were in flight together."""
        return self.arrived is not None and other.answered is not None and self.arrived < other.answered

    def in_flight_at(self, other):
        """Whether this call may have been sent before its client read `other`'s answer, so it could not have
        heeded it: it arrived whole (the HTTP front's stamp) before that answer was ready, or within a round
        trip of it, unless the world clock was moved on in between (a client's sleep on a frozen clock: it had
        read the answer). A request that waited in the server's queue behind the answer is not late."""
        if self.sent_while_running(other):
            return True
        if self.arrived is None or other.answered is None or self.arrived >= other.answered + self.round_trip:
            return False
        world_ns = (self.at - other.at) * (1_000_000_000 // SECOND_US)
        return world_ns <= (self.arrived - (other.arrived or other.answered)) + 1_000_000_000

    def waited(self, since, seconds):
        """Whether this call came `seconds` after `since`'s answer on the world clock or in real time (a
        frozen world clock does not move while a client sleeps)."""
        if self.at - since.at >= seconds * SECOND_US:
            return True
        return self.arrived is not None and since.answered is not None and \
            self.arrived - since.answered >= seconds * 1_000_000_000

    def params(self):
        return parse_qs(self.entry.get("query") or "")

    def body(self):
        return self.entry["request"].get("body")

    def answer(self):
        body = self.entry["response"].get("body")
        return body if isinstance(body, dict) else {}

    def same_request(self, other):
        return self.key == other.key

    def ok(self):
        return self.status is not None and 200 <= self.status < 300

    def evidence(self, **extra):
        return {"at": self.entry["at"], "requestId": self.entry["id"], "operationId": self.entry["operationId"],
                "method": self.entry["method"], "path": self.entry["path"], "status": self.entry["status"],
                "injected": bool(self.injected), **extra}


def finding(rule_id, message, evidence, count=None, **extra):
    rule = RULES[rule_id]
    return {"rule": rule.id, "severity": rule.severity, "title": rule.title, "message": message, "fix": rule.fix,
            "count": len(evidence) if count is None else count, "evidence": evidence[:EVIDENCE_SHOWN], **extra}


def grouped(calls, key):
    found = {}
    for call in calls:
        found.setdefault(key(call), []).append(call)
    return found


def strings(value):
    """The strings of a JSON array as a client sent it: whatever else it holds, or a value that is no array,
    names nothing (the service refused it, and the report must not fail on it)."""
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def listing(names):
    return ", ".join(sorted(str(n) for n in names))


def observation_evidence(row):
    return {"at": render(row["at"]), "operationId": row["operation"], "method": row["method"], "path": row["path"],
            "status": row["status"], "detail": row["detail"]}


def delivery_evidence(row):
    return {"at": render(row["attempted_at"]), "deliveryId": row["id"], "webhookId": row["webhook_id"],
            "eventType": row["event_type"], "attempt": row["attempt"], "status": row["response_status"],
            "error": row["error"], "durationMs": row["duration_ms"]}
