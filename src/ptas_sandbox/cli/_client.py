"""What every remote command shares: where the sandbox is (--url/PTAS_URL), whose world (--token/PTAS_TOKEN),
and one-line errors instead of tracebacks (exit 2 when the sandbox cannot be reached or asked, 1 when it refuses)."""

import base64
import json
import os
import shutil
import sys
from urllib.parse import urlsplit

from ptas_sandbox.testing.partner_kit import HARNESS_HEADER  # the report leaves a call with the world key out

# Every call of a command says which (`ptas listen`): the journal marks it `tool`, and its readers, the inspector
# and the report leave it out unless asked, so the user sees their own software's calls.
TOOL_HEADER = "X-Sandbox-Tool"

DEFAULT_URL = "http://127.0.0.1:8080"
PREFIX = "/partner/v2"


def spelling():
    """How this shell reaches the `ptas` that is running: `ptas` when it is the one on PATH, else the path it was
    started by (`.venv/bin/ptas` after `make serve`), so a hint it prints can be typed as it stands."""
    started = sys.argv[0]
    if os.path.basename(started) != "ptas":
        return "ptas"               # `python -m ptas_sandbox.cli`, or a test calling main()
    on_path = shutil.which("ptas")
    if on_path and os.path.realpath(on_path) == os.path.realpath(started):
        return "ptas"
    relative = os.path.relpath(started)
    return relative if not relative.startswith("..") else os.path.abspath(started)


def base_url(text):
    """The sandbox's base URL from what a person types: `127.0.0.1:8080` gets `http://`, and an address of the
    API itself (`.../partner/v2`, as the spec and /docs spell it) is cut back to the sandbox's base."""
    text = text.strip().rstrip("/")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Failed(f"--url {text!r} is not a sandbox address; write e.g. {DEFAULT_URL}", 2)
    path = parts.path.rstrip("/")
    if path.endswith(PREFIX):
        path = path[: -len(PREFIX)]
    return f"{parts.scheme}://{parts.netloc}{path}"


class Failed(Exception):
    """A one-line reason the command stopped, and its exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def token_kind(token):
    """The `knd` claim of a sandbox token, read without verifying (the server verifies): "world" for a world key,
    None when it is no JWT. Lets a command that needs a partner token say so before the server answers 401."""
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).get("knd")
    except (IndexError, ValueError, AttributeError):
        return None


def add_target(parser, token=True, partner=False):
    """--url and --token; `partner`: the command calls the partner API, which takes partner tokens only (the world
    key opens the control API), so --token is PTAS_TOKEN's and the world key only marks its calls (--world-key)."""
    parser.add_argument("--url", default=os.environ.get("PTAS_URL", DEFAULT_URL),
                        help=f"the sandbox's base URL (or PTAS_URL; default {DEFAULT_URL})")
    if partner:
        parser.add_argument("--token", default=os.environ.get("PTAS_TOKEN"),
                            help="a root partner token of the world (or PTAS_TOKEN); the world key does not open "
                                 "the partner API")
        parser.add_argument("--world-key", default=os.environ.get("PTAS_WORLD_KEY"),
                            help="the world key (or PTAS_WORLD_KEY): sent with this command's calls so the "
                                 "integration report does not judge them as the partner software's")
    elif token:
        parser.add_argument("--token", default=os.environ.get("PTAS_WORLD_KEY") or os.environ.get("PTAS_TOKEN"),
                            help="the world key (worldKey of POST /_sandbox/partners) or a root partner token of "
                                 "the world (or PTAS_WORLD_KEY, then PTAS_TOKEN)")


def run(name, function):
    """The command function behind argparse: errors become one line on stderr and an exit status."""
    def command(args):
        try:
            return function(SandboxClient(args, tool=f"ptas {name}"), args) or 0
        except Failed as failure:
            print(f"ptas {name}: {failure}", file=sys.stderr)
            return failure.status
        except KeyboardInterrupt:
            return 130
    return command


class SandboxClient:
    def __init__(self, args, tool="ptas"):
        # Late: `ptas serve` builds every subcommand's parser and never needs requests.
        import requests

        self.url = base_url(args.url)
        self.token = getattr(args, "token", None)
        self.world_key = getattr(args, "world_key", None)
        self.requests = requests
        self.session = requests.Session()
        self.session.headers[TOOL_HEADER] = tool

    def need_partner_token(self):
        """Stop (2) before a partner API call would answer 401: given no token, or the world key as --token."""
        if not self.token or token_kind(self.token) == "world":
            given = "the world key was given" if self.token else "no token was given"
            raise Failed(f"needs a root partner token of the world (--token or PTAS_TOKEN; {given}): test events "
                         "and webhooks are partner API operations, which the world key does not open", 2)

    def call(self, method, path, *, auth=True, expect=(200,), **kw):
        """JSON of a call; Failed with the problem's title, detail and errors when the status is not expected."""
        headers = dict(kw.pop("headers", {}))
        if auth:
            if not self.token:
                raise Failed("give the world key or a partner token of the world with --token, PTAS_WORLD_KEY or "
                             "PTAS_TOKEN", 2)
            headers["Authorization"] = f"Bearer {self.token}"
        sandbox_path = path.startswith("/_sandbox")
        if self.world_key and not sandbox_path:
            headers[HARNESS_HEADER] = self.world_key
        url = self.url + (path if sandbox_path else PREFIX + path)
        try:
            response = self.session.request(method, url, headers=headers, timeout=30, **kw)
        except self.requests.ConnectionError:
            raise Failed(f"cannot reach the sandbox at {self.url} (is it running? `make serve` starts one; "
                         "see --url)", 2) from None
        except self.requests.RequestException as error:
            raise Failed(f"{method} {url} failed: {error}", 2) from None
        if response.status_code not in expect:
            raise Failed(f"{method} {path} answered {response.status_code} {problem_text(response)}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise Failed(f"the server at {self.url} did not answer JSON; is it a ptas-sandbox? (see --url)", 2) \
                from None


def write_text(path, text):
    """Write a file the user named; a path that cannot be written is one line and exit 2, not a traceback."""
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as error:
        raise Failed(f"cannot write {path}: {error.strerror or error}", 2) from None


def problem_text(response):
    """A refusal in words: the problem's title and detail, then each of its `errors` (pointer: detail) on an
    indented line of its own, since a validation problem's title alone does not say which field was wrong."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if not isinstance(body, dict):
        return response.text[:200]
    reason = f"{body.get('title', '')}: {body.get('detail', '')}".strip(": ")
    for error in body.get("errors") or []:
        if isinstance(error, dict):
            where = error.get("pointer") or error.get("parameter") or ""
            reason += f"\n  {where}: {error.get('detail', '')}" if where else f"\n  {error.get('detail', '')}"
    return reason
