"""The scope table of spec §5: which scopes exist, which token types may hold them, what `:all` covers."""

import re

from .problems import InvalidScope

# Spec §5 rule 7 and its table, row by row: scope -> token kinds that may hold it.
PARTNER, USER = "partner", "user"
TABLE = {
    "partner:all": {PARTNER}, "partner:read": {PARTNER}, "partner:create": {PARTNER},
    "partner:update": {PARTNER}, "partner:delete": {PARTNER},
    "user:all": {PARTNER}, "user:read": {PARTNER}, "user:create": {PARTNER}, "user:update": {PARTNER},
    "user:delete": {PARTNER},
    "account:all": {PARTNER, USER}, "account:read": {PARTNER, USER}, "account:create": {PARTNER, USER},
    "account:update": {PARTNER, USER}, "account:delete": {PARTNER, USER},
    "transaction:all": {PARTNER, USER}, "transaction:read": {PARTNER, USER},
    # "user-related": held by user tokens, and by partner tokens that create user tokens (§4.2 note 2).
    "user.token:create": {PARTNER, USER}, "user.token:all": {PARTNER, USER},
    "userui:create": {PARTNER}, "userui:read": {PARTNER},
}
ACTIONS = ("all", "read", "create", "update", "delete")

# docs/design.md: the initial token of a root partner holds every partner scope and the user-facing ones.
ROOT_SCOPE = ("partner:all user:all account:all transaction:all user.token:all userui:create userui:read")
# Spec §4.2 note 1: a new user's first token, unless the partner says otherwise.
DEFAULT_USER_SCOPE = "account:all transaction:all"


def pattern(kind):
    """A regular expression of the valid scope strings for a token kind, for the OpenAPI document."""
    names = "|".join(re.escape(s) for s, kinds in TABLE.items() if kind in kinds)
    return f"^({names})( ({names}))*$"


def holds(held, needed):
    """True when `held` grants `needed`: the scope itself or its resource's `:all` (spec §5 table)."""
    resource = needed.rpartition(":")[0]
    return needed in held or f"{resource}:all" in held


def holds_any(held, needed):
    return any(holds(held, n) for n in needed)


def parse(text, kind, field="scope"):
    """Scopes of a token create request: space-separated, each `{resource}:{action}` from the table."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidScope(f"`{field}` must be a non-empty string of space-separated scopes.")
    scopes = text.split(" ")
    for scope in scopes:
        resource, _, action = scope.partition(":")
        if not resource or action not in ACTIONS:
            raise InvalidScope(f"{scope!r} is not of the form {{resource}}:{{action}} (spec §5 rule 7).")
        if scope not in TABLE:
            raise InvalidScope(f"{scope!r} is not a scope of the service.")
        if kind not in TABLE[scope]:
            raise InvalidScope(f"{scope!r} cannot be held by a {kind} token.")
    return list(dict.fromkeys(scopes))


def within(held, requested):
    """Scopes of `requested` not granted by `held` (a token grants only what it holds itself)."""
    return [s for s in requested if not holds(held, s)]
