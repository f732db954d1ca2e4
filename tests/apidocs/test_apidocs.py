"""`/` and `/docs` (issue 13 item 3): the reference page and its assets come from installed packages."""


def test_home_links_docs_inspector_and_health(client):
    response = client.get("/")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and response.mimetype == "text/html"
    for path in ('href="/docs"', 'href="/_sandbox/inspect"', 'href="/_sandbox/health"', 'href="/openapi.json"'):
        assert path in html


def test_docs_page_uses_only_its_own_assets(client):
    response = client.get("/docs")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and "/docs/assets/swagger-ui-bundle.js" in html
    assert "http" not in html.replace('href="/openapi.json"', "")
    assert "script-src 'self';" in response.headers["Content-Security-Policy"]
    assert "<script>" not in html


def test_swagger_ui_reads_openapi_3_1(client):
    bundle = client.get("/docs/assets/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and b"isOAS31" in bundle.data
    assert b"url: \"/openapi.json\"" in client.get("/docs/assets/start.js").data
    assert client.get("/docs/assets/secret.py").status_code == 404


def test_each_page_names_an_icon_its_own_policy_lets_the_browser_load(client):
    """Without one the browser asks for /favicon.ico (a 404), and an icon the page's CSP refuses is a console
    error on every visit."""
    import re

    world = client.post("/_sandbox/partners", json={}).get_json()
    inspector = client.get("/_sandbox/inspect/requests", headers={"Authorization": f"Bearer {world['accessToken']}"})
    for response in (client.get("/"), client.get("/docs"), inspector):
        html = response.get_data(as_text=True)
        icon = re.search(r'<link rel="icon" href="([^"]+)">', html).group(1)
        assert icon.startswith("/"), icon          # this origin: every page's img-src allows 'self'
        assert "img-src 'self'" in response.headers["Content-Security-Policy"]
        served = client.get(icon)
        assert served.status_code == 200 and served.mimetype.startswith("image/"), icon


def test_home_fits_a_phone_screen():
    """Its one long line (the curl of a world's creation) wraps instead of widening the page past 390 px."""
    from ptas_sandbox.simulator.tools.apidocs.http import HOME
    assert "overflow-wrap:anywhere" in HOME.split("code{{", 1)[1].split("}}", 1)[0]
