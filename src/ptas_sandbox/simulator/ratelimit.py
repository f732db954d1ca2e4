"""The global rate limit of spec §8 (100 requests per 60 s), per world, on the world clock.

A sliding log per window: a request is refused when the window already holds `limit` requests, and
`Retry-After` says when the oldest of them leaves it. Advancing the world clock empties windows, as time would.
"""

import bisect
import math
import threading
from collections import defaultdict

from .problems import TooManyRequests
from .timestamps import SECOND_US


class RateLimiter:
    def __init__(self, limit=100, window_seconds=60, per_operation=None):
        self.global_rule = (limit, window_seconds)
        self.per_operation = dict(per_operation or {})   # operationId -> (limit, window seconds)
        self._logs = defaultdict(list)
        self._lock = threading.Lock()

    def hit(self, world_id, now, operation_id):
        """Count one request, or raise 429 with Retry-After when a window is full; a refused request is not counted."""
        rules = [((world_id,), self.global_rule)]
        if operation_id in self.per_operation:
            rules.append(((world_id, operation_id), self.per_operation[operation_id]))
        with self._lock:
            for key, (limit, window) in rules:
                log = self._logs[key]
                del log[:bisect.bisect_right(log, now - window * SECOND_US)]
                if len(log) >= limit:
                    wait = max(1, math.ceil((log[0] + window * SECOND_US - now) / SECOND_US))
                    scope = "the global rate limit" if len(key) == 1 else f"the rate limit of {operation_id}"
                    raise TooManyRequests(f"{limit} requests per {window} s exceeded ({scope}); retry in {wait} s.",
                                          headers={"Retry-After": str(wait)}, limit=limit, windowSeconds=window)
            for key, _ in rules:
                # Kept sorted: concurrent requests read the clock before they get here, not always in order.
                bisect.insort(self._logs[key], now)

    def forget(self, world_id=None):
        with self._lock:
            for key in [k for k in self._logs if world_id is None or k[0] == world_id]:
                del self._logs[key]
