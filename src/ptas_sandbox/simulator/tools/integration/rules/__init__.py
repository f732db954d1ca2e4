"""The integration report's rules, by family: each reads a world's recorded traffic (the request journal, the
delivery log, tokens, subscriptions, observations made at the edge) and returns findings with evidence and a
fix. No Flask.

Only the software under test is judged: control calls (`/_sandbox`), calls with the world key and calls a
harness marked as its own setup (journal mark `harness`) are not, though they are history. Every rule judges a
call against the state at the time of the call (tokens, webhooks, a Retry-After window), as the journal and
the tables' timestamps tell it, never against today's. One finding per rule and cause, with a count.
"""

import json

from ptas_sandbox.jwt_text import JWT

from ....timestamps import render
from . import duplicates, interface, retries, tokens, usage, webhooks  # noqa: F401  (each registers its rules)
from .base import CHECKS, RULES, SEVERITIES, SLOW_MS, Entry, Rule
from .history import Traffic, gather

__all__ = ["RULES", "SEVERITIES", "SLOW_MS", "Entry", "Rule", "Traffic", "gather", "judge", "at_or_above"]


def judge(traffic, now, world, since=None, after=None):
    """The report of one world: findings of every rule, worst first, and what was judged."""
    # A finding quotes what the client sent (a callback URL, a path): a token in it is masked, so the report a CI
    # prints and keeps is no second leak of the secret it may be warning about.
    findings = [json.loads(JWT.sub("<redacted token>", json.dumps(f))) for check in CHECKS for f in check(traffic)]
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    findings.sort(key=lambda f: (order[f["severity"]], f["rule"]))
    return {
        "world": world, "generatedAt": render(now), "since": render(since), "after": after,
        "judged": {"requests": len(traffic.api_calls), "deliveries": len(traffic.deliveries),
                   "observations": sum(map(len, traffic.observations.values())),
                   # calls in the window the software under test did not make (docs/chaos.md, what is judged)
                   "notJudged": traffic.left_out or {}},
        "summary": {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES},
        "rules": [{"id": r.id, "severity": r.severity, "title": r.title} for r in RULES.values()],
        "findings": findings,
    }


def at_or_above(findings, severity):
    floor = SEVERITIES.index(severity)
    return [f for f in findings if SEVERITIES.index(f["severity"]) >= floor]
