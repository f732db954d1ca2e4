"""HTTP layer of the reference pages: `/docs` renders /openapi.json with Swagger UI, `/` links everything.

Swagger UI's built assets come from the `swagger-ui-py` package (Swagger UI 5, which reads OpenAPI 3.1; the
`swagger-ui-bundle` package ships 4.x, which does not), served from here: no CDN, so the page works offline.
The page's own start-up script is a file too, so the Content-Security-Policy forbids inline script.
"""

from importlib import resources

from flask import Response, request

from ptas_sandbox import __version__

from ...operations import NO_AUTH, operation
from ...problems import NotFound

# Swagger UI sets style attributes and shows data: images; nothing else is allowed beyond this origin.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
VENDOR = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript",
          "favicon-32x32.png": "image/png"}
START = """// Starts Swagger UI on this server's /openapi.json (a file, not inline script: the page's CSP forbids that).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, displayOperationId: true,
    persistAuthorization: false, tryItOutEnabled: false, filter: true, docExpansion: "list"
  });
});
"""
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ptas-sandbox API reference</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<script src="/docs/assets/swagger-ui-bundle.js" defer></script>
<script src="/docs/assets/start.js" defer></script>
</head><body><div id="swagger-ui"><noscript>The reference needs JavaScript; the document itself is
<a href="/openapi.json">/openapi.json</a>.</noscript></div></body></html>
"""
HOME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ptas-sandbox</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1c1e21}}
code{{background:#f1f2f4;padding:0 .25rem;border-radius:3px;overflow-wrap:anywhere}}li{{margin:.4rem 0}}</style>
</head><body>
<h1>ptas-sandbox {version}</h1>
<p>A sandbox of the Payment Transactions Aggregation Service: every operation of the interface under
<code>{prefix}</code>, plus the sandbox's control API under <code>/_sandbox</code>.</p>
<ul>
<li><a href="/docs">API reference</a>: every operation, with examples (<a href="/openapi.json">/openapi.json</a>)</li>
<li><a href="/_sandbox/inspect">Inspector</a>: one world's requests, webhooks, accounts, tokens and clock
(open it with <code>ptas inspect</code> or a link from <code>POST /_sandbox/inspect/links</code>)</li>
<li><a href="/_sandbox/health">Health</a></li>
</ul>
<p>Start: <code>curl -X POST {base}/_sandbox/partners</code> creates a world and answers its partner token.</p>
</body></html>
"""


@operation("SandboxHome", "GET", "/", tokens=NO_AUTH, control=True, responses={200: "text/html"})
def home(call):
    """Links to the API reference, the inspector and the health page."""
    body = HOME.format(version=__version__, prefix=call.sandbox.config["PREFIX"], base=request.host_url.rstrip("/"))
    return Response(body, 200, {**HEADERS, "Content-Security-Policy": CSP.replace(
        "style-src 'self' 'unsafe-inline'", "style-src 'unsafe-inline'")}, mimetype="text/html")


@operation("SandboxDocs", "GET", "/docs", tokens=NO_AUTH, control=True, responses={200: "text/html"})
def docs(call):
    """The API reference: Swagger UI over /openapi.json, served offline from the package's assets."""
    return Response(PAGE, 200, HEADERS, mimetype="text/html")


@operation("SandboxDocsAsset", "GET", "/docs/assets/{name}", tokens=NO_AUTH, control=True,
           responses={200: "text/plain", 404: "ProblemDetails"})
def docs_asset(call):
    """Swagger UI's built files and the page's start-up script."""
    name = call.params["name"]
    if name == "start.js":
        body, kind = START.encode(), "text/javascript"
    elif name in VENDOR:
        body, kind = resources.files("swagger_ui").joinpath("static", name).read_bytes(), VENDOR[name]
    else:
        raise NotFound(f"No asset named {name!r} in /docs/assets.")
    return Response(body, 200, {"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"},
                    mimetype=kind)
