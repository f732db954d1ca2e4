"""The ProblemDetails assertion every area's tests share."""


def assert_problem(response, status, slug=None):
    """An RFC 9457 body with the right status (and problem type, when given)."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.mimetype == "application/problem+json"
    body = response.json
    assert body["status"] == status and body["title"] and body["type"]
    if slug:
        assert body["type"].endswith(":" + slug), body["type"]
    return body
