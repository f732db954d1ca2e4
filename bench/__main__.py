"""Run every benchmark of bench/ in turn (`make bench`); each prints its own figures."""

import importlib
import pkgutil
import sys

import bench


def main():
    """`python -m bench [NAME...]`; `python -m bench NAME --option...` hands the options to that one benchmark."""
    args = sys.argv[1:]
    options = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    names = args[:options] or sorted(m.name for m in pkgutil.iter_modules(bench.__path__)
                                     if not m.name.startswith("_"))
    if args[options:]:
        if len(names) != 1:
            raise SystemExit("options go to one benchmark: python -m bench NAME --option ...")
        sys.argv = [f"bench.{names[0]}", *args[options:]]
    for name in names:
        print(f"\n=== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
