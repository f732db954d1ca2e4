"""Time values of the simulator: integer microseconds since the epoch, rendered as spec §2 demands.

Everything time-dependent holds microseconds in the store and renders them here, so every date-time of every
response has exactly seven fractional digits and a trailing Z (spec §2, §9.3), zero fractions included.
"""

import functools
import re
from datetime import datetime, timedelta, timezone

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# Every instant and duration in the store is in microseconds (`_us`); durations from the spec are seconds (`_s`).
SECOND_US = 1_000_000
DAY_US = 86_400 * SECOND_US
# The largest instant a timestamp can render: anything later (a huge expiresIn) is refused, not overflowed.
LATEST = (datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc) - EPOCH) // timedelta(microseconds=1)

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?$", re.ASCII      # ASCII digits only: `\d` alone would take ２０２６
)


@functools.lru_cache(maxsize=4096)
def render(us):
    """`YYYY-MM-DDThh:mm:ss.fffffffZ` for an instant in microseconds; None stays None. Kept for the instants
    rendered lately: a record's timestamps are rendered on every read of it, and strftime is a GET's costliest
    step after the store."""
    if us is None:
        return None
    moment = EPOCH + timedelta(microseconds=us)
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}0Z"


def parse(text):
    """Microseconds for an ISO 8601 date or date-time (UTC when no offset is given); ValueError otherwise."""
    match = _ISO.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"not an ISO 8601 date-time: {text!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
                      int((fraction or "0").ljust(6, "0")[:6]), tzinfo=timezone.utc)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        if int(digits[:2]) > 23 or int(digits[2:]) > 59:
            raise ValueError(f"not a UTC offset: {zone!r}")
        try:
            moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        except OverflowError:    # 9999-12-31T23:59:59-01:00 is past the last instant a date-time can hold
            raise ValueError(f"{text!r} is outside the range of date-times (0001-01-01 to 9999-12-31 UTC)") from None
    return (moment - EPOCH) // timedelta(microseconds=1)
