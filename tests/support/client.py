"""The one client of the project's tests: the service API as one bearer, with the service prefix applied.

Over the Flask test client in-process (`Api(app.test_client())`) or over HTTP (`Api(Http(base_url))`), so a
test reads the same either way: `api.as_(token).get("/partners/self")`. In-process replies are Flask's
(`.json` is a property); over HTTP they are `requests` responses (`.json()`), as partner code sees them.
"""

import requests

PREFIX = "/partner/v2"
UNPREFIXED = ("/_sandbox", "/openapi", "/docs", "/inspect")


class Http:
    """A transport with the Flask test client's `open` signature, speaking HTTP to `base`."""

    def __init__(self, base, timeout=10):
        self.base, self.timeout = base.rstrip("/"), timeout
        self.session = requests.Session()

    def open(self, path, method="GET", headers=None, json=None, data=None, query_string=None, **kw):
        return self.session.request(method, self.base + path, headers=headers, json=json, data=data,
                                    params=query_string, timeout=self.timeout, **kw)


class Api:
    """A test client speaking to the simulator as one bearer, with the service prefix applied."""

    def __init__(self, client, token=None, prefix=PREFIX):
        self.client, self.token, self.prefix = client, token, prefix

    @property
    def base(self):
        """The server's base URL over HTTP (`""` in-process, where paths are the whole address)."""
        return getattr(self.client, "base", "")

    def as_(self, token):
        return Api(self.client, token, self.prefix)

    def call(self, method, path, **kw):
        headers = dict(kw.pop("headers", {}))
        if self.token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.token}"
        return self.client.open(self.url(path), method=method, headers=headers, **kw)

    def url(self, path):
        return path if path.startswith(UNPREFIXED) else self.prefix + path

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, **kw):
        return self.call("POST", path, **kw)

    def put(self, path, **kw):
        return self.call("PUT", path, **kw)

    def patch(self, path, **kw):
        return self.call("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)

    def advance(self, seconds):
        response = self.post("/_sandbox/clock", json={"advance": seconds})
        assert response.status_code == 200, response.text
        return payload(response)


def payload(response):
    """The JSON body of a Flask or a `requests` response."""
    return response.json() if callable(response.json) else response.json
