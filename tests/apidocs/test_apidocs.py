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
