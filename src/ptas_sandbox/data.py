"""The package's data files (account types, scenarios, features, page assets), found one way: as resources."""

from importlib.resources import files
from importlib.resources.abc import Traversable


def data(*parts: str) -> Traversable:
    """A file or folder shipped inside `ptas_sandbox`, e.g. `data("catalogue", "scenarios", "default.json")`."""
    return files("ptas_sandbox").joinpath(*parts)
