"""The webhook dispatcher: a background thread that fans outbox events out to subscriptions and sends due
attempts over HTTP from a small thread pool, so the API call that caused an event never waits and one slow or
dead receiver never holds up the others (at most WEBHOOK_PARALLEL_PER_WEBHOOK of its attempts, and at most
WEBHOOK_PARALLEL_PER_DESTINATION to its host, are on the wire; its backlog waits in the store, not in the pool's
queue). The HTTP of one attempt (deadline, address checks, what is kept of the answer) is `sender`'s.

Worlds share the senders fairly: the per-host cap counts per world and host (so one world's hanging receiver
cannot take the turns of a host other worlds send to), a world has at most WEBHOOK_PARALLEL_PER_WORLD
attempts on the wire, no more attempts are claimed than the pool has free threads (nothing waits in the pool's
queue behind another world's hanging receivers), a quarter of the senders is kept for worlds with nothing on
the wire (`_room`), and worlds with the fewest attempts out claim first. A flush waits only while fewer than
FLUSH_WAITERS flushes of any world wait, so flushes hold at most that many server threads however many worlds
flush.

The store is one connection behind a lock: claiming and recording are short transactions, and no transaction
is held while a request is on the wire. World clocks decide when an attempt is due; the thread wakes every
`WEBHOOK_POLL_SECONDS` of real time to look. `flush(world)` does the same work on demand and waits for it,
which is what tests and harnesses use instead of sleeping.

A waiting flush holds a server thread, so no caller may make many of them wait (a few flushes of one world with a slow
receiver would hold every thread, and other worlds and health would wait): a flush waits at most
`FLUSH_WAIT_SECONDS`, and at most `FLUSH_WAITERS_PER_WORLD` flushes of one world wait at a time; a flush
beyond them starts what is due and answers at once. Either way the answer says what is still in flight.
"""

import logging
import os
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from ..problems import Problem
from . import deliveries
from .sender import (
    BODY_KEPT,
    DEFAULT_PORTS,
    ECHO_PATH,
    OWN_HOSTS,
    Outcome,
    Sender,
    destination,
    private_callbacks_allowed,
)

log = logging.getLogger("ptas.webhooks")


