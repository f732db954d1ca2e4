"""`ptas inspect`: a short-lived, single-use link to the world's inspector (the token never goes in a URL)."""

from ._client import add_target, run


def inspect(sandbox, args):
    link = sandbox.call("POST", "/_sandbox/inspect/links", expect=(201,))
    print(link["url"])
    print(f"(works once, until {link['expiresAt']})")
    if args.open:
        import webbrowser  # late: its import (subprocess, shlex...) would slow every `ptas` command
        webbrowser.open(link["url"])


def add(commands):
    i = commands.add_parser("inspect", help="print a short-lived link to the world's inspector")
    i.add_argument("--open", action="store_true", help="open it in the browser too")
    add_target(i)
    i.set_defaults(func=run("inspect", inspect))
