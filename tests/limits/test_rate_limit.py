"""The global rate limit (spec §8: 100 requests per 60 s), per world, on the world clock."""

import pytest

from ptas_sandbox.simulator import create_app
from tests.support.client import Api
from tests.support.problems import assert_problem
from tests.support.worlds import new_world


def spend(api, n):
    return [api.get("/partners/self").status_code for _ in range(n)]


def test_the_101st_request_in_a_minute_is_429_with_retry_after(world):
    assert set(spend(world.api, 100)) == {200}
    body = assert_problem(world.api.get("/partners/self"), 429, "rate-limited")
    assert body["limit"] == 100
    assert world.api.get("/partners/self").headers["Retry-After"] == "60"


def test_a_429_on_a_frozen_world_says_the_window_waits_for_the_clock(world):
    running = spend(world.api, 100) and assert_problem(world.api.get("/partners/self"), 429)
    assert "frozen" not in running["detail"] and "worldClockFrozen" not in running
    world.api.post("/_sandbox/clock", json={"freeze": True})
    frozen = assert_problem(world.api.get("/partners/self"), 429, "rate-limited")
    assert frozen["worldClockFrozen"] is True
    assert "The world clock is frozen" in frozen["detail"] and "ptas clock thaw" in frozen["detail"]
    wait = int(world.api.get("/partners/self").headers["Retry-After"])
    assert f'{{"advance": {wait}}}' in frozen["detail"]
    world.api.advance(wait)                     # what the 429 says to do is enough
    assert world.api.get("/partners/self").status_code == 200


def test_the_window_slides_with_the_world_clock(world):
    spend(world.api, 50)
    world.api.advance(30)
    spend(world.api, 50)
    assert world.api.get("/partners/self").status_code == 429
    world.api.advance(29)
    response = world.api.get("/partners/self")
    assert response.status_code == 429 and response.headers["Retry-After"] == "1"
    world.api.advance(1)
    assert set(spend(world.api, 50)) == {200}
    assert world.api.get("/partners/self").status_code == 429


def test_every_kind_of_caller_counts_and_refusals_do_not(world):
    _, as_user = world.user()
    spend(world.api, 97)                                     # and creating the user: 98
    assert as_user.get("/accounts").status_code == 200      # a user's request counts: the 99th
    assert_problem(as_user.get("/users"), 403)               # a refusal (wrong kind or scope) does not
    assert world.api.get("/partners/self").status_code == 200   # the 100th
    assert world.api.get("/partners/self").status_code == 429
    assert as_user.get("/accounts").status_code == 429
    world.api.advance(60)
    assert world.api.get("/partners/self").status_code == 200


def test_worlds_do_not_share_a_window(world, other_world):
    spend(world.api, 100)
    assert world.api.get("/partners/self").status_code == 429
    assert other_world.api.get("/partners/self").status_code == 200


def test_the_control_api_is_not_limited(world):
    spend(world.api, 100)
    assert world.api.get("/_sandbox/clock").status_code == 200


@pytest.fixture
def strict_app(config):
    app = create_app({**config, "RATE_LIMIT": 5, "RATE_WINDOW_SECONDS": 10,
                      "OPERATION_LIMITS": {"CreateUser": (2, 60)}})
    yield app
    app.extensions["ptas"].close()


def test_limits_are_configurable_with_extra_per_operation_limits(strict_app):
    world = new_world(Api(strict_app.test_client()))
    assert [world.api.post("/users", json={}).status_code for _ in range(3)] == [201, 201, 429]
    assert [world.api.get("/partners/self").status_code for _ in range(4)] == [200, 200, 200, 429]
    world.api.advance(10)
    assert world.api.get("/partners/self").status_code == 200
    body = assert_problem(world.api.post("/users", json={}), 429)
    assert "CreateUser" in body["detail"]


