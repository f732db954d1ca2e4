"""Bearer JWTs: issued and verified with a fixed algorithm list, their time claims checked on the world clock.

PyJWT would check `exp` against the system clock; a sandbox token lives on its world's clock, so the library
verifies the signature and the claims' presence, and the world clock decides expiry (see tokens.models).
"""

import functools
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from . import scopes
from .problems import Forbidden, Unauthorized

ALGORITHMS = ["HS256"]
ISSUER = "ptas-sandbox"
REQUIRED = ["jti", "sub", "knd", "wld", "iat", "exp", "iss"]
STORE_CLAIM = "sto"     # the identity of the store that issued a token (StoreIdentity)


@dataclass(frozen=True)
class Principal:
    """Who calls: the token, its kind, its partner (and user) and the scopes it holds."""
    token_id: str
    kind: str                    # "partner" or "user"
    partner_id: str
    user_id: str | None
    scopes: frozenset[str]

    @property
    def is_deploy_token(self) -> bool:
        """Spec §5 rule 4: a partner token with only partner:create."""
        return self.kind == "partner" and self.scopes == {"partner:create"}


@dataclass(frozen=True)
class StoreIdentity:
    """The random identity a store gets when it is made, kept in the store itself: every token and world key
    carries it. The signing secret may outlive its store (a `<state>.key` kept while the state is deleted, a
    fixed --secret), and a seed repeats world ids, so the secret alone would let a credential of an earlier
    store open the world that now has its id. `inherited`: the store held worlds before it had an identity (an
    older version's state), whose tokens carry none and stay valid."""
    id: str
    inherited: bool = False

    def __str__(self) -> str:
        return self.id


def store_identity(store, holds_worlds: Callable[[], bool]) -> StoreIdentity:
    """The identity of `store`, made at its first start (`holds_worlds`: whether it already held worlds then);
    several processes starting at once agree on one."""
    def made():
        return {"id": secrets.token_urlsafe(16), "inherited": holds_worlds()}
    value = store.meta("store-identity", made)
    return StoreIdentity(value["id"], bool(value.get("inherited")))


class Signer:
    def __init__(self, secret: str, store: StoreIdentity | None = None) -> None:
        self.secret = secret
        self.store = store or StoreIdentity(secrets.token_urlsafe(16))

    @property
    def session_key(self) -> str:
        """A key for this store's own short-lived signatures (inspector sessions): bound to the store too."""
        return f"{self.secret}/{self.store}"

    def verify(self, token: str) -> Mapping[str, Any]:
        """The claims of a token signed by this sandbox for this store; 401 for anything else (alg none,
        tampered, another sandbox's, or an earlier store's signed with a secret that outlived it)."""
        claims = decode(self.secret, token)
        issued_by = claims.get(STORE_CLAIM)
        if issued_by != self.store.id and not (issued_by is None and self.store.inherited):
            raise Unauthorized("The bearer token is not valid: another state of this sandbox issued it (the "
                               "state was made anew since); ask this one for a new token.")
        return claims

    def issue(self, *, token_id: str, subject: str, kind: str, world: str, scope: str, issued_at: int,
              expires_at: int) -> str:
        import jwt  # late, as in decode: PyJWT (and its crypto backends) is not needed to start serving
        claims = {"jti": token_id, "sub": subject, "knd": kind, "wld": world, "scope": scope,
                  "iat": issued_at // 1_000_000, "exp": expires_at // 1_000_000, "iss": ISSUER,
                  STORE_CLAIM: self.store.id}
        return jwt.encode(claims, self.secret, algorithm=ALGORITHMS[0])


