"""Receiver-side helper for partner developers: check that a notification really came from the sandbox.

Notifications are signed in the Standard Webhooks style (docs/design.md): headers `webhook-id`,
`webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>` over
`{id}.{timestamp}.{body}`, several space-separated when secrets rotate). The key is the webhook's `secret`:
base64-decoded when it starts with `whsec_`, its UTF-8 bytes otherwise. See docs/webhooks.md.

Depends on the standard library only, so a receiver can copy this file as it is. Partner code imports it as
`ptas_sandbox.webhooks`; the simulator signs with it (webhooks/deliveries.py) and compares every other secret
it is sent (form tokens, page references, inspector sessions) with its `same_text`.
"""

import base64
import hashlib
import hmac
import json
import time

PREFIX = "whsec_"


class InvalidSignature(ValueError):
    """The notification is not authentic, is malformed, or its timestamp is outside the tolerance."""


def key_of(secret):
    """The HMAC key of a webhook secret (`whsec_<base64>` as Standard Webhooks writes them, or any text)."""
    if secret.startswith(PREFIX):
        try:
            return base64.b64decode(secret[len(PREFIX):], validate=True)
        except ValueError:
            raise InvalidSignature("The secret starts with whsec_ but the rest is not base64.") from None
    return secret.encode()


def same_text(a, b):
    """Constant-time equality of two texts of any characters. hmac.compare_digest raises TypeError on a
    non-ASCII str, and what is compared (a signature, a form token, a page reference) comes from outside;
    UTF-8 with surrogatepass encodes every str, one-to-one, so equal bytes mean equal texts."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def sign(secret, message_id, timestamp, body):
    """The `webhook-signature` value of one notification: `v1,<base64>`."""
    payload = body if isinstance(body, bytes) else body.encode()
    signed = f"{message_id}.{int(timestamp)}.".encode() + payload
    return "v1," + base64.b64encode(hmac.new(key_of(secret), signed, hashlib.sha256).digest()).decode()


def verify(secret, headers, body, tolerance_seconds=300, now=None):
    """The parsed JSON payload of an authentic notification; raises InvalidSignature otherwise.

    `headers` is any mapping (lookup is case-insensitive), `body` the raw request body (bytes or str, exactly
    as received: re-serialising the JSON breaks the signature). `now` is Unix seconds (default: this machine's
    clock); pass the sandbox world clock when you have moved it. `tolerance_seconds=None` skips the age check.
    """
    lowered = {k.lower(): v for k, v in dict(headers).items()}
    try:
        message_id, stamp, signatures = (lowered[h] for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    except KeyError as missing:
        raise InvalidSignature(f"Missing header {missing.args[0]}.") from None
    try:
        timestamp = int(stamp)
    except ValueError:
        raise InvalidSignature(f"webhook-timestamp {stamp!r} is not Unix seconds.") from None
    if tolerance_seconds is not None:
        current = time.time() if now is None else now
        if abs(current - timestamp) > tolerance_seconds:
            raise InvalidSignature(f"webhook-timestamp is {int(current - timestamp)} s away from now "
                                   f"(tolerance {tolerance_seconds} s): a replay, or clocks apart.")
    try:
        expected = sign(secret, message_id, timestamp, body).partition(",")[2]
    except UnicodeEncodeError:      # a lone surrogate in a str: no sender signed it
        raise InvalidSignature("The webhook-id or the body is not text that can be signed.") from None
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and same_text(value, expected):
            try:
                return json.loads(body)
            except ValueError:
                raise InvalidSignature("The body is signed but is not a JSON notification.") from None
    raise InvalidSignature("No v1 signature matches: wrong secret, or the body was changed.")
