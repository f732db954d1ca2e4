"""The package layout: the root folders of DESIGN.md install under one import root, `ptas_sandbox`.

`simulator` and `conformance` are taken on PyPI, so they never become top-level import names; everything else
(metadata, dependencies, entry points) is in setup.cfg.
"""
import os

from setuptools import setup

ROOTS = ["simulator", "conformance", "fixtures", "scenarios", "features"]


def packages_under(folder, name):
    for path, dirs, _ in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        yield name + path[len(folder):].replace(os.sep, ".")


setup(
    package_dir={"ptas_sandbox": "ptas_sandbox", **{f"ptas_sandbox.{r}": r for r in ROOTS}},
    packages=["ptas_sandbox", *(p for r in ROOTS for p in packages_under(r, f"ptas_sandbox.{r}"))],
    package_data={"": ["*.json", "*.feature", "*.html", "*.css", "*.js", "*.md"]},
)
