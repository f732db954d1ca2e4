"""Steps of the limits features: the global rate limit of spec §8 (the answer when exceeded is the simulator's)."""

from pytest_bdd import then, when

from .. import checks
from ..client import retry_after
from ..scene import check
from . import acting, phrase


class Burst(list):
    """The replies of a burst, and when it began on the target's time (`Target.monotonic`)."""

    def __init__(self, replies, started):
        super().__init__(replies)
        self.started = started


def calls(scene, times, operation="GetOwnPartner", token=None):
    """Calls as fast as the target takes them: no client-side pacing, no waiting on 429 (the point is to see it)."""
    replies = [scene.client.call(operation, token=token or scene.token, paced=False, honour_429=False)
               for _ in range(times)]
    scene.replies.extend(replies)
    scene.reply = replies[-1]
    return replies


@when(phrase("I read my partner settings {times:d} times at once"), target_fixture="burst")
def read_many(scene, times):
    return calls(scene, times)


@when("I read my partner settings once more")
def read_once_more(scene):
    calls(scene, 1)


@then("every one of them succeeds")
def all_succeed(burst):
    failed = [r.status for r in burst if not r.ok]
    check(not failed, f"{len(failed)} of {len(burst)} calls failed: {sorted(set(failed))}")


@then("the request is refused as rate limited with a time to retry", target_fixture="wait_s")
def rate_limited(scene):
    checks.problem(scene.reply, 429)
    check("retry-after" in scene.reply.headers, "a 429 says when to retry with Retry-After")
    wait_s = retry_after(scene.reply.headers)
    check(wait_s is not None and 0 < wait_s <= 60, f"Retry-After is within the 60 s window, got {wait_s}")
    return wait_s


@when("the time to retry passes")
def retry_time_passes(scene, wait_s):
    scene.time_passes(wait_s)


@when(phrase("I read my partner settings {times:d} times within a minute"), target_fixture="burst")
def read_many_within_a_minute(scene, times):
    """Spec §8: 100 requests per 60 s. On a deployment the burst spends the run's window, so the pace waits a
    whole window afterwards (the harness's own requests must not be refused for it)."""
    quiet_window(scene)
    return spent(scene, calls(scene, times))


def quiet_window(scene):
    """Let a whole window pass without a request of the run, so the burst is judged from its first request: the
    spec's 100 are then the burst's first 100 (a second more than the window, for a target counting its edge)."""
    throttle = scene.client.throttle
    pause = 61.0 if scene.target.simulator or throttle is None else throttle.quiet_in() + 1.0
    scene.time_passes(pause, "a rate-limit window without the run's requests")


def spent(scene, replies):
    throttle = scene.client.throttle
    if throttle is not None and not scene.target.simulator:
        throttle.exhaust()
    return replies


@when(acting("{actor} lists the accounts {times:d} times within a minute"), target_fixture="burst")
def list_accounts_many(scene, actor, times):
    """Spec §8: the limit counts all requests from partners and users; here a user token's (GetAccounts)."""
    quiet_window(scene)
    return spent(scene, calls(scene, times, "GetAccounts", scene.bearer(actor)))


@when(phrase('I read my partner settings {mine:d} times and "{user}" lists the accounts {theirs:d} times within a '
             'minute'), target_fixture="burst")
def mixed_burst(scene, mine, user, theirs):
    """Spec §8: the limit counts all requests from partners and users: the partner's and a user's, in one window."""
    token = scene.bearer(f'"{user}"')
    for _ in range(2):
        quiet_window(scene)
        started = scene.target.monotonic()
        replies = spent(scene, Burst(calls(scene, mine) + calls(scene, theirs, "GetAccounts", token), started))
        if not all(r.ok for r in replies):
            break
        # Every one served: the burst may have crossed the edge of windows kept in whole minutes, which a faithful
        # limiter resets there. The same burst a quiet window later starts just past the next edge, so it crosses
        # none unless it lasts a minute: it is the one judged.
    return replies


@when(phrase("I read my partner settings until refused, {times:d} times {gap:d} seconds apart"),
      target_fixture="later")
def bursts_apart(scene, burst, times, gap):
    """Bursts after the first, each `gap` seconds after the one before it ended and each ending at its first
    refusal (or 101 calls); with the seconds since the first burst began (a simulator's clock moves instead)."""
    later = []
    for _ in range(times):
        scene.time_passes(gap, "the rate limit's window moving on")
        replies = []
        while len(replies) <= 100 and (not replies or replies[-1].ok):
            replies.extend(calls(scene, 1))
        later.append(replies)
    moved = gap * times if scene.target.simulator else 0
    spent(scene, [])
    return {"bursts": later, "span": scene.target.monotonic() - burst.started + moved}


@then("no more requests were served since the first burst than windows of a minute allow")
def windows_of_a_minute(burst, later):
    """Spec §8: 100 requests per 60 seconds. However the window is kept (sliding, fixed minutes, a bucket refilled
    over the minute), `span` seconds touch at most span // 60 + 2 windows of a minute, so no more than 100 for
    each are served. Bursts more than 30 s apart over under two minutes tell a shorter window (100 per 30 s serves
    100 at each of four bursts) from every such minute."""
    served = sum(r.ok for r in burst) + sum(r.ok for replies in later["bursts"] for r in replies)
    allowed = 100 * (int(later["span"] // 60) + 2)
    each = [sum(r.ok for r in burst)] + [sum(r.ok for r in replies) for replies in later["bursts"]]
    check(served <= allowed, f"{served} requests were served in {later['span']:.0f} s (bursts served {each}); "
                             f"windows of 60 s allow at most {allowed} (spec §8: 100 requests per 60 seconds)")


@then("not every one of them was served")
def not_all_served(burst):
    """What the spec states: no more than 100 succeed in a window. How a refusal looks is not shown (§7)."""
    served = sum(1 for r in burst if r.ok)
    check(served <= 100, f"{served} of {len(burst)} requests within one minute were served; spec §8 allows 100")


@then(phrase("the first {times:d} of them were served"))
def first_served(burst, times):
    """Spec §8 from below: 100 requests per 60 s are served. How a refusal looks is not shown (§7), so any answer
    that is not a success counts as not served."""
    refused = [(n, r.status) for n, r in enumerate(burst[:times], 1) if not r.ok]
    check(not refused, f"{len(refused)} of the first {times} requests of a quiet window were not served, the first "
                       f"being request {refused[0][0] if refused else 0} ({refused[0][1] if refused else ''}); "
                       "spec §8 allows 100 requests per 60 seconds")
