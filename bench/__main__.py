"""Run every benchmark of bench/ in turn (`make bench`); each prints its own figures."""

import importlib
import pkgutil
import sys

import bench


def main():
    names = sys.argv[1:] or sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))
    for name in names:
        print(f"\n=== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
