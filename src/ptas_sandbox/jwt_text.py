"""What a JWT looks like in text, for the simulator (the journal's redaction, the report's exposed-token notes)
and the harness (its masks) alike: one pattern, so what one masks the other finds.

Three base64url parts, the first a JSON header (`{"` is `eyJ`); the signature may be empty (an unsigned or cut
token is still a token's claims in the clear)."""

import re

JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
REDACTED = "[redacted]"     # what the simulator's journal and its echo receiver keep in a JWT's place


def masked(text):
    """`text` with every JWT in it replaced by REDACTED."""
    return JWT.sub(REDACTED, text)
