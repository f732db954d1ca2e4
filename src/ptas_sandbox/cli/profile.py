"""`ptas profile`: read a deployment profile (`show`) or compare two (`diff`), in plain words."""

import sys


def add(commands):
    p = commands.add_parser("profile", help="show a deployment profile, or what differs between two")
    actions = p.add_subparsers(dest="action", required=True)
    show = actions.add_parser("show", help="the choices a profile holds, and what it does not know")
    show.add_argument("file", help="a profile written by `ptas conform --profile-out`")
    show.add_argument("--evidence", action="store_true", help="the requests each choice was seen in")
    show.set_defaults(func=run_show)
    diff = actions.add_parser("diff", help="what differs between two profiles (exit 1 when anything does)")
    diff.add_argument("a", help="a profile (e.g. staging)")
    diff.add_argument("b", help="another profile (e.g. production)")
    diff.set_defaults(func=run_diff)


def load(path):
    from ptas_sandbox.profile import ProfileError, load
    try:
        return load(path)
    except ProfileError as error:
        print(f"ptas profile: {error}", file=sys.stderr)
        sys.exit(2)


def run_show(args):
    from ptas_sandbox.profile import show
    print(show(load(args.file), evidence=args.evidence))
    return 0


def run_diff(args):
    from ptas_sandbox.profile import diff
    lines = diff(load(args.a), load(args.b), args.a, args.b)
    if not lines:
        print(f"{args.a} and {args.b} make the same choices")
        return 0
    print(f"{len(lines)} difference(s) between {args.a} and {args.b}:")
    for line in lines:
        print(f"  {line}")
    return 1
