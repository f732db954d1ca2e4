"""The OAuth2 flow as a script that knows only the spec: read the provider page's form, press a button, follow
the return step (shared by the oauth and dataimports tests)."""

from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit


class Form(HTMLParser):
    """The first form of a page: its action, hidden fields (the form token) and submit buttons (name, value,
    label)."""

    def __init__(self):
        super().__init__()
        self.action, self.buttons, self.label, self.hidden, self.done = None, [], None, {}, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.done:
            return
        if tag == "form" and self.action is None:
            self.action = attrs.get("action")
        if tag == "input" and attrs.get("type") == "hidden":
            self.hidden[attrs["name"]] = attrs.get("value", "")
        if tag == "button" and attrs.get("type", "submit") == "submit":
            self.buttons.append([attrs.get("name"), attrs.get("value"), ""])

    def handle_endtag(self, tag):
        self.done = self.done or tag == "form"

    def handle_data(self, data):
        if self.buttons and self.lasttag == "button":
            self.buttons[-1][2] += data.strip()


def follow_provider(client, url, label="Allow access"):
    """What a person does in the browser, scripted: open the page, press the button with this label."""
    page = client.get(urlsplit(url).path)
    assert page.status_code == 200
    form = Form()
    form.feed(page.get_data(as_text=True))
    name, value, _ = next(b for b in form.buttons if b[2] == label)
    return client.post(urljoin(url, form.action), data={**form.hidden, name: value})


def authorized(client, api, path="/oauth", **body):
    flow = api.post(path, json=body)
    assert flow.status_code == 201, flow.get_data(as_text=True)
    step = follow_provider(client, flow.json["redirectUrl"])
    assert step.headers["X-Service-AuthReference"] == flow.json["authReference"]
    assert step.headers["X-Service-AuthStatus"] == "Success"
    if step.status_code == 302:           # a redirect URL applies: the same data in its query
        query = {k: v[0] for k, v in parse_qs(urlsplit(step.headers["Location"]).query).items()}
        assert (query["reference"], query["status"]) == (flow.json["authReference"], "Success")
    else:                                 # none applies: the plain service page
        assert step.status_code == 200 and step.mimetype == "text/html"
    return step.headers["X-Service-AuthReference"]