class Dispatcher:
    def __init__(self, app, sandbox):
        config = app.config
        self.app = app
        self.sandbox = sandbox
        self.store = sandbox.store
        self.timeout = float(config.get("WEBHOOK_TIMEOUT_SECONDS", 10))
        self.poll = float(config.get("WEBHOOK_POLL_SECONDS", 0.1))
        self.per_webhook = int(config.get("WEBHOOK_PARALLEL_PER_WEBHOOK", 2))
        self.per_destination = int(config.get("WEBHOOK_PARALLEL_PER_DESTINATION", 4))
        self.allow_private = private_callbacks_allowed(config)
        self.sender = Sender(self.timeout, self.allow_private)
        self.flush_wait = float(config.get("FLUSH_WAIT_SECONDS") or 3 * self.timeout)
        self.flush_waiters = int(config.get("FLUSH_WAITERS_PER_WORLD", 2))
        self.settle_every = float(config.get("WEBHOOK_SETTLE_SECONDS", 1))
        self.in_process_base = config.get("IN_PROCESS_BASE_URL", "http://localhost")
        self.per_world = int(config.get("WEBHOOK_PARALLEL_PER_WORLD", 4))
        self.flush_waiters_total = int(config.get("FLUSH_WAITERS", 2))
        self.workers = int(config.get("WEBHOOK_WORKERS", 32))
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ptas-webhook")
        self.served = False          # set once a real server hands the app a request
        self.own_ports = set()       # the ports that server listens on (SERVER_PORT of its requests)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = None
        self._idle = threading.Condition()
        self._in_flight = {}         # world id -> attempts on the wire
        self._busy = {}              # webhook id -> attempts on the wire
        self._hosts = {}             # (world id, destination host) -> attempts on the wire
        self._waiting = {}           # world id -> flushes waiting for its attempts
        self._last_catch_up = 0.0
        # Attempts are leased to this process (`holder`) for longer than one can take; a process that stops
        # mid-flight leaves them to be claimed again by any process once the lease runs out.
        self.holder = f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        self.lease_us = int((self.timeout * 3 + 30) * 1_000_000)
        if config.get("REQUEUE_ON_START", True):     # a launch owning its state alone: at once
            with self.store.transaction():
                deliveries.requeue_interrupted(self.store)

    # --- lifecycle ------------------------------------------------------------------------------------------

    def start(self):
        self._thread = threading.Thread(target=self._run, name="ptas-webhook-dispatcher", daemon=True)
        self._thread.start()

    def stop(self):
        """Stop the loop, let attempts on the wire finish (each is bounded by the timeout), release threads."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 5)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def wake(self):
        self._wake.set()

    def _run(self):
        store_away = None       # why the store cannot be used, while it cannot: said once, not every round
        while not self._stopping.is_set():
            try:
                self._settle_worlds()
                self.dispatch()
                if store_away is not None:
                    log.warning("webhook delivery resumed: the store is back")
                    store_away = None
            except Exception as error:  # the loop must outlive any one bad round; the error is logged, not lost
                platform = self.store.platform_problem(error) or (error if isinstance(error, Problem) else None)
                if platform is None:
                    log.exception("webhook dispatcher round failed")
                elif store_away is None:
                    cause = getattr(platform, "cause", None)
                    log.warning("webhook delivery paused until the store is back: %s%s", platform.detail,
                                f" ({cause})" if cause else "")
                    store_away = platform.detail
            self._wake.wait(self.poll)
            self._wake.clear()

    def _settle_worlds(self):
        """Imports that complete because the clock ran (not advanced) fire their events without a request."""
        if time.monotonic() - self._last_catch_up < self.settle_every:
            return
        self._last_catch_up = time.monotonic()
        for row in self.store.all("SELECT DISTINCT world FROM webhooks WHERE is_active = 1"):
            world = self.sandbox.worlds.get(row["world"])
            if world is not None and not world.frozen:      # a frozen clock brings nothing new
                with self.app.app_context():
                    self.sandbox.catch_up(world)

    # --- work -----------------------------------------------------------------------------------------------

    def dispatch(self, world_ids=None):
        """Fan out new events and start every due attempt (of `world_ids`, or all worlds); returns futures."""
        jobs = []
        with self.store.transaction():
            deliveries.fan_out(self.store, self.sandbox.hooks)
            system_now = self.sandbox.system_time()
            worlds = world_ids if world_ids is not None else deliveries.pending_worlds(self.store, system_now)
            with self._idle:
                worlds = sorted(worlds, key=lambda world_id: self._in_flight.get(world_id, 0))
            for world_id in worlds:
                world = self.sandbox.worlds.get(world_id)
                if world is None:
                    continue
                with self._idle:
                    room = self._room(world_id)
                    if room <= 0:
                        continue            # due attempts wait in the store for a free turn
                    hosts = {host: n for (owner, host), n in self._hosts.items() if owner == world_id}
                    claimed = deliveries.claim(self.store, world_id, self.sandbox.worlds.now(world), self._busy,
                                               self.per_webhook, hosts, self.per_destination, self._host_of,
                                               hooks=self.sandbox.hooks, system_now=system_now,
                                               lease_us=self.lease_us, holder=self.holder, limit=room)
                    for job in claimed:
                        self._in_flight[world_id] = self._in_flight.get(world_id, 0) + 1
                        self._busy[job["webhook_id"]] = self._busy.get(job["webhook_id"], 0) + 1
                        key = (world_id, job["host"])
                        self._hosts[key] = self._hosts.get(key, 0) + 1
                jobs += claimed
        return [self.pool.submit(self._send, job) for job in jobs]

    def _room(self, world_id):
        """How many attempts `world_id` may claim now. A quarter of the senders is kept for worlds with nothing
        on the wire, one attempt each, so worlds whose receivers hang cannot take every sender from a world
        that has one notification to send."""
        total, mine = sum(self._in_flight.values()), self._in_flight.get(world_id, 0)
        general = self.workers - max(self.workers // 4, 1) - total
        if mine == 0:
            return min(self.per_world, max(general, 1 if total < self.workers else 0))
        return min(self.per_world - mine, general)

    def flush(self, world):
        """Deliver everything due in `world` now and return when every attempt on the wire has an outcome, or
        once `flush_wait` seconds have passed, or at once when `flush_waiters` flushes of the world are already
        waiting (this one then only starts what is due). Attempts started by the background thread are waited
        for too. Returns the number of attempts this flush started; what is still on the wire stays in the
        store as `sending` (the control call reports it as `inFlight`)."""
        self.sandbox.catch_up(world)
        with self._idle:
            waits = (self._waiting.get(world.id, 0) < self.flush_waiters
                     and sum(self._waiting.values()) < self.flush_waiters_total)
            if waits:
                self._waiting[world.id] = self._waiting.get(world.id, 0) + 1
        try:
            return self._flush(world, time.monotonic() + (self.flush_wait if waits else 0))
        finally:
            if waits:
                with self._idle:
                    self._waiting[world.id] -= 1
                    if not self._waiting[world.id]:
                        del self._waiting[world.id]

    def _flush(self, world, until):
        attempts = 0
        while True:
            with self._idle:
                before = self._in_flight.get(world.id, 0)
            started = len(self.dispatch([world.id]))
            attempts += started
            if time.monotonic() >= until:
                return attempts
            with self._idle:
                idle = not started and not before and not self._in_flight.get(world.id, 0)
            if idle:        # (the store is read outside `_idle`: dispatch takes the two the other way round)
                if self._elsewhere(world, until):
                    continue                 # another process's attempts: their outcomes may schedule more
                return attempts              # nothing was out, nothing was due
            with self._idle:
                # Wait for an attempt to end: it frees its webhook's slot for the next due one.
                self._idle.wait_for(lambda: self._in_flight.get(world.id, 0) < max(before + started, 1),
                                    timeout=max(until - time.monotonic(), 0))

    def _elsewhere(self, world, until):
        """Wait (until `until`) while other processes have attempts of `world` on the wire; True if there were
        any. Their progress is only visible in the store, so it is polled."""
        waited = False
        while deliveries.in_flight(self.store, world.id, self.sandbox.system_time()) or \
                deliveries.due_waiting(self.store, world.id, self.sandbox.worlds.now(world)):
            if time.monotonic() > until:
                return False
            waited = True
            self._stopping.wait(0.01)
        return waited

    def _send(self, job):
        started = time.perf_counter()
        try:
            outcome = self._post(job)
        except Exception as failure:  # an attempt must always end in the log, whatever went wrong
            outcome = Outcome(error=f"{type(failure).__name__}: {str(failure)[:300]}")
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        world = None
        try:
            world = self.sandbox.worlds.get(job["world"])
            if world is not None:
                with self.store.transaction():
                    deliveries.record_outcome(self.store, job, self.sandbox.worlds.now(world), outcome.status,
                                              outcome.body, outcome.error, duration_ms, outcome.headers)
        except Exception as failure:
            log.error("could not record webhook attempt %s: %s", job["id"], failure)
            self._give_up(job, world, failure)
        finally:
            with self._idle:
                self._in_flight[job["world"]] -= 1
                if not self._in_flight[job["world"]]:
                    del self._in_flight[job["world"]]
                self._busy[job["webhook_id"]] -= 1
                if not self._busy[job["webhook_id"]]:
                    del self._busy[job["webhook_id"]]
                key = (job["world"], job["host"])
                self._hosts[key] -= 1
                if not self._hosts[key]:
                    del self._hosts[key]
                self._idle.notify_all()

    def _give_up(self, job, world, failure):
        """An outcome that cannot be recorded ends the attempt as failed, without a retry: left `sending`, it
        would go out again each time its lease ran out, for ever. When the store itself is gone this fails too,
        and the lease sends it again once the store is back."""
        if world is None:
            return
        try:
            with self.store.transaction():
                deliveries.record_outcome(self.store, job, self.sandbox.worlds.now(world),
                                          error=f"the outcome could not be recorded: {type(failure).__name__}",
                                          retry=False)
        except Exception as again:
            log.error("could not end webhook attempt %s: %s", job["id"], again)

    def _post(self, job):
        url = job["url"]
        if self._in_process(url):
            parts = urlsplit(url)
            client = self.app.test_client()     # one per attempt: a test client is not safe to share across threads
            response = client.post(parts.path + (f"?{parts.query}" if parts.query else ""),
                                   base_url=f"{parts.scheme}://{parts.netloc}",     # the Host the URL names
                                   data=job["body"].encode(), headers=job["headers"])
            return Outcome(response.status_code, dict(list(response.headers.items())[:32]),
                           response.get_data()[:BODY_KEPT].decode("utf-8", "replace"))
        return self.sender.send(url, job["body"].encode(), job["headers"])

    def _host_of(self, url):
        """The host an attempt counts against for the per-destination cap; the app's own echo, called through
        WSGI, holds no connection and counts against none."""
        return None if self._in_process(url) else destination(url)

    def _in_process(self, url):
        """A callback at the app itself is called through WSGI: at the Flask test client's base URL while no
        server runs the app, and at a loopback address on the port it serves on once one does. Over the
        network such an attempt would need a free server thread, and flushes waiting for their attempts can
        hold every one: the attempts then timed out and were retried, reaching the receiver twice."""
        parts = urlsplit(url)
        if self.served:
            port = parts.port or DEFAULT_PORTS.get(parts.scheme)
            own = parts.hostname in OWN_HOSTS and str(port) in self.own_ports
        else:
            base = urlsplit(self.in_process_base)
            own = (parts.scheme, parts.hostname, parts.port) == (base.scheme, base.hostname, base.port)
        # Its own echo receiver is always allowed; its other paths only where private callbacks are.
        return own and (self.allow_private or parts.path.startswith(ECHO_PATH))
