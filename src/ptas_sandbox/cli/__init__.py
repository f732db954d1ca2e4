"""The `ptas` command. Each subcommand is a module of this package with `add(commands)` declaring it.

Modules are imported when the parser is built and import their heavy dependencies (the simulator, pytest) only
inside the function that runs the command, so `ptas --help` and `ptas serve` stay quick and serving never needs
pytest.
"""

import argparse
import importlib
import os
import pkgutil
import sys

from ptas_sandbox import __version__


def commands():
    """The subcommand modules of this package, in name order."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ptas", description="Payment Transactions Aggregation Service sandbox")
    parser.add_argument("--version", action="version", version=f"ptas-sandbox {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True)
    for module in commands():
        module.add(subcommands)
    args, extra = parser.parse_known_args(argv)
    # A subcommand may take a value that looks like a flag (`ptas clock advance -1h`), to explain it.
    if extra and not getattr(args, "claim", lambda _args, _extra: False)(args, extra):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args) or 0
    except BrokenPipeError:
        # `ptas requests | head`: the reader has all it wanted; no traceback, and no second one at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
