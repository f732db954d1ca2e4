"""Posting a hosted page's form as its browser would: load the page (which sets the form cookie), then post
with the token its form carries (simulator/pages: double-submit CSRF protection)."""

import re

TOKEN = re.compile(r'name="csrfToken" value="([^"]+)"')


def form_token(client, page_path):
    """The token of the form on `page_path`; a page without a form (an error page) leaves the token the
    client's cookie already had, as a browser's back button would."""
    html = client.get(page_path).get_data(as_text=True)
    match = TOKEN.search(html)
    if match:
        client.ptas_form_token = match.group(1)
    return getattr(client, "ptas_form_token", None)


def post_form(client, path, data=None, page=None, **kw):
    """POST `data` to `path` with the token of the form on `page` (default: `path` itself)."""
    token = form_token(client, page or path)
    data = dict(data or {})
    if token is not None:
        data.setdefault("csrfToken", token)
    return client.post(path, data=data, **kw)
