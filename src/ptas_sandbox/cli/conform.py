"""`ptas conform`: the conformance suites against a target."""

import argparse
import os
import sys

# What the harness needs beyond serving: the `conform` extra of pyproject.toml (`make serve` leaves it out).
EXTRA = ("pytest", "pytest_bdd", "freezegun")


def add(commands):
    c = commands.add_parser("conform", help="run the conformance suites against a target")
    c.add_argument("--target", default="sim", help="`sim` (in-process simulator) or a base URL")
    c.add_argument("--token", default=os.environ.get("PTAS_TOKEN"), help="a partner token (or PTAS_TOKEN)")
    c.add_argument("--openapi", help="the target's OpenAPI document, where it does not serve one")
    c.add_argument("--tags", help="a tag expression, e.g. 'contract and not slow'")
    c.add_argument("--report-dir", help="where JUnit XML, Cucumber JSON and the summary go")
    c.add_argument("--quick", action="store_true",
                   help="on a deployment, leave out the scenarios that wait for time or data (@slow); the end of "
                        "the output lists them as not checked")
    c.add_argument("--slow", action="store_true", help=argparse.SUPPRESS)   # the default now; kept for old CI jobs
    c.add_argument("--pace", metavar="REQUESTS/SECONDS", default=os.environ.get("PTAS_CONFORM_PACE"),
                   help="client-side pace on a deployment (default 90/60, under spec §8's 100/60)")
    c.add_argument("--as-deployment", action="store_true",
                   help="treat a simulator URL as a deployment: only @contract scenarios, with --token")
    c.add_argument("--receiver-listen", metavar="HOST:PORT",
                   help="run a webhook receiver here for the delivery scenarios (e.g. 0.0.0.0:8099)")
    c.add_argument("--receiver-url", metavar="URL",
                   help="the receiver's URL as the deployment reaches it (default: http://HOST:PORT/)")
    c.add_argument("--max-wait", type=float, metavar="SECONDS",
                   help="seconds a deployment run may spend in all waiting for time to pass or data to arrive "
                        "(default 600); accounts that already hold transactions or reports are reused, and "
                        "what the budget cannot cover is listed as not checked")
    c.add_argument("--operation", action="append", default=[], metavar="NAME=METHOD PATH",
                   help="where an operation the spec names without a path lives, when the target's document "
                        "names it otherwise (e.g. 'GetAccounts=GET /v2/accounts'); repeatable")
    c.add_argument("--operations", metavar="FILE",
                   help="--operation lines in a file, one NAME=METHOD PATH a line (the lines a run prints for the "
                        "operations it could not find can be pasted as they are)")
    c.add_argument("--oauth-consent", metavar="COMMAND",
                   help="how the OAuth2 provider's page is answered on a deployment whose page the harness does not "
                        "recognise: a command (it gets PTAS_OAUTH_URL, PTAS_OAUTH_DECISION, PTAS_OAUTH_RETURN_URL and "
                        "prints the return step's status line and headers), or 'interactive' (a person)")
    c.add_argument("--profile-out", metavar="FILE",
                   help="also learn the target's choices where the spec is silent into a profile for "
                        "`ptas serve --profile FILE` (docs/profiles.md)")
    c.set_defaults(func=conform)


def how_to_add_it(python):
    """The install line that works where this package came from: its clone (editable), else the wheel of a
    clone's `make dist` (the package is not on PyPI)."""
    from pathlib import Path

    from ptas_sandbox import __version__
    clone = Path(__file__).resolve().parents[3]
    if (clone / "pyproject.toml").is_file():
        here = os.path.relpath(clone) if not os.path.relpath(clone).startswith("..") else str(clone)
        return f"`{python} -m pip install -e '{here}[conform]'`"
    return (f"`{python} -m pip install 'ptas_sandbox-{__version__}-py3-none-any.whl[conform]'` (the wheel `make dist` "
            f"builds in the clone's dist/), or `pip install -e '/path/to/clone[conform]'`")


def conform(args):
    try:
        from ptas_sandbox.conformance.runner import main as run
    except ModuleNotFoundError as error:
        if error.name not in EXTRA:
            raise
        python = os.path.relpath(sys.executable)
        python = python if not python.startswith("..") else sys.executable
        print(f"ptas conform: needs the conformance extra ({error.name} is missing): {how_to_add_it(python)}",
              file=sys.stderr)
        return 2
    return run(args)
