"""What the commands that steer a running sandbox share: where it is, whose world, and one request helper."""

import os
import sys

import requests


def arguments(parser):
    parser.add_argument("--url", default=os.environ.get("PTAS_URL", "http://127.0.0.1:8080"),
                        help="the sandbox (or PTAS_URL; default http://127.0.0.1:8080)")
    parser.add_argument("--token", default=os.environ.get("PTAS_TOKEN"),
                        help="a token of the world's root partner (or PTAS_TOKEN)")


def call(args, method, path, *, needs_token=True, **kw):
    """The answer of one control call; exits with status 2 and the problem's detail when it failed."""
    headers = kw.pop("headers", {})
    if needs_token:
        if not args.token:
            sys.exit("ptas: give --token (or set PTAS_TOKEN): a token of the world's root partner")
        headers["Authorization"] = f"Bearer {args.token}"
    try:
        response = requests.request(method, args.url.rstrip("/") + path, headers=headers, timeout=60, **kw)
    except requests.RequestException as error:
        print(f"ptas: cannot reach the sandbox at {args.url}: {error}", file=sys.stderr)
        sys.exit(2)
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail") or response.text
        except ValueError:
            detail = response.text
        print(f"ptas: {method} {path} answered {response.status_code}: {detail}", file=sys.stderr)
        sys.exit(2)
    return response
