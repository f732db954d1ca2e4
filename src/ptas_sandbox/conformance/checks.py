"""What the Then steps check, as plain functions: ProblemDetails, date-times, token records."""

import re

from .scene import check
from .timestamps import parse

DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
SEVEN_DIGITS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$")
PROBLEM_MEMBERS = ("type", "title", "status", "detail", "instance")


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


def bad_date_times(value, where="$"):
    """Every string that looks like a date-time but lacks seven fractional digits and a Z (spec §2, §9.3)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from bad_date_times(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from bad_date_times(item, f"{where}[{index}]")
    elif isinstance(value, str) and DATE_LIKE.match(value) and not SEVEN_DIGITS.match(value):
        yield where, value


def seconds_between(start, end):
    return (parse(end) - parse(start)) / 1_000_000


def find_token_record(value):
    """The token record inside a response whose shape around it is not shown (CreateUser's user token)."""
    if isinstance(value, dict):
        if isinstance(value.get("accessToken"), str):
            return value
        for item in value.values():
            found = find_token_record(item)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = find_token_record(item)
            if found is not None:
                return found
    return None


def scope_set(text):
    check(isinstance(text, str), f"a scope is a string of space-separated scopes, got {text!r}")
    return set(text.split())


def items(reply, what):
    """The array of a list response; its property name is not shown by the spec for every list."""
    check(reply.ok, f"expected a list of {what}, got {reply.describe()}")
    body = reply.body
    found = body if isinstance(body, list) else next((v for v in (body or {}).values() if isinstance(v, list)), None)
    check(isinstance(found, list), f"expected a list of {what}, got {reply.text[:200]!r}")
    return [item for item in found if isinstance(item, dict)]


def ids_of(reply, what):
    return {item.get("id") for item in items(reply, what)}


def reports_problems(entry, what):
    """Spec §2, §6 and §7 rule 4: accounts, reports and data imports report problems in errors and warnings."""
    check(isinstance(entry.get("errors"), list) and isinstance(entry.get("warnings"), list),
          f"{what} reports errors and warnings arrays (spec §7 rule 4), got {entry.get('errors')!r}, "
          f"{entry.get('warnings')!r}")