def test_requests_counted_out_of_clock_order_leave_the_window_in_clock_order(store_location):
    """Concurrent requests read the world clock before they reach the limiter, so they may arrive out of order."""
    from ptas_sandbox.simulator import ratelimit
    from ptas_sandbox.simulator.problems import TooManyRequests
    from ptas_sandbox.simulator.ratelimit import RateLimiter
    from ptas_sandbox.simulator.requeststate import StoreState
    from ptas_sandbox.simulator.store import open_store
    second = 1_000_000
    store = open_store(store_location, [ratelimit.SCHEMA])
    limiter = RateLimiter(store, limit=2, window_seconds=60, windows=StoreState(store).rate_windows())
    limiter.hit("w", 30 * second, "Op")
    limiter.hit("w", 10 * second, "Op")       # read the clock earlier, arrived later
    with pytest.raises(TooManyRequests):
        limiter.hit("w", 69 * second, "Op")   # both still in the window
    limiter.hit("w", 70 * second, "Op")       # the one of t=10 s has left it: room for one


def test_refused_requests_leave_every_window_as_it_was(strict_app):
    """A refusal is counted with the request and then rolled back: neither the refused operation's window nor the
    global one keeps it (5 global, 2 CreateUser per the fixture)."""
    world = new_world(Api(strict_app.test_client()))             # creating the world is a control call: free
    assert [world.api.post("/users", json={}).status_code for _ in range(5)] == [201, 201, 429, 429, 429]
    assert [world.api.get("/partners/self").status_code for _ in range(4)] == [200, 200, 200, 429]
    world.api.advance(10)                                          # the global window empties, CreateUser's not
    assert world.api.post("/users", json={}).status_code == 429
    assert [world.api.get("/partners/self").status_code for _ in range(6)] == [200] * 5 + [429]


def test_a_window_kept_without_its_count_counts_its_log(store_location):
    """A log written by an older version (or restored without its count row) still limits exactly."""
    from ptas_sandbox.simulator import ratelimit
    from ptas_sandbox.simulator.problems import TooManyRequests
    from ptas_sandbox.simulator.ratelimit import RateLimiter
    from ptas_sandbox.simulator.requeststate import StoreState
    from ptas_sandbox.simulator.store import open_store
    second = 1_000_000
    store = open_store(store_location, [ratelimit.SCHEMA])
    limiter = RateLimiter(store, limit=3, window_seconds=60, windows=StoreState(store).rate_windows())
    with store.transaction():
        store.executemany("INSERT INTO rate_hits (world, rule, at) VALUES (?, ?, ?)",
                          [("w", ratelimit.GLOBAL, t * second) for t in (1, 2)])
    limiter.hit("w", 10 * second, "Op")
    with pytest.raises(TooManyRequests) as refused:
        limiter.hit("w", 20 * second, "Op")
    assert refused.value.headers["Retry-After"] == "41"             # the hit of t=1 s leaves at 61 s
    limiter.hit("w", 61 * second, "Op")
    with pytest.raises(TooManyRequests):
        limiter.hit("w", 61 * second, "Op")
    assert store.one("SELECT hits FROM rate_windows WHERE world = 'w'")["hits"] == 3


def test_a_reset_forgetting_a_window_waits_for_no_count_that_waits_for_the_store():
    """In memory (requeststate) a reset forgets its world's windows inside its transaction, which holds the store;
    a count reading a window from the store meanwhile must not hold the windows' lock while it waits (they
    deadlocked under concurrent load)."""
    import threading

    from ptas_sandbox.simulator import ratelimit
    from ptas_sandbox.simulator.ratelimit import RateLimiter
    from ptas_sandbox.simulator.requeststate import MemoryState
    from ptas_sandbox.simulator.store import open_store
    store = open_store(":memory:", [ratelimit.SCHEMA])
    limiter = RateLimiter(store, limit=5, window_seconds=60,
                          windows=MemoryState(store, background=False).rate_windows())
    loading, load = threading.Event(), limiter.windows.load

    def signalling(*key):
        loading.set()
        return load(*key)
    limiter.windows.load = signalling
    with store.transaction():       # `:memory:` has one connection: this holds it, as a reset's transaction does
        counting = threading.Thread(target=limiter.hit, args=("w", 1_000_000, "Op"))
        counting.start()
        assert loading.wait(30)
        forgetting = threading.Thread(target=limiter.forget, args=("w",))
        forgetting.start()
        forgetting.join(10)
        assert not forgetting.is_alive(), "the reset waited for a count that waits for the reset's store"
    counting.join(30)
    assert not counting.is_alive() and [len(log) for log in limiter.windows.logs.values()] == [1]
