"""A careful partner integration that works in threads: it onboards three merchants, then one thread per
merchant waits for its import and reads its transactions, while a fourth refreshes the merchant list a few times.
Besides what careful.py does, it keeps one gate per operation: a thread that gets a 429 or 503 holds the gate
of that operation while it waits out Retry-After, so no other thread sends that operation meanwhile; other
operations go on, and requests already in flight when the refusal came are not its mistake. That is right for
the refusals it meets here (injected faults; its calls never fill spec §8's global limit): after a 429 of the
global limit every request must wait, and the report would rightly say so of a gate per operation."""

import re
import threading

from .careful import CarefulClient, Transport

ID = re.compile(r"/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MERCHANTS = 3


class GatedTransport(Transport):
    """One gate per operation (method and path with ids taken out)."""

    def __init__(self, base, sleep):
        super().__init__(base, sleep)
        self.gates, self.lock = {}, threading.Lock()

    def gate(self, method, path):
        key = (method, ID.sub("/{id}", path))
        with self.lock:
            return self.gates.setdefault(key, threading.Lock())

    def read(self, method, path, token, **kw):
        with self.gate(method, path):
            return super().read(method, path, token, **kw)

    def create(self, path, token, body, find, forget=None):
        with self.gate("POST", path):
            return super().create(path, token, body, find, forget)


class ThreadedClient(CarefulClient):
    NAME = "ci-backend-threads"

    def __init__(self, run):
        super().__init__(run)
        self.http = GatedTransport(run.base, run.sleep)
        self.counts, self.errors = {}, []

    def merchant(self, account_id, user_token):
        try:
            assert self.imported(account_id), "no TransactionsImported notification arrived"
            self.counts[account_id] = len(self.transactions(account_id, user_token))
        except Exception as error:          # the test sees it, not a dead thread
            self.errors.append(error)

    def watch_users(self, done, rounds=5):
        """A few refreshes while the merchants work (bounded: the world clock must not outrun the user tokens)."""
        try:
            for _ in range(rounds):
                if done.is_set():
                    return
                self.http.read("GET", "/users", self.token)
                self.run.sleep(900)
        except Exception as error:
            self.errors.append(error)

    def main(self, initial):
        self.rotate(initial)
        self.subscribe()
        kind, work = None, []
        for n in range(MERCHANTS):
            _, user_token = self.onboard(f"Merchant {n}", f"owner{n}@shop.example")
            kind = kind or self.account_type(user_token)
            work.append((self.connect(user_token, kind)["id"], user_token))
        done = threading.Event()
        watcher = threading.Thread(target=self.watch_users, args=(done,))
        threads = [threading.Thread(target=self.merchant, args=job) for job in work]
        for thread in [watcher, *threads]:
            thread.start()
        for thread in threads:
            thread.join(120)
        done.set()
        watcher.join(120)
        if self.errors:
            raise self.errors[0]
        return sum(self.counts.values())
