"""Bearer JWTs: issued and verified with a fixed algorithm list, their time claims checked on the world clock.

PyJWT would check `exp` against the system clock; a sandbox token lives on its world's clock, so the library
verifies the signature and the claims' presence, and the world clock decides expiry (see tokens.models).
"""

import jwt

from .problems import Unauthorized

ALGORITHMS = ["HS256"]
ISSUER = "ptas-sandbox"
REQUIRED = ["jti", "sub", "knd", "wld", "iat", "exp", "iss"]


class Signer:
    def __init__(self, secret):
        self.secret = secret

    def issue(self, *, token_id, subject, kind, world, scope, issued_at, expires_at):
        claims = {"jti": token_id, "sub": subject, "knd": kind, "wld": world, "scope": scope,
                  "iat": issued_at // 1_000_000, "exp": expires_at // 1_000_000, "iss": ISSUER}
        return jwt.encode(claims, self.secret, algorithm=ALGORITHMS[0])

    def verify(self, token):
        """The claims of a token signed by this sandbox; 401 for anything else (alg none, tampered, foreign)."""
        try:
            return jwt.decode(token, self.secret, algorithms=ALGORITHMS, issuer=ISSUER,
                              options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                       "require": REQUIRED})
        except jwt.PyJWTError as error:
            raise Unauthorized(f"The bearer token is not valid: {error}.") from None


def bearer(header):
    """The JWT of an `Authorization: Bearer <jwt>` header (spec §5 rule 1); 401 when absent or malformed."""
    if not header:
        raise Unauthorized("This operation needs an Authorization header with a bearer token.",
                           headers={"WWW-Authenticate": "Bearer"})
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token or " " in token.strip():
        raise Unauthorized("The Authorization header must be `Bearer <JWT>`.")
    return token.strip()
