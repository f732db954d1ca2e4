"""Reading the spec's date-times (YYYY-MM-DDThh:mm:ss.fffffffZ) into integer microseconds, for comparisons."""

import re
from datetime import datetime, timezone

_SHAPE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")


def parse(text):
    match = _SHAPE.match(text or "")
    if not match:
        raise ValueError(f"not a date-time: {text!r}")
    whole, fraction, zone = match.groups()
    moment = datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone)).astimezone(timezone.utc)
    seconds = int(moment.timestamp())
    return seconds * 1_000_000 + int((fraction or "0").ljust(7, "0")[:7]) // 10
