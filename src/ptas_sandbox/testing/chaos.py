"""What the `ptas_faults` and `ptas_report` fixtures hand to partner developers: the world's faults, and its
integration report (docs/chaos.md)."""

MATCH_KEYS = {"operation": "operationId", "method": "method", "path": "path", "token": "token",
              "webhook": "webhookId", "event": "eventType"}


def camel(name):
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class Faults:
    """The faults of a partner's world: `add` one, read what was injected, `clear` them all."""

    def __init__(self, partner):
        self.partner = partner

    def add(self, effect, *, times=None, probability=None, seed=None, **fields):
        """A fault: `effect` is its type (status, latency, drop, truncate, malformed, success-then-500, duplicate,
        delay, reorder, bad-signature); operation=, method=, path=, token= (a token id), webhook=, event= choose
        what it matches; other keywords are the effect's fields (status=503, retry_after=30, seconds=5,
        clock="wall", after=True, copies=2, max_hold_seconds=60)."""
        match = {MATCH_KEYS[k]: fields.pop(k) for k in list(fields) if k in MATCH_KEYS}
        body = {"effect": {"type": effect, **{camel(k): v for k, v in fields.items()}}, "match": match}
        for key, value in (("times", times), ("probability", probability), ("seed", seed)):
            if value is not None:
                body[key] = value
        response = self.partner.call("POST", "/_sandbox/faults", json=body)
        if response.status_code != 201:
            raise AssertionError(f"the sandbox refused the fault {body}: {response.text}")
        return response.json()

    def status(self, status, **kw):
        """Matching calls answer `status` (429, 500, 502, 503, 504) with ProblemDetails; 429 and 503 carry
        Retry-After (retry_after=SECONDS)."""
        return self.add("status", status=status, **kw)

    def latency(self, seconds, clock="world", **kw):
        return self.add("latency", seconds=seconds, clock=clock, **kw)

    def drop(self, after=False, **kw):
        return self.add("drop", after=after, **kw)

    def list(self):
        return self.partner.call("GET", "/_sandbox/faults").json()["faults"]

    def injections(self):
        """What was injected, oldest first: faultId, at, effect, operationId or deliveryId."""
        return self.partner.call("GET", "/_sandbox/faults").json()["injections"]

    def clear(self):
        self.partner.call("DELETE", "/_sandbox/faults")


class Report:
    """The integration report of a partner's world, read with the world key (so it stays readable whatever the
    software under test did with its tokens). `from_here_on()` judges only what comes after it."""

    SEVERITIES = ("info", "warning", "error")

    def __init__(self, partner):
        self.partner = partner
        self.after = None

    def from_here_on(self):
        """Judge only the calls and deliveries from now on (the newest journal entry so far is left out)."""
        page = self.partner.call("GET", "/_sandbox/requests", params={"pageSize": 1})
        assert page.status_code == 200, page.text
        newest = page.json()["requests"]
        self.after = newest[0]["id"] if newest else 0
        return self

    def _get(self, **params):
        if self.after is not None:
            params["after"] = self.after
        response = self.partner.call("GET", "/_sandbox/report", params=params)
        if response.status_code != 200:
            raise AssertionError(f"the sandbox did not give the report ({response.status_code}): {response.text}")
        return response

    def json(self):
        return self._get().json()

    def findings(self, at_least="info"):
        floor = self.SEVERITIES.index(at_least)
        return [f for f in self.json()["findings"] if self.SEVERITIES.index(f["severity"]) >= floor]

    def rules(self, at_least="info"):
        return sorted({f["rule"] for f in self.findings(at_least)})

    def text(self):
        return self._get(format="text").text

    def junit(self, fail_on="warning"):
        return self._get(format="junit", failOn=fail_on).text

    def assert_clean(self, at_least="warning"):
        """Fails with the report's text when a finding is at least this severe."""
        if self.findings(at_least):
            raise AssertionError("the integration report has findings:\n" + self.text())