# Verifying a signature is a pure function of the secret and the token string, and the costliest step of a
# request: the claims of recently verified tokens are kept (a refusal never is). Expiry and revocation are still
# checked on every request, against the store and the world clock (tokens.models.authenticate).
@functools.lru_cache(maxsize=4096)
def decode(secret: str, token: str) -> Mapping[str, Any]:
    import jwt  # late: PyJWT is not needed to start serving, and the first request (health) needs no token
    try:
        return MappingProxyType(jwt.decode(token, secret, algorithms=ALGORITHMS, issuer=ISSUER,
                                           options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                                    "require": REQUIRED}))
    except jwt.PyJWTError as error:
        raise Unauthorized(f"The bearer token is not valid: {in_our_words(jwt, error)}") from None


def in_our_words(jwt, error):
    """Why a token was refused, for a person who pasted it: PyJWT's "Not enough segments" tells them nothing."""
    if isinstance(error, jwt.InvalidSignatureError):
        return "this sandbox did not sign it (a token of another sandbox or state, or changed on the way)."
    if isinstance(error, jwt.InvalidAlgorithmError):
        return f"it is signed with an algorithm this sandbox does not accept (only {', '.join(ALGORITHMS)})."
    if isinstance(error, jwt.DecodeError):
        return ("it is not a JWT (three base64url parts joined by dots); send the whole token as it was given (an "
                "accessToken, or the worldKey for the sandbox's control calls).")
    if isinstance(error, (jwt.InvalidIssuerError, jwt.MissingRequiredClaimError)):
        return "this sandbox did not issue it."
    return "this sandbox cannot read it."


BEARER = re.compile(r"(?i:bearer)\s+(\S+)")
WORLD_KEY = "world"             # the `knd` of a world key: the harness's authority over one world
LATEST_S = 253402300799         # 9999-12-31T23:59:59Z: a world key does not expire


def bearer(header: str | None) -> str:
    """The JWT of an `Authorization: Bearer <jwt>` header (spec §5 rule 1); 401 when absent or malformed."""
    if not header:
        raise Unauthorized("This operation needs an Authorization header with a bearer token.",
                           headers={"WWW-Authenticate": "Bearer"})
    # "Bearer, one whitespace character, then a JWT": a tab is as good as a space.
    match = BEARER.fullmatch(header.strip())
    if match is None:
        raise Unauthorized("The Authorization header must be `Bearer <JWT>`.")
    return match.group(1)


def remembered_token(world_id: str, token_id: str) -> tuple[str, str, str]:
    """The key under which a process that owns its store remembers a token's row (requeststate.memory's admit)."""
    return ("token", world_id, token_id)


def world_key_id(world_id: str) -> str:
    """The `jti` of a world's key (what the journal shows as its token id)."""
    return f"world-key:{world_id}"


def world_key(signer: Signer, world_id: str) -> str:
    """The world key: the authority of a world's harness (CI job, fixtures) over its control API (report,
    journal, faults, clock), made when the world is. It is no token of the service: no row in `tokens`, so
    no partner operation takes it or lists it, and whatever the partner software does with its own tokens
    (rotate, revoke, let them expire) the harness keeps it. Signed, so it cannot be forged; it names its world
    only. A pure function of the world and the server's secret: asked twice, it is the same key."""
    return signer.issue(token_id=world_key_id(world_id), subject=world_id, kind=WORLD_KEY, world=world_id,
                        scope="", issued_at=0, expires_at=LATEST_S * 1_000_000)


class Guarded(Protocol):
    """What `authorize` reads of an operation (operations.Operation)."""
    id: str
    tokens: str | tuple[str, ...]

    def scopes_for(self, kind: str) -> tuple[str, ...]: ...


def authorize(op: Guarded, principal: Principal) -> None:
    """403 unless the operation takes the principal's kind of token and the token holds one of its scopes."""
    if principal.kind not in op.tokens:
        raise Forbidden(f"{op.id} does not accept {principal.kind} tokens.")
    needed = op.scopes_for(principal.kind)
    if needed and not scopes.holds_any(principal.scopes, needed):
        raise Forbidden(f"{op.id} needs one of the scopes {', '.join(needed)}.", requiredScopes=list(needed))
