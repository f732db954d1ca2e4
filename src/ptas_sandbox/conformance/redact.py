"""Never print a token in full: masks for bearer tokens in anything the harness writes (output, reports)."""

import re

from ptas_sandbox.jwt_text import JWT

# What is left of a JWT cut short (by an excerpt, a log line, a server's own truncation): its header alone, or
# the header and part of the payload. Masked too, so no part of a token's payload is ever shown.
PARTIAL_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?")
_secrets = set()


# Secrets in JSON bodies (a webhook's signing secret, a credential) are masked like tokens.
SECRET = re.compile(r'("(?:secret|password|clientSecret|webhookSecret)"\s*:\s*")([^"]{4,})', re.I)


def mask(token):
    """The first six and last four characters of a token, enough to tell tokens apart, never enough to use one."""
    if not token:
        return "(none)"
    token = str(token)
    return f"{token[:6]}…{token[-4:]}" if len(token) > 16 else "…" * 3


def remember(token):
    """A token that is not a JWT (a deployment may issue opaque ones) is masked wherever it appears, too."""
    if token and len(token) > 8:
        _secrets.add(str(token))


def redact(text):
    if not isinstance(text, str):
        text = str(text)
    for secret in _secrets:
        text = text.replace(secret, mask(secret))
    text = SECRET.sub(lambda m: m.group(1) + mask(m.group(2)), text)
    text = JWT.sub(lambda m: mask(m.group(0)), text)
    return PARTIAL_JWT.sub(lambda m: mask(m.group(0)), text)


# Longer than any token: a window this far past an excerpt's end holds whole every token that starts inside it
# (a longer one is still masked, cut, by PARTIAL_JWT).
TOKEN_REACH = 4096


def excerpt(text, limit=300):
    """At most `limit` characters of `text`, tokens masked before it is cut (a token cut in half by the excerpt
    would otherwise escape the patterns that recognise whole tokens). Only the window the excerpt can show is
    masked: every check's message names the reply, a page of transactions included."""
    text = text or ""
    cleaned = redact(text[:limit + TOKEN_REACH])
    if len(text) <= limit + TOKEN_REACH and len(cleaned) <= limit:
        return cleaned
    return redact(cleaned[:limit]) + f"… ({len(text)} characters)"


def redact_file(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    cleaned = redact(text)
    if cleaned != text:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(cleaned)
