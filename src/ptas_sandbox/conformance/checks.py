"""What the Then steps check, as plain functions: ProblemDetails, date-times, token records."""

import re

from .bodies import identifier, words
from .datetimes import parse
from .redact import redact
from .resolver import NotOffered

DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
# A string that is a date-time as a whole (ISO 8601 / RFC 3339, any precision, any zone or none): free text that
# merely starts with a date ("2026-11-12 13:13 Card payment", a provider's booking text) is no date-time.
WHOLE_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$")
SEVEN_DIGITS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$")
PROBLEM_MEMBERS = ("type", "title", "status", "detail", "instance")


def check(condition, message):
    """An assertion whose message never shows a token in full (pytest shows only this message and the line)."""
    __tracebackhide__ = True
    if not condition:
        raise AssertionError(redact(message))


def problem(reply, status):
    """Spec §7 rule 2: the error status with a ProblemDetails body (RFC 9457), not an empty body.

    Which members the body has is not shown by the spec; a JSON object with at least one ProblemDetails
    member, whose `status` (when present) agrees with the HTTP status, is what any deployment must give.
    """
    check(reply.status == status, f"expected {status}, got {reply.describe()}")
    check(reply.content_type in ("application/problem+json", "application/json"),
          f"a {status} must carry a ProblemDetails body; got Content-Type {reply.content_type!r}: {reply.text[:200]!r}")
    body = reply.body
    check(isinstance(body, dict) and any(m in body for m in PROBLEM_MEMBERS),
          f"a {status} must carry a ProblemDetails body, got {reply.text[:300]!r}")
    if "status" in body:
        check(body["status"] == status, f"the ProblemDetails status {body['status']!r} is not the HTTP status {status}")
    return body


def bad_date_times(value, where="$", key=""):
    """Every date-time that lacks seven fractional digits and a Z (spec §2, §9.3): a string that is a date-time
    as a whole, or that starts like one under a timestamp's name (the spec's end in `At`: createdAt, expiresAt)."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from bad_date_times(item, f"{where}.{name}", str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from bad_date_times(item, f"{where}[{index}]", key)
    elif isinstance(value, str) and not SEVEN_DIGITS.match(value) and (
            WHOLE_DATE_TIME.match(value) or (key.endswith("At") and DATE_LIKE.match(value))):
        yield where, value


def seconds_between(start, end):
    return (parse(end) - parse(start)) / 1_000_000


JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


def find_token_record(value):
    """The token inside a response whose shape around it is not shown (CreateUser's first user token): an
    object carrying accessToken, or else the token itself as a string (`{"accessToken": it}`, nothing more)."""
    record = token_object(value)
    if record is None:
        jwt = next(jwt_strings(value), None)
        record = {"accessToken": jwt} if jwt else None
    return record


def jwt_strings(value):
    return (text for text in strings(value) if JWT.match(text))


def strings(value):
    """Every string value of parsed JSON, at any depth: what a body says, however its bytes escape it (`\\/`)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def token_object(value):
    if isinstance(value, dict):
        if isinstance(value.get("accessToken"), str):
            return value
        for item in value.values():
            found = token_object(item)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = token_object(item)
            if found is not None:
                return found
    return None


def scope_set(text):
    check(isinstance(text, str), f"a scope is a string of space-separated scopes, got {text!r}")
    return set(text.split())


def items(reply, what):
    """The entries of a list response (`what`: "users", "account types"...); the spec does not show every list's
    property name."""
    check(reply.ok, f"expected a list of {what}, got {reply.describe()}")
    found = entries(reply.body, what)
    check(isinstance(found, list), f"expected a list of {what}, got {reply.text[:200]!r}")
    return [item for item in found if isinstance(item, dict)]


def entries(body, what):
    """The array of `body` that holds the `what`: the body itself, its only array, the one array named like the
    `what` (`accountTypes`), else the one array of records with ids. Never the first array: JSON members have no
    order (RFC 8259), and a deployment may put navigation links or summaries before the entries. NotOffered (the
    scenario is skipped, said why) when several arrays fit; None when there is none."""
    if not isinstance(body, dict):
        return body if isinstance(body, list) else None
    arrays = {name: value for name, value in body.items() if isinstance(value, list)}
    if len(arrays) <= 1:
        return next(iter(arrays.values()), None)
    wanted = {word.rstrip("s") for word in words(what)}
    for fits in (lambda name, value: {word.rstrip("s") for word in words(name)} & wanted,
                 lambda name, value: value and all(identifier(entry) is not None for entry in value)):
        chosen = [value for name, value in arrays.items() if fits(name, value)]
        if len(chosen) == 1:
            return chosen[0]
    raise NotOffered(f"the list of {what} could be any of the arrays {sorted(arrays)} of the answer, and neither "
                     "their names nor their entries tell which")


def ids_of(reply, what, *hints):
    """The ids of a list's entries, under the target's name for them (`hints`: see bodies.identifier)."""
    return {identifier(item, *hints) for item in items(reply, what)}


def reports_problems(entry, what):
    """Spec §2, §6 and §7 rule 4: accounts, reports and data imports report problems in errors and warnings."""
    check(isinstance(entry.get("errors"), list) and isinstance(entry.get("warnings"), list),
          f"{what} reports errors and warnings arrays (spec §7 rule 4), got {entry.get('errors')!r}, "
          f"{entry.get('warnings')!r}")
