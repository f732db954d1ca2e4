"""Waiting on a deployment: one budget for the whole run (`--max-wait`), data the run may reuse, and what it gave
up on.

A deployment's clock cannot be moved, so scenarios that need time to pass or data to arrive really wait. A CI job
affords minutes, not days: the run shares one budget among all its waits, reuses an account that already holds
transactions or reports (the partner's world, or one an earlier scenario waited for), and stops waiting for data
that did not come once, so later scenarios of the same kind are said "not checked" at once instead of each
spending the budget again.
"""

import math
from collections import Counter

# Seconds of waiting a default deployment run affords in all: what a CI job can give beside the paced requests.
DEFAULT_MAX_WAIT = 600.0


class Budget:
    def __init__(self, seconds=DEFAULT_MAX_WAIT):
        self.total = float(seconds)
        self.spent = 0.0
        self.given_up = {}          # kind of data -> why it is not awaited again in this run

    @property
    def left(self):
        return max(0.0, self.total - self.spent)

    def refusal(self, seconds, what=None):
        """Why `seconds` more of waiting (for `what`) cannot be afforded, or None when they can."""
        if seconds <= self.left:
            return None
        needed = math.ceil(self.spent + seconds)
        return (f"needs {seconds:g} s of waiting{f' for {what}' if what else ''}; {self.left:g} s of the run's "
                f"{self.total:g} s were left (check with: --max-wait {needed})")

    def wait(self, target, seconds):
        """Really wait (on the target's clock), charged to the run."""
        seconds = max(0.0, min(seconds, self.left))
        target.sleep(seconds)
        self.spent += seconds
        return seconds


class Held:
    """Accounts the run reuses, by account type: one with transactions, one with reports; and what the run must
    delete at its end (the account an earlier scenario waited for outlives that scenario)."""

    def __init__(self):
        self.accounts = {}          # (account type, "transactions" | "reports") -> account record
        self.leftovers = []         # clean-up actions run once, after the last scenario
        self.left = Counter()       # what the run made and leaves on the target, said in the summary
        self.abandoned = False      # a second Ctrl-C: no more clean-up
        self.contradicted = {}      # (account type, kind of data) -> how the target's signals of it disagree
        self.pool = {}              # what scenarios that do not change it share (Scene.pooled): made once a run
        self.settings = None        # the partner's settings as the run found them: put back once, at its end

    def clean_up(self):
        self.undo(list(reversed(self.leftovers)))
        self.leftovers.clear()

    def undo(self, actions):
        """Run clean-up `actions` in order, best effort; a Ctrl-C during them leaves the rest (counted) and goes
        on stopping the run: swallowed here, it let the run go on and end as if nobody had pressed it."""
        for done, action in enumerate(actions):
            if self.abandoned:
                self.left["clean-up steps left undone after a second Ctrl-C"] += len(actions) - done
                return
            try:
                action()
            except KeyboardInterrupt:
                self.abandoned = True
                self.left["clean-up steps left undone after a second Ctrl-C"] += len(actions) - done
                raise
            except Exception:       # noqa: BLE001 - clean-up is best effort on a shared target
                self.left["clean-up steps the target refused or did not answer"] += 1
