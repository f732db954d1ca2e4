"""Errors: one exception family, raised anywhere, rendered in one place as RFC 9457 ProblemDetails."""

TYPE_ROOT = "urn:ptas-sandbox:problem:"


class Problem(Exception):
    """An error answered as `application/problem+json`; subclasses fix status, type and title."""

    status = 500
    slug = "internal-error"
    title = "Internal error"

    def __init__(self, detail=None, *, headers=None, **extensions):
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.headers = headers or {}
        self.extensions = extensions

    @property
    def type(self):
        return TYPE_ROOT + self.slug

    def body(self, instance=None, trace_id=None):
        body = {"type": self.type, "title": self.title, "status": self.status, "detail": self.detail}
        if instance:
            body["instance"] = instance
        if trace_id:
            body["traceId"] = trace_id
        body.update(self.extensions)
        return body


class BadRequest(Problem):
    status, slug, title = 400, "bad-request", "Bad request"


class InvalidBody(BadRequest):
    slug, title = "invalid-body", "The request body is not valid"


class InvalidParameter(BadRequest):
    slug, title = "invalid-parameter", "A parameter is not valid"


class InvalidScope(BadRequest):
    slug, title = "invalid-scope", "The scope is not valid"


class Unauthorized(Problem):
    status, slug, title = 401, "unauthorized", "Authentication required"

    def __init__(self, detail=None, **kw):
        kw.setdefault("headers", {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        super().__init__(detail, **kw)


class Forbidden(Problem):
    status, slug, title = 403, "forbidden", "The token lacks a required scope"


class NotFound(Problem):
    status, slug, title = 404, "not-found", "Not found"


class Removed(NotFound):
    slug, title = "removed", "This path was removed from the interface"


class MethodNotAllowed(Problem):
    status, slug, title = 405, "method-not-allowed", "Method not allowed"


class Conflict(Problem):
    status, slug, title = 409, "conflict", "Conflict with the current state"


class PayloadTooLarge(Problem):
    status, slug, title = 413, "payload-too-large", "The request body is too large"


class UnsupportedMediaType(Problem):
    status, slug, title = 415, "unsupported-media-type", "The request body must be application/json"


class UnsupportedContentCoding(Problem):
    status, slug, title = 415, "unsupported-content-coding", "The request body must be sent as it is, not encoded"


class TooManyRequests(Problem):
    status, slug, title = 429, "rate-limited", "Rate limit exceeded"


class ServiceUnavailable(Problem):
    status, slug, title = 503, "unavailable", "Unavailable"


def not_found(what, ident):
    """The one 404 for ids: the same wording whether the id is unknown or belongs to someone else."""
    return NotFound(f"No {what} with id {ident!r}.")


BY_STATUS = {cls.status: cls for cls in (BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed,
                                          Conflict, PayloadTooLarge, UnsupportedMediaType, TooManyRequests,
                                          ServiceUnavailable)}
