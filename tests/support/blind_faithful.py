"""Faithful deployments written blind (issue 38): each makes a choice the spec leaves open ("not shown") the way a real
service might, and stays faithful to everything the spec states. Same forms as broken.py."""

import json
import re
from urllib.parse import parse_qsl, urlencode

from tests.support.blind_deployments import Case, answered, changed, json_of, respond  # noqa: F401


# 1. Fields of the ProblemDetails body: not shown (§7). RFC 9457 with https type URIs, an errorCode, no traceId,
#    and a correlation id; title and status kept as RFC 9457 says.
def _problem_dialect(environ, status, headers, body):
    kind = dict((k.lower(), v) for k, v in headers).get("content-type", "")
    if "problem+json" not in kind:
        return None
    data = json_of(body)
    if not isinstance(data, dict):
        return None
    slug = str(data.get("type", "")).rsplit(":", 1)[-1] or "error"
    data["type"] = f"https://docs.payments.example/problems/{slug}"
    data["errorCode"] = slug.upper().replace("-", "_")
    data["correlationId"] = data.pop("traceId", None)
    data.pop("instance", None)
    return status, headers, json.dumps(data).encode()


problem_details_dialect = Case(
    "problem_details_dialect", "§7: fields of the ProblemDetails body and error codes not shown (other type URIs, "
    "errorCode, correlationId instead of traceId, no instance)", change=_problem_dialect)


# 2. The response when a rate limit is exceeded: not shown (§7, §8). A gateway answering 503 with Retry-After
#    and a ProblemDetails body.
def _rate_limit_503(environ, status, headers, body):
    if status.startswith("429"):
        data = json_of(body) or {}
        data.update(status=503, title="Service Unavailable", detail="Request quota exhausted; retry later.")
        return "503 Service Unavailable", headers, json.dumps(data).encode()


rate_limit_as_503 = Case(
    "rate_limit_as_503", "§7/§8: the response when the rate limit is exceeded not shown (503 + Retry-After, not 429)",
    change=_rate_limit_503)


# 3. Payload shape of notifications: not shown (§6). The kind under `type` as well as eventType, the event's
#    objects under `payload` rather than `data`, a delivery timestamp, and a signature header field.
class _Envelope:
    def __call__(self, app):
        def shape(store, world, body):
            body = dict(body)
            body["payload"] = body.pop("data", None)
            body["type"] = body.get("eventType")
            body["occurredAt"] = body.pop("createdAt", None)
            body["apiVersion"] = "1.3.0"
            return body
        app.extensions["ptas"].hooks.notification.append(shape)


notification_envelope = Case(
    "notification_envelope", "§6: payload shape of notifications not shown (data under `payload`, occurredAt "
    "instead of createdAt, apiVersion, the kind also under `type`)",
    config={"START_SERVICES": True}, apply=_Envelope())


# 4. Page sizes: not shown (§8). GetTransactions pages of 25 by default.
def _small_pages(app):
    def paged(environ, start_response):
        if environ["REQUEST_METHOD"] == "GET" and re.search(r"/transactions$", environ["PATH_INFO"]):
            pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            if not any(k == "pageSize" for k, _ in pairs):
                environ = {**environ, "QUERY_STRING": urlencode(pairs + [("pageSize", "25")])}
        return app(environ, start_response)
    return paged


pages_of_25 = Case(
    "pages_of_25", "§8: page sizes not shown (GetTransactions pages of 25 by default)", wrap=_small_pages)


# 5. Values of the state field of an account type: not shown (§3). Active / Limited / Unavailable / Retired.
STATES = {"Operational": "Active", "Degraded": "Limited", "Outage": "Unavailable", "Discontinued": "Retired"}


def _states(environ, status, headers, body):
    if status.startswith("2") and re.search(r"/accounttypes", environ["PATH_INFO"]):
        data = json_of(body)
        rows = data.get("accountTypes", [data]) if isinstance(data, dict) else data if isinstance(data, list) else []
        for row in rows:
            if isinstance(row, dict) and row.get("state") in STATES:
                row["state"] = STATES[row["state"]]
        return changed(status, headers, data)


account_type_states_renamed = Case(
    "account_type_states_renamed", "§3: values of the account-type state field not shown (Active, Limited, "
    "Unavailable, Retired)", change=_states)


# 6. Revoking the token that makes the call: the spec says it cannot, not how it is refused (the simulator's 409
#    is a choice). A 400 Bad Request with a ProblemDetails body; and a revocation answered 204 No Content where the
#    simulator answers 200 with the record (§4.1: body not shown beyond the token being revoked).
def _revoke_answers(environ, status, headers, body):
    if environ["REQUEST_METHOD"] == "DELETE" and re.search(r"/tokens/[^/]+$", environ["PATH_INFO"]):
        if status.startswith("409"):
            data = json_of(body) or {}
            data.update(status=400, title="Bad Request")
            return "400 Bad Request", headers, json.dumps(data).encode()
        if status.startswith("200"):
            return "204 No Content", [], b""


self_revoke_as_400 = Case(
    "self_revoke_as_400", "§3/§4.1: refusal of a self-revocation and the revoke response body not shown (400 "
    "rather than 409; 204 without body rather than 200 with the record)", change=_revoke_answers)


# 7. Other fields of the user, partner, account records: not shown (§2); §9.2 clients tolerate new properties.
#    A service adding HAL-like `_links` and an `etag` to every JSON object it answers at the top level.
def _links(environ, status, headers, body):
    if not status.startswith("2"):
        return None
    data = json_of(body)
    if isinstance(data, dict):
        data["_links"] = {"self": {"href": environ["PATH_INFO"]}}
        data["etag"] = 'W/"1"'
        return changed(status, headers, data)


links_everywhere = Case(
    "links_everywhere", "§2 other fields not shown / §9.2 no additionalProperties (a _links and etag on every "
    "object answered)", change=_links)


CASES = [value for value in list(globals().values()) if isinstance(value, Case)]


def every_choice_at_once(cases=None):
    """One deployment making every choice of `cases` (all by default) at once: their changes of the answers in
    turn, their wraps one over another, their engine changes and settings together. Each choice's path is taken
    in one run (each path once); none of them touches what another one changes."""
    cases = CASES if cases is None else cases
    changes = [case.change for case in cases if case.change]
    wraps = [case.wrap for case in cases if case.wrap]
    applies = [case.apply for case in cases if case.apply]
    config = {key: value for case in cases for key, value in case.config.items()}

    def change(environ, status, headers, body):
        for one in changes:
            status, headers, body = one(environ, status, headers, body) or (status, headers, body)
        return status, headers, body

    def wrap(app):
        for one in wraps:
            app = one(app)
        return app

    def apply(app):
        for one in applies:
            one(app)
    return Case("every_choice_at_once", "; ".join(case.statement for case in cases), change=change,
                wrap=wrap if wraps else None, config=config, apply=apply if applies else None)

