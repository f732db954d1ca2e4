"""Durations as people type them (`90`, `90s`, `15m`, `1h`, `2d`, `1w`, `1h30m`): one reading and one wording for
`ptas clock advance` and the inspector's clock form, so both explain a value they cannot use alike."""

import re

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
PART = re.compile(r"(\d{1,9}(?:\.\d{1,6})?)([smhdw]?)")
EXAMPLES = "90, 90s, 15m, 1h, 2d, 1w or 1h30m"


def seconds(text):
    """The seconds `text` names; ValueError in words a person can act on otherwise."""
    typed = (text or "").strip().lower()
    if typed.startswith("-"):
        raise ValueError(f"the world clock never runs backwards: give a positive duration such as 1h, not {typed!r}")
    parts = PART.findall(typed)
    if not parts or "".join(n + u for n, u in parts) != typed:
        raise ValueError(f"{typed!r} is not a duration: write {EXAMPLES}")
    return sum(float(n) * UNITS[u or "s"] for n, u in parts)
